package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// Readiness is what the gate says now about a unit that is not applied.
type Readiness uint8

// The four answers of a gate sweep.
const (
	// Ready: every gated upstream is satisfied (or skipped); the unit would
	// run if it were claimed now.
	Ready Readiness = iota + 1
	// Waiting: some gated upstream misses a range the level needs.
	Waiting
	// Stale: nothing is missing, but a freshness limit fails.
	Stale
	// Failing: a hard gate error; the unit would fail if claimed.
	Failing
	// Outdated: nothing is missing but ranges a require_current contract
	// needs are applied only under an earlier definition of the upstream:
	// the unit waits for `run --outdated` to rebuild them (a run never
	// re-runs an applied window by itself).
	Outdated
)

var readinessNames = [...]string{"", "ready", "waiting", "stale", "failing", "outdated"}

func (r Readiness) String() string {
	if int(r) < len(readinessNames) {
		return readinessNames[r]
	}
	return "unknown"
}

// SweptUnit is one unit the sweep judged.
type SweptUnit struct {
	Model string
	// Window is zero for a timeless model's existence row.
	Window state.Window
	// Status is the unit's stored status: pending, running, blocked or
	// failed.
	Status    state.UnitStatus
	Readiness Readiness
}

// ModelReadiness counts one model's units that are not applied by what
// their gate says now.
type ModelReadiness struct {
	Model    string
	Pipeline string
	// Outstanding is every unit that is not applied; the next five split
	// it. Waiting is a missing range (or an after: edge that does not
	// hold), Outdated an upstream applied only under an earlier definition
	// where a require_current contract reads it.
	Outstanding                             int
	Ready, Waiting, Outdated, Stale, Errors int
	// Released counts the units stored blocked whose gate is satisfied
	// now: their upstreams caught up, and a run picks them up.
	Released int
	// Err is why the model could not be judged (a stored definition this
	// bollhav cannot read); its units then count as Errors.
	Err string
}

// SweepReport is a whole gate sweep: every model with units that are not
// applied, by pipeline and name.
type SweepReport struct {
	Now    time.Time
	Models []ModelReadiness
	// Units is how many units were judged.
	Units int
}

// Held counts the model's held units: not applied, and the engine would
// not run them if asked now (every outstanding unit but the ready ones).
func (m ModelReadiness) Held() int { return m.Outstanding - m.Ready }

// Held counts the held units of every model: what `blocked --recheck`
// finds waiting, outdated, stale or failing the gate, and what keeps
// `incidents` from saying "all clear".
func (r *SweepReport) Held() int {
	n := 0
	for _, m := range r.Models {
		n += m.Held()
	}
	return n
}

// Sweep evaluates, at the engine's now, the gate of every unit of the
// environment that is not applied (of f.Model, or of the models of
// f.Pipeline), without changing anything: which would run if claimed now,
// which wait on a missing range, which on an outdated upstream, which only
// on freshness, which would fail.
// It is what `bollhav blocked --recheck` reports: a blocked unit's stored
// reason dates from the last time a run tried it, the sweep says what holds
// now. fn, when not nil, receives every judged unit, by model name and then
// window.
//
// It is one read of the environment's units (state.SweepReader, when the
// store has it) and then arithmetic in memory: each upstream's applied rows
// are indexed once — coverage as merged islands, rows by window — so a unit
// costs a few binary searches per gated upstream, not a query. Its verdicts
// are Evaluate's, unit for unit.
func (g *Reader) Sweep(ctx context.Context, f BlockedFilter, fn func(SweptUnit) error) (*SweepReport, error) {
	pick := func(lin *gatedLineage) ([]string, error) { return lin.selectModels(g, f) }
	return g.sweep(ctx, pick, f.Model != "" || f.Pipeline != "", fn)
}

// SweepModels is Sweep of models alone: their units that are not applied
// and their upstreams' applied rows are read, not the environment's. A
// model not registered (retired since it was named) is left out, not an
// error. What the Blocked view judges the units it shows by when the
// environment is too large for the live index.
func (g *Reader) SweepModels(ctx context.Context, models []string, fn func(SweptUnit) error) (*SweepReport, error) {
	pick := func(lin *gatedLineage) ([]string, error) {
		var out []string
		for _, n := range lin.names {
			if slices.Contains(models, n) {
				out = append(out, n)
			}
		}
		return out, nil
	}
	return g.sweep(ctx, pick, true, fn)
}

