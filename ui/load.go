package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
)

// Loads: each function returns the tea.Cmd that reads one view's data and
// delivers it as a loadedMsg. They are the only place views reach the store,
// and they run off the event loop, so Update never waits on I/O.

// loadTimeout bounds one load: a store that hangs shows up as an error and
// the banner, not as a frozen screen.
const loadTimeout = 30 * time.Second

// unitsPage is how many units the model view asks for at a time; scrolling
// near the end asks for the next page.
const unitsPage = 500

// errStopScan ends a store scan early.
var errStopScan = errors.New("stop")

// loadCmd runs fn with a bounded context and wraps its result for view id.
// A failed load probes the store: when the store does not answer either,
// the error is a storeDownError, which the app retries with backoff under
// a banner; otherwise the request itself was wrong and is shown as it is.
func loadCmd(ctx context.Context, e *engine.Engine, id int, gen uint64, fn func(ctx context.Context) (any, error)) tea.Cmd {
	return func() tea.Msg {
		lctx, cancel := context.WithTimeout(ctx, loadTimeout)
		defer cancel()
		data, err := fn(lctx)
		if err != nil && ctx.Err() == nil {
			pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
			_, perr := e.Store.SchemaVersion(pctx)
			pcancel()
			if perr != nil || errors.Is(err, context.DeadlineExceeded) {
				err = storeDownError{err}
			}
		}
		return loadedMsg{view: id, gen: gen, data: data, err: err}
	}
}

// storeDownError is a load that failed because the store is unreachable.
type storeDownError struct{ err error }

func (e storeDownError) Error() string { return e.err.Error() }
func (e storeDownError) Unwrap() error { return e.err }

// pipelinesData is the pipelines view's data: every model's status, and the
// pipelines' task graphs when the engine has a spec. only, when set, marks a
// partial reload of just those models' statuses.
type pipelinesData struct {
	models   []engine.ModelStatus
	graphs   []*engine.PipelineGraph
	graphErr error
	only     []string
}

func loadPipelines(e *engine.Engine, only []string) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		if len(only) > 0 {
			d := pipelinesData{only: only}
			for _, name := range only {
				st, err := e.ModelStatus(ctx, name)
				if errors.Is(err, engine.ErrUnknownModel) {
					continue // gone from the store and the spec: the full reload drops it
				}
				if err != nil {
					return nil, err
				}
				d.models = append(d.models, st)
			}
			return d, nil
		}
		models, err := e.Status(ctx)
		if err != nil {
			return nil, err
		}
		d := pipelinesData{models: models}
		if e.Spec != nil {
			recs, err := e.Store.Models(ctx, e.Env.Suffix)
			if err != nil {
				return nil, fmt.Errorf("reading the registered models of %s: %w", e.Env, err)
			}
			known := make(map[string]int, len(recs))
			for _, r := range recs {
				known[r.Name] = r.TaskID
			}
			d.graphs, d.graphErr = engine.PipelineGraphs(e.Spec, engine.AssignTaskIDs(e.Spec, known))
		}
		return d, nil
	}
}

// modelData is the model view's data.
type modelData struct {
	status engine.ModelStatus
	// def is the model's definition: the spec's, or the registration's when
	// the engine has no spec; nil when neither can be read.
	def       *engine.Model
	upstreams []upstreamInfo
	// downstream names the models that gate on this one.
	downstream []string
	units      []state.Unit
	// more is true when the store holds units after the last one loaded.
	more bool
}

// upstreamInfo is one gated upstream of the model view with its status and,
// for the timeline, its units over the span of the model's loaded units.
type upstreamInfo struct {
	src    engine.Source
	status *engine.ModelStatus
	units  []state.Unit
	err    error
}

// upstreamUnitsLimit bounds the units read per upstream for the timeline.
const upstreamUnitsLimit = 5000

