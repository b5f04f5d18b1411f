package tui

import (
	"context"
	"slices"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
)

// The dialog's load: what the engine says an action would do, shown before
// it can be confirmed.

// planMsg is the plan (or mark preview) an action dialog shows first.
type planMsg struct {
	dialog  int
	gen     uint64
	plan    *engine.Plan
	preview *markPreview
	// releases counts the held units downstream that the plan releases
	// (engine.Releases); 0 when none or when it could not be counted.
	releases int
	err      error
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
		var plans []*engine.Plan
		for _, req := range a.requests() {
			p, err := e.Plan(ctx, req)
			if err != nil {
				msg.err = err
				return msg
			}
			plans = append(plans, p)
		}
		msg.plan = mergePlans(plans)
		// What the run can release is a hint beside the plan: a failure to
		// count it leaves the line out rather than the plan.
		if n, err := e.Releases(ctx, msg.plan); err == nil {
			msg.releases = n
		}
		return msg
	}
}

// mergePlans is the plans of a batch as one, for the dialog: a model
// planned in several runs (several stretches of its windows) is one entry
// with every window of them, in window order.
func mergePlans(ps []*engine.Plan) *engine.Plan {
	if len(ps) == 1 {
		return ps[0]
	}
	out := &engine.Plan{}
	at := map[string]int{}
	for _, p := range ps {
		out.Env, out.Mode, out.Now = p.Env, p.Mode, p.Now
		for _, m := range p.Models {
			i, ok := at[m.Model]
			if !ok {
				at[m.Model] = len(out.Models)
				out.Models = append(out.Models, m)
				continue
			}
			mm := &out.Models[i]
			mm.Reset = engine.MergeWindows(mm.Reset, m.Reset)
			mm.Create = engine.MergeWindows(mm.Create, m.Create)
			mm.Run = engine.MergeWindows(mm.Run, m.Run)
			mm.Warnings = append(slices.Clone(mm.Warnings), m.Warnings...)
			mm.Register = mm.Register || m.Register
		}
	}
	return out
}