// sweep is Sweep of the models pick chooses; narrowed says they may be
// fewer than every model, so only theirs are read.
func (g *Reader) sweep(ctx context.Context, pick func(*gatedLineage) ([]string, error), narrowed bool, fn func(SweptUnit) error) (*SweepReport, error) {
	env := g.Env.Suffix
	now := g.now()
	recs, err := g.Store.Models(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("reading the registered models: %w", err)
	}
	defs, problems, lin := g.sweepModels(recs)
	names, err := pick(lin)
	if err != nil {
		return nil, err
	}
	units, err := g.gateUnits(ctx, recs, sweepQuery(g, narrowed, names, defs, problems))
	if err != nil {
		return nil, err
	}
	byName := make(map[string]state.ModelRecord, len(recs))
	for _, rec := range recs {
		byName[rec.Name] = rec
	}
	indexes := map[string]*upstreamIndex{}
	index := func(name string) (*upstreamIndex, error) {
		if ix, ok := indexes[name]; ok {
			return ix, nil
		}
		var sh upstreamShape
		if rec, ok := byName[name]; ok {
			if sh, err = g.shapeFromRecord(rec); err != nil {
				return nil, err
			}
		}
		ix := newUpstreamIndex(sh, units[name], now)
		indexes[name] = ix
		return ix, nil
	}
	current := map[string]*upstreamIndex{}
	currentIndex := func(name string) (*upstreamIndex, error) {
		if ix, ok := current[name]; ok {
			return ix, nil
		}
		ix, err := index(name)
		if err != nil {
			return nil, err
		}
		if ix, err = g.currentIndex(ctx, env, name, ix, now); err != nil {
			return nil, err
		}
		current[name] = ix
		return ix, nil
	}
	var jobs []sweepJob
	var history RunHistory
	for _, name := range names {
		us := units[name]
		if len(us) == 0 {
			continue
		}
		job := sweepJob{model: name, pipeline: lin.pipeline[name], units: us}
		m := defs[name]
		switch {
		case problems[name] != nil:
			job.err = problems[name].Error()
		default:
			job.timeless = m.Temporality == spec.Timeless
			for _, src := range g.gatedSources(m) {
				whole, err := index(src.Name)
				if err != nil {
					return nil, err
				}
				ix := whole
				if src.RequireCurrent {
					if ix, err = currentIndex(src.Name); err != nil {
						return nil, err
					}
				}
				job.edges = append(job.edges, newCurrentEdge(src, job.timeless, ix, whole, now))
			}
			if job.after, err = g.afterTableOf(ctx, &history, m); err != nil {
				return nil, err
			}
		}
		jobs = append(jobs, job)
	}
	judgeAll(jobs)
	rep := &SweepReport{Now: now}
	for i := range jobs {
		j := &jobs[i]
		if j.counts.Outstanding == 0 {
			continue
		}
		rep.Units += j.counts.Outstanding
		rep.Models = append(rep.Models, j.counts)
		if fn == nil {
			continue
		}
		k := 0
		for _, u := range j.units {
			if u.Status == state.CodeApplied {
				continue
			}
			su := SweptUnit{Model: j.model, Window: sweepWindow(u), Status: u.Status.Status(), Readiness: j.verdicts[k]}
			k++
			if err := fn(su); err != nil {
				return rep, err
			}
		}
	}
	slices.SortFunc(rep.Models, func(a, b ModelReadiness) int {
		return cmp.Or(cmp.Compare(a.Pipeline, b.Pipeline), cmp.Compare(a.Model, b.Model))
	})
	return rep, nil
}

// sweepJob is one model's units to judge and, after judgeAll, the verdicts
// of those that are not applied, in window order.
type sweepJob struct {
	model, pipeline string
	units           []state.SweepUnit
	timeless        bool
	edges           []sweepEdge
	// after judges the model's after: edges; nil when it has none.
	after    *afterTable
	err      string
	verdicts []Readiness
	counts   ModelReadiness
}

// judgeAll judges every job, spread over the machine's cores: the indexes
// are read-only by now (their lazy parts build under a sync.Once).
func judgeAll(jobs []sweepJob) {
	parallel(len(jobs), func(i int) { jobs[i].judge() })
}

// maxWorkers is how many goroutines judge at once: one per core.
func maxWorkers() int { return runtime.GOMAXPROCS(0) }

func (j *sweepJob) judge() {
	c := ModelReadiness{Model: j.model, Pipeline: j.pipeline, Err: j.err}
	for _, u := range j.units {
		if u.Status == state.CodeApplied {
			continue
		}
		r := Failing
		if j.err == "" {
			r = j.readiness(u)
		}
		j.verdicts = append(j.verdicts, r)
		c.Outstanding++
		switch r {
		case Ready:
			c.Ready++
			if u.Status == state.CodeBlocked {
				c.Released++
			}
		case Waiting:
			c.Waiting++
		case Outdated:
			c.Outdated++
		case Stale:
			c.Stale++
		default:
			c.Errors++
		}
	}
	j.counts = c
}

// readiness folds the edges' verdicts the way Judge does: every gated
// upstream is judged, a hard error wins, then a missing range, then an
// outdated upstream, then freshness.
func (j *sweepJob) readiness(u state.SweepUnit) Readiness {
	r, _ := fold(j.edges, u)
	if r == Ready && j.after.held(sweepWindow(u)) {
		// Held by its after: edges: it waits for their upstreams' runs.
		r = Waiting
	}
	return r
}

