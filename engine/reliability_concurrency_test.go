package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

const concurrencySpec = `models:
  - {name: raw.fast, chunking: {interval: 15m, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: raw.flex, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex}, run: {command: ["true"]}}
`

// TestReliabilityFourWorkersTenThousandUnits is issue 9 item 4's load, on
// PostgreSQL: 4 worker processes of 4 slots each drain 10,000 pending
// units of a fast model and 200 units of a flexible model whose windows
// overlap their neighbours ([h, h+2) for every hour h). Each execution
// appends a line to its worker's file, outside the store, so a unit run
// twice — by two workers, or again after a lost claim — shows up even when
// the store's state looks right. Every unit is applied, each exactly once
// by exactly one worker, every worker took part, and no two overlapping
// windows of the flexible model ever ran at the same time.
func TestReliabilityFourWorkersTenThousandUnits(t *testing.T) {
	fast := 10_000
	if testing.Short() {
		fast = 1_000 // CI (.ci/run) runs the full 10,000
	}
	const flex = 200
	rs := openRelStore(t, "postgres", relName("bollhav_reliability_load_"))
	s := rs.Store
	dir := t.TempDir()
	specPath := writeSpec(t, dir, map[string]string{"bollhav.yaml": concurrencySpec})
	sp, err := spec.Load(specPath)
	must(t, err)
	e := New(s, sp, Options{SpecDir: dir, Actor: "test"})
	_, err = e.Apply(t.Context())
	must(t, err)
	g, err := state.NewGrid(t0, state.MustInterval("15m"), time.UTC)
	must(t, err)
	fastWindows := g.Windows(state.MustWindow(t0, t0.Add(time.Duration(fast)*15*time.Minute)))
	eq(t, "fast windows", len(fastWindows), fast)
	var flexWindows []state.Window
	for h := range flex {
		flexWindows = append(flexWindows, hours(h, h+2))
	}
	for model, ws := range map[string][]state.Window{"raw.fast": fastWindows, "raw.flex": flexWindows} {
		n, err := s.Prefill(t.Context(), state.PrefillRequest{Model: model, Windows: ws, Now: time.Now()})
		must(t, err)
		eq(t, model+" prefilled", n, len(ws))
	}

	started := time.Now()
	var logs []string
	var workers []*relWorker
	for i := range 4 {
		name := fmt.Sprintf("w%d", i)
		logs = append(logs, filepath.Join(dir, name+".log"))
		workers = append(workers, startRelWorker(t, name, append(rs.workerEnv(rs.app+"_"+name),
			relEnvSpec+"="+specPath, relEnvLease+"=30s", relEnvWorkers+"=4",
			relEnvExec+"=log", relEnvLog+"="+logs[i], relEnvDelay+"=raw.flex=5ms")...))
	}
	total := fast + flex
	eventually(t, 5*time.Minute, "every unit applied", func() bool {
		return statuses(t, s, "raw.fast")[state.Applied]+statuses(t, s, "raw.flex")[state.Applied] == total
	})
	t.Logf("%d units applied by 4 worker processes in %s", total, time.Since(started).Round(time.Millisecond))
	for _, w := range workers {
		w.stop(t, 30*time.Second)
	}
	for model, want := range map[string]int{"raw.fast": fast, "raw.flex": flex} {
		if c := statuses(t, s, model); c[state.Applied] != want || c[state.Running]+c[state.Pending]+c[state.Failed]+c[state.Blocked] != 0 {
			t.Errorf("%s units %v, want %d applied", model, c, want)
		}
	}

	lines := readExecLines(t, logs...)
	runs := map[string][]relExecLine{}
	perWorker := map[string]int{}
	for _, l := range lines {
		k := l.model + " " + l.window.String()
		runs[k] = append(runs[k], l)
		perWorker[l.who]++
	}
	t.Logf("executions per worker: %v", perWorker)
	eq(t, "executions", len(lines), total)
	eq(t, "distinct units executed", len(runs), total)
	for k, rs := range runs {
		if len(rs) != 1 {
			t.Errorf("%s ran %d times (by %v)", k, len(rs), rs)
		}
	}
	for i := range 4 {
		if perWorker[fmt.Sprintf("w%d", i)] == 0 {
			t.Errorf("worker w%d ran nothing: %v", i, perWorker)
		}
	}
	// The flexible model: overlapping windows never ran at the same time.
	var flexRuns []relExecLine
	for _, l := range lines {
		if l.model == "raw.flex" {
			flexRuns = append(flexRuns, l)
		}
	}
	sort.Slice(flexRuns, func(i, j int) bool { return flexRuns[i].window.Since.Before(flexRuns[j].window.Since) })
	concurrent := 0
	for i := range flexRuns {
		for j := i + 1; j < len(flexRuns) && flexRuns[j].window.Since.Before(flexRuns[i].window.Until); j++ {
			a, b := flexRuns[i], flexRuns[j]
			if a.start < b.end && b.start < a.end {
				t.Errorf("overlapping flexible windows ran at once: %s by %s and %s by %s", a.window, a.who, b.window, b.who)
			}
		}
		// Not overlapping windows may run at once, and should: else the
		// check above proves nothing.
		for j := i + 2; j < len(flexRuns); j++ {
			if a, b := flexRuns[i], flexRuns[j]; a.start < b.end && b.start < a.end {
				concurrent++
				break
			}
		}
	}
	t.Logf("flexible units that ran alongside a disjoint one: %d of %d", concurrent, flex)
	if concurrent == 0 {
		t.Error("no two flexible units ever ran at once: the overlap check is vacuous")
	}
}