func loadModel(e *engine.Engine, name string, limit int, withUpstreamUnits bool) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		st, err := e.ModelStatus(ctx, name)
		if err != nil {
			return nil, err
		}
		d := modelData{status: st}
		defs, err := definitions(ctx, e)
		if err != nil {
			return nil, err
		}
		d.def = defs[name]
		if d.def != nil {
			for _, src := range d.def.Upstream {
				if !src.Gated() {
					continue
				}
				ui := upstreamInfo{src: src}
				if ust, err := e.ModelStatus(ctx, src.Name); err == nil {
					ui.status = &ust
				} else {
					ui.err = err
				}
				d.upstreams = append(d.upstreams, ui)
			}
		}
		for _, m := range defs {
			for _, src := range m.Upstream {
				if src.Gated() && src.Name == name {
					d.downstream = append(d.downstream, m.Name)
					break
				}
			}
		}
		slices.Sort(d.downstream)
		if st.Registered {
			err := e.ScanUnits(ctx, name, state.Window{}, nil, func(u state.Unit) error {
				if len(d.units) == limit {
					d.more = true
					return errStopScan
				}
				d.units = append(d.units, u)
				return nil
			})
			if err != nil && !errors.Is(err, errStopScan) {
				return nil, fmt.Errorf("reading the units of %s: %w", name, err)
			}
		}
		if withUpstreamUnits && len(d.units) > 0 && !st.Timeless() {
			span := state.Window{Since: d.units[0].Window.Since, Until: d.units[len(d.units)-1].Window.Until}
			for i := range d.upstreams {
				up := &d.upstreams[i]
				if up.status == nil || !up.status.Registered {
					continue
				}
				w := span
				if up.status.Timeless() {
					w = state.Window{}
				}
				err := e.Store.ScanUnits(ctx, state.UnitQuery{Env: e.Env.Suffix, Model: up.src.Name, Window: w}, func(u state.Unit) error {
					if len(up.units) == upstreamUnitsLimit {
						return errStopScan
					}
					up.units = append(up.units, u)
					return nil
				})
				if err != nil && !errors.Is(err, errStopScan) {
					return nil, fmt.Errorf("reading the units of %s: %w", up.src.Name, err)
				}
			}
		}
		return d, nil
	}
}

// definitions are the models the engine knows, by name: the spec's, or,
// for an engine opened from the store alone, the registrations'.
func definitions(ctx context.Context, e *engine.Engine) (map[string]*engine.Model, error) {
	out := map[string]*engine.Model{}
	if e.Spec != nil {
		for _, m := range e.Spec.Models {
			out[m.Name] = m
		}
		return out, nil
	}
	recs, err := e.Store.Models(ctx, e.Env.Suffix)
	if err != nil {
		return nil, fmt.Errorf("reading the registered models of %s: %w", e.Env, err)
	}
	for _, r := range recs {
		if m, err := engine.ModelFromRecord(r); err == nil {
			out[m.Name] = m
		}
	}
	return out, nil
}

func loadWhy(e *engine.Engine, model string, at time.Time) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		return e.Why(ctx, model, at)
	}
}

func loadBlocked(e *engine.Engine) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		return e.Blocked(ctx, engine.BlockedFilter{})
	}
}

// runsLimit is how many runs the runs view lists.
const runsLimit = 200

// runsData is the runs view's data.
type runsData struct {
	runs []state.Run
}

func loadRuns(e *engine.Engine) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		runs, err := e.Store.Runs(ctx, e.Env.Suffix, runsLimit)
		if err != nil {
			return nil, fmt.Errorf("reading the runs of %s: %w", e.Env, err)
		}
		return runsData{runs: runs}, nil
	}
}

// runData is one run with its task run log, each task named.
type runData struct {
	run   state.Run
	log   []state.TaskRunEntry
	names map[int]string
}

func loadRun(e *engine.Engine, id int64) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		run, err := e.Store.GetRun(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", id, err)
		}
		log, err := e.Store.TaskLog(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("reading the task log of run %d: %w", id, err)
		}
		recs, err := e.Store.Models(ctx, run.Env)
		if err != nil {
			return nil, fmt.Errorf("reading the registered models of %s: %w", e.Env, err)
		}
		names := make(map[int]string, len(recs))
		for _, r := range recs {
			names[r.TaskID] = r.Name
		}
		return runData{run: run, log: log, names: names}, nil
	}
}

// markPreview is what a mark would move: the units of the model in the
// window whose status the mark changes, by status.
type markPreview struct {
	counts map[state.UnitStatus]int
	total  int
}

// markFrom are the statuses a mark to status moves, as engine.Mark has them.
func markFrom(status state.UnitStatus) []state.UnitStatus {
	if status == state.Applied {
		return []state.UnitStatus{state.Pending, state.Blocked, state.Failed}
	}
	return []state.UnitStatus{state.Applied, state.Blocked, state.Failed}
}

// loadPlan asks the engine what an action would do, changing nothing: the
// plan of a run, or the units a mark would move.
func loadPlan(ctx context.Context, e *engine.Engine, dialog int, gen uint64, a action) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, loadTimeout)
		defer cancel()
		msg := planMsg{dialog: dialog, gen: gen}
		if a.kind == actionMark {
			p := &markPreview{counts: map[state.UnitStatus]int{}}
			var w state.Window
			if a.window != nil {
				w = *a.window
			}
			msg.err = e.ScanUnits(ctx, a.model, w, markFrom(a.status), func(u state.Unit) error {
				if a.window == nil || a.window.Contains(u.Window.Since) && !u.Window.Until.After(a.window.Until) {
					p.counts[u.Status]++
					p.total++
				}
				return nil
			})
			msg.preview = p
			return msg
		}
		msg.plan, msg.err = e.Plan(ctx, a.request())
		return msg
	}
}