// fold is the verdict of the unit u over edges — a hard error wins, then a
// missing range, then an outdated upstream, then freshness — and, for a Ready unit, the Unix
// nanosecond after which a freshness limit makes it stale by the clock
// alone (noFlip when none can).
func fold(edges []sweepEdge, u state.SweepUnit) (Readiness, int64) {
	worst, flip := edgeOK, int64(noFlip)
	for k := range edges {
		v, f := edges[k].evalAt(u.Since, u.Until)
		if v > worst {
			worst = v
			if v == edgeError {
				break
			}
		}
		flip = min(flip, f)
	}
	if worst != edgeOK {
		flip = noFlip
	}
	return [...]Readiness{edgeOK: Ready, edgeMissing: Waiting, edgeOutdated: Outdated, edgeStale: Stale, edgeError: Failing}[worst], flip
}

// gatedSources are the upstreams of m a sweep judges in g.Env: the gated
// ones, but those deactivate_for_dev skips here.
func (g *Reader) gatedSources(m *spec.Model) []spec.Source {
	var out []spec.Source
	for _, src := range m.Upstream {
		if src.Gated() && !m.GateSkipped(src, g.Env) {
			out = append(out, src)
		}
	}
	return out
}

// sweepModels resolves each registered model's definition — the spec's
// when the spec has it, as the run would gate it, else the registration's
// — and the lineage names and pipelines selectModels filters on.
func (g *Reader) sweepModels(recs []state.ModelRecord) (map[string]*spec.Model, map[string]error, *gatedLineage) {
	defs := map[string]*spec.Model{}
	problems := map[string]error{}
	lin := &gatedLineage{pipeline: map[string]string{}}
	for _, rec := range recs {
		lin.pipeline[rec.Name] = rec.Pipeline
		if m := g.Spec.Model(rec.Name); m != nil {
			defs[rec.Name] = m
			lin.pipeline[rec.Name] = m.Pipeline
			continue
		}
		m, err := spec.ModelFromRecord(rec)
		if err != nil {
			problems[rec.Name] = err
			continue
		}
		defs[rec.Name] = m
	}
	if g.Spec != nil {
		for _, m := range g.Spec.Models {
			if _, ok := lin.pipeline[m.Name]; !ok {
				lin.pipeline[m.Name] = m.Pipeline
			}
		}
	}
	for name := range lin.pipeline {
		lin.names = append(lin.names, name)
	}
	sort.Strings(lin.names)
	return defs, problems, lin
}

// sweepUnits reads every unit of the environment by model: in one pass
// when the store is a state.SweepReader, else model by model.
func (g *Reader) sweepUnits(ctx context.Context, recs []state.ModelRecord) (map[string][]state.SweepUnit, error) {
	env := g.Env.Suffix
	out := make(map[string][]state.SweepUnit, len(recs))
	if sr, ok := g.Store.(state.SweepReader); ok {
		err := sr.SweepUnits(ctx, env, func(model string, us []state.SweepUnit) error {
			out[model] = us
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading the units of %s: %w", g.Env, err)
		}
		return out, nil
	}
	for _, rec := range recs {
		var us []state.SweepUnit
		err := g.Store.ScanUnits(ctx, state.UnitQuery{Env: env, Model: rec.Name}, func(u state.Unit) error {
			us = append(us, state.SweepUnitOf(u))
			return nil
		})
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return nil, fmt.Errorf("reading the units of %s: %w", rec.Name, err)
		}
		out[rec.Name] = us
	}
	return out, nil
}

// shapeFromRecord is a registration's shape as the gate reads it, with the
// model's current fingerprint: the spec's when the spec defines the model
// (what a run would apply now), the registration's otherwise.
func (g *Reader) shapeFromRecord(rec state.ModelRecord) (upstreamShape, error) {
	temporality, chunking, err := spec.RecordShape(rec)
	if err != nil {
		return upstreamShape{}, err
	}
	sh := upstreamShape{registered: true, temporality: temporality}
	if m := g.Spec.Model(rec.Name); m != nil {
		sh.current = spec.Fingerprint(m)
	} else if sh.current, err = spec.RecordFingerprint(rec); err != nil {
		return upstreamShape{}, err
	}
	if chunking != nil {
		sh.flexibility, sh.end = chunking.Flexibility, chunking.End
		if sh.grid, err = state.NewGrid(chunking.Start, chunking.Interval, chunking.Location); err != nil {
			return upstreamShape{}, fmt.Errorf("upstream %s: %w", rec.Name, err)
		}
	}
	return sh, nil
}

// sweepWindow is a sweep unit's window as a state.Window.
func sweepWindow(u state.SweepUnit) state.Window {
	if u.Since == 0 && u.Until == 0 {
		return state.Window{}
	}
	return state.Window{Since: time.UnixMicro(u.Since).UTC(), Until: time.UnixMicro(u.Until).UTC()}
}