// concurrentApplySpec is one version of a spec: five models, the same
// names and grain in both versions, but other commands and other edges;
// version 2 adds a sixth model.
func concurrentApplySpec(version int) string {
	var b strings.Builder
	b.WriteString("models:\n")
	n := 5
	if version == 2 {
		n = 6
	}
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - name: app.m%d\n    chunking: {interval: 1h, start: \"2026-01-01T00:00:00Z\"}\n    run: {command: [\"echo\", \"v%d\"]}\n", i, version)
		up := i - version // v1: m(i) reads m(i-1); v2: m(i) reads m(i-2)
		if up >= 1 {
			fmt.Fprintf(&b, "    upstream: [{name: app.m%d, contract: encapsulate}]\n", up)
		}
	}
	return b.String()
}

// TestReliabilityConcurrentApply: two applies of different versions of a
// spec, by two processes' worth of connections, at the same moment and
// twenty times over, leave one consistent registry each time — every model
// both versions define registered from one version, with that version's
// edges; task ids unique and never changing once given.
func TestReliabilityConcurrentApply(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			rs := openRelStore(t, backend, relName("bollhav_reliability_apply_"))
			specs := map[int]*spec.Spec{1: mustParse(t, concurrentApplySpec(1)), 2: mustParse(t, concurrentApplySpec(2))}
			engines := map[int]*Engine{}
			for v, sp := range specs {
				engines[v] = New(rs.open(t, fmt.Sprintf("%s_v%d", rs.app, v)), sp, Options{Actor: fmt.Sprintf("v%d", v)})
			}
			// What each version registers.
			hashes := map[int]map[string]string{}
			edges := map[int]map[string]string{}
			for v, sp := range specs {
				hashes[v], edges[v] = map[string]string{}, map[string]string{}
				for _, m := range sp.Models {
					hashes[v][m.Name] = spec.ModelRecord("", m, state.Interval{}).ContentHash
					edges[v][m.Name] = edgeString(spec.EdgeRecords("", sp, m))
				}
			}
			ids := map[string]int{}
			for round := range 20 {
				var wg sync.WaitGroup
				start := make(chan struct{})
				errs := map[int]error{}
				var mu sync.Mutex
				for v, e := range engines {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						_, err := e.Apply(context.Background())
						mu.Lock()
						errs[v] = err
						mu.Unlock()
					}()
				}
				close(start)
				wg.Wait()
				for v, err := range errs {
					if err != nil {
						t.Fatalf("round %d: apply of version %d: %v", round, v, err)
					}
				}
				recs, err := rs.Models(t.Context(), "")
				must(t, err)
				es, err := rs.Edges(t.Context(), "")
				must(t, err)
				regEdges := map[string][]state.EdgeRecord{}
				for _, e := range es {
					regEdges[e.Task] = append(regEdges[e.Task], e)
				}
				from := map[int][]string{}
				seen := map[int]string{}
				for _, r := range recs {
					v := 0
					for _, cand := range []int{1, 2} {
						if hashes[cand][r.Name] == r.ContentHash {
							v = cand
						}
					}
					if v == 0 {
						t.Fatalf("round %d: %s registered with a definition of neither version", round, r.Name)
					}
					if got := edgeString(regEdges[r.Name]); got != edges[v][r.Name] {
						t.Errorf("round %d: %s is version %d but has edges %s, want %s", round, r.Name, v, got, edges[v][r.Name])
					}
					if r.Name != "app.m6" { // only version 2 defines it
						from[v] = append(from[v], r.Name)
					}
					if other, dup := seen[r.TaskID]; dup {
						t.Errorf("round %d: task id %d given to %s and %s", round, r.TaskID, other, r.Name)
					}
					seen[r.TaskID] = r.Name
					if id, ok := ids[r.Name]; ok && id != r.TaskID {
						t.Errorf("round %d: %s changed task id from %d to %d", round, r.Name, id, r.TaskID)
					}
					ids[r.Name] = r.TaskID
				}
				if len(recs) != 6 || len(from) != 1 {
					t.Fatalf("round %d: a mixed registry: %d models, the shared ones from versions %v", round, len(recs), from)
				}
			}
		})
	}
}

func edgeString(es []state.EdgeRecord) string {
	var out []string
	for _, e := range es {
		out = append(out, fmt.Sprintf("%s<-%s:%s", e.Task, e.DependsOn, e.Type))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// torchedSpec is the hourly model the torch tests delete units of.
const torchedSpec = `models:
  - {name: raw.torched, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
`

// TestReliabilityTorchRefusedDuringRun: a torch of a model while a run of
// it holds running units is refused, naming them, and changes nothing —
// the run goes on and applies every unit; once the run is over the same
// torch goes through.
func TestReliabilityTorchRefusedDuringRun(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			rs := openRelStore(t, backend, relName("bollhav_reliability_torch_"))
			s := rs.Store
			e := runEngine(t, s, torchedSpec)
			// The operator's torch comes from another engine (the UI, a CLI).
			op := runEngine(t, rs.open(t, rs.app+"_op"), torchedSpec)
			release := make(chan struct{})
			exec := &blockingExec{release: release, running: make(chan string, 8)}
			w := hours(0, 4)
			type result struct {
				res *RunResult
				err error
			}
			done := make(chan result, 1)
			go func() {
				res, err := e.Run(context.Background(), RunRequest{Window: &w, Workers: 2}, exec, nil)
				done <- result{res, err}
			}()
			held := []string{<-exec.running, <-exec.running}
			sort.Strings(held)
			seq, err := op.LatestChangeSeq(t.Context())
			must(t, err)

			_, err = op.Run(t.Context(), RunRequest{Models: []string{"raw.torched"}, Mode: spec.Torch}, &fakeExec{}, nil)
			if err == nil {
				t.Fatal("a torch while the run holds running units went through")
			}
			for _, want := range append([]string{"raw.torched", "torch", "2 running unit(s)"}, held...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("torch refusal %q does not name %q", err, want)
				}
			}
			if cs := changesSince(t, s, seq); len(cs) != 0 {
				t.Errorf("the refused torch changed the store: %+v", cs)
			}
			eq(t, "units still running", statuses(t, s, "raw.torched")[state.Running], 2)

			close(release)
			r := <-done
			must(t, r.err)
			if r.res.Failed() || r.res.Tasks[0].Applied != 4 {
				t.Fatalf("the run after the refused torch: %+v", r.res.Tasks)
			}
			for _, ch := range changesSince(t, s, seq) {
				if ch.To == "" {
					t.Errorf("units deleted during the run: %+v", ch)
				}
			}

			res, err := op.Run(t.Context(), RunRequest{Models: []string{"raw.torched"}, Mode: spec.Torch}, &fakeExec{}, nil)
			must(t, err)
			if res.Failed() {
				t.Fatalf("torch after the run: %+v", res.Tasks)
			}
		})
	}
}

// blockingExec holds every unit until release closes, announcing each
// window on running as it starts.
type blockingExec struct {
	release chan struct{}
	running chan string
}

func (b *blockingExec) Execute(ctx context.Context, u executor.UnitRun) (executor.Result, error) {
	b.running <- u.Window.String()
	select {
	case <-b.release:
		return executor.Result{}, nil
	case <-ctx.Done():
		return executor.Result{}, ctx.Err()
	}
}

// TestReliabilityTorchNeverDeletesARunningUnit: a worker that claims a unit
// of the model after the torch's last look at the units (ApplyPlan plans
// again, finds nothing running) but before its delete must not lose that
// unit to the torch while it runs: the torch is refused, or waits, but it
// never deletes a running unit, whose worker would go on writing the window
// (until its next heartbeat finds the unit gone) while the torch's own run
// rebuilds it.
//
// Store.Delete and Uncover refuse (ErrUnitsRunning, nothing changed) when
// a unit they would remove is running, so the torch fails instead of
// deleting the claimed unit; ApplyPlan's count check alone could not tell a
// pending unit from one that became running meanwhile.
func TestReliabilityTorchNeverDeletesARunningUnit(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			rs := openRelStore(t, backend, relName("bollhav_reliability_torchrace_"))
			racing := &claimBeforeDelete{Store: rs.Store}
			op := runEngine(t, racing, torchedSpec)
			_, err := op.Apply(t.Context())
			must(t, err)
			_, err = rs.Prefill(t.Context(), state.PrefillRequest{Model: "raw.torched", Windows: []state.Window{hours(0, 1), hours(1, 2)}, Now: op.now()})
			must(t, err)
			seq, err := op.LatestChangeSeq(t.Context())
			must(t, err)

			res, err := op.Run(t.Context(), RunRequest{Models: []string{"raw.torched"}, Mode: spec.Torch}, &fakeExec{}, nil)
			if len(racing.claimed) != 1 {
				t.Fatalf("the racing worker claimed %d units, want 1", len(racing.claimed))
			}
			t.Logf("torch: err %v, result %+v", err, res)
			for _, c := range changesSince(t, rs.Store, seq) {
				if c.From == state.Running && c.To == "" {
					t.Errorf("the torch deleted %d running unit(s) of %s in %s: its worker runs on until its next heartbeat while the torch rebuilds the window", c.Count, c.Model, c.Window)
				}
			}
		})
	}
}

// claimBeforeDelete claims one unit of the model, as a worker in another
// process would, just before the first Delete reaches the store.
type claimBeforeDelete struct {
	state.Store
	once    sync.Once
	claimed []state.Claim
}

func (c *claimBeforeDelete) Delete(ctx context.Context, req state.RemoveRequest) (int, error) {
	c.once.Do(func() {
		c.claimed, _ = c.Store.Claim(ctx, state.ClaimRequest{Env: req.Env, Models: []string{req.Model}, Worker: "other-worker",
			Lease: time.Minute, Limit: 1, Now: time.Now()})
	})
	return c.Store.Delete(ctx, req)
}
