package gate

import (
	"context"
	"fmt"
	"strings"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// AfterVerdict is one explicit after: edge of a unit's model, judged for
// the unit's window by the run that decides it: the newest run of the
// environment that ran the upstream task over the window (RunHistory.
// Outcome). A unit's after: edges are judged per window, whatever window
// the run that meets them has: a window whose upstream ran over it and
// satisfied the edge may run; one it did not run over waits.
type AfterVerdict struct {
	// Upstream is the task (model) the edge waits on; Edge its type.
	Upstream string
	Edge     graph.DependencyType
	// Cross marks an upstream of another pipeline (or one not registered).
	Cross     bool
	Satisfied bool
	// Run is the run whose outcome decided the edge and Outcome the
	// upstream's status there (SUCCESS, FAILED, SKIPPED); 0 and "" when no
	// run decided it.
	Run     int64
	Outcome string
	// Reason is what an unsatisfied edge holds the unit back with, as a
	// blocked_reason entry ("p.a (after SUCCESS): ended FAILED in run 4").
	Reason string
}

// afterLevel is the "level" an after: edge's reason entry carries, where a
// gated upstream's carries its contract.
const afterLevel = "after "

// AfterReason is the blocked_reason entry of an after: edge onto upstream
// of type edge: "UPSTREAM (after EDGE): detail", read back by ReasonParts
// like a contract's entry.
func AfterReason(upstream string, edge graph.DependencyType, detail string) string {
	return fmt.Sprintf("%s (%s%s): %s", upstream, afterLevel, edge, detail)
}

// EndedDetail says how the run that decided an edge left its upstream.
func EndedDetail(outcome string, run int64) string {
	return fmt.Sprintf("ended %s in run %d", outcome, run)
}

// RunningDetail says that run is still running an upstream over w.
func RunningDetail(w state.Window, run int64) string {
	if w.IsZero() {
		return fmt.Sprintf("is still running in run %d", run)
	}
	return fmt.Sprintf("is still running over %s in run %d", w, run)
}

// NotRunDetail says that no run has run an upstream over w yet.
func NotRunDetail(w state.Window) string {
	if w.IsZero() {
		return "has not run yet"
	}
	return "has not run over " + w.String()
}

// AfterFilter picks the after: edges a judgement covers; nil covers all.
type AfterFilter func(m *spec.Model, e spec.AfterEdge) bool

// afterVerdicts judges m's after: edges that only selects for window w
// (zero for a timeless model), skipping run skipRun's own log; see
// afterVerdict for the rule.
func (g *Reader) afterVerdicts(ctx context.Context, h *RunHistory, m *spec.Model, w state.Window, skipRun int64, only AfterFilter) ([]AfterVerdict, error) {
	var out []AfterVerdict
	for _, a := range m.After {
		if v, ok := g.AfterSettled[a.Task]; ok {
			out = append(out, v)
			continue
		}
		if only != nil && !only(m, a) {
			continue
		}
		pipe, err := h.Pipeline(ctx, g.Store, g.Env.Suffix, a.Task)
		if err != nil {
			return nil, err
		}
		up, found, err := h.Outcome(ctx, g.Store, g.Env.Suffix, a.Task, w, skipRun)
		if err != nil {
			return nil, err
		}
		out = append(out, afterVerdict(a, pipe != m.Pipeline, w, up, found))
	}
	return out, nil
}

// afterVerdict is edge a's verdict for window w given its upstream's
// outcome in the run that decides it (found false: no run decided it, or
// the newest is still running). An edge onto a task of the model's own
// pipeline that no run has run over w is satisfied: a run of the pipeline
// runs the upstream first. One onto another pipeline's task (cross) waits
// for that pipeline's run.
func afterVerdict(a spec.AfterEdge, cross bool, w state.Window, up UpstreamOutcome, found bool) AfterVerdict {
	v := AfterVerdict{Upstream: a.Task, Edge: a.On, Cross: cross}
	switch {
	case up.Running:
		v.Run, v.Outcome = up.RunID, graph.StatusInProgress.String()
		v.Reason = AfterReason(a.Task, a.On, RunningDetail(w, up.RunID))
	case !found:
		v.Satisfied = !cross
		v.Reason = AfterReason(a.Task, a.On, NotRunDetail(w))
	default:
		v.Run, v.Outcome = up.RunID, up.Status.String()
		v.Satisfied = graph.Satisfies(a.On, up.TaskRunState)
		v.Reason = AfterReason(a.Task, a.On, EndedDetail(v.Outcome, up.RunID))
	}
	if v.Satisfied {
		v.Reason = ""
	}
	return v
}

// afterTable is what judging one model's after: edges needs, read once, so
// a sweep or the live index judges every unit in memory: each edge's
// upstream outcomes, newest run first.
type afterTable struct {
	m     *spec.Model
	edges []afterEdgeHistory
}

type afterEdgeHistory struct {
	a        spec.AfterEdge
	cross    bool
	outcomes []RunOutcome
}

// afterTableOf reads m's after: edges' histories; nil when m has none.
func (g *Reader) afterTableOf(ctx context.Context, h *RunHistory, m *spec.Model) (*afterTable, error) {
	if m == nil || len(m.After) == 0 {
		return nil, nil
	}
	t := &afterTable{m: m}
	for _, a := range m.After {
		pipe, err := h.Pipeline(ctx, g.Store, g.Env.Suffix, a.Task)
		if err != nil {
			return nil, err
		}
		outs, err := h.Outcomes(ctx, g.Store, g.Env.Suffix, a.Task)
		if err != nil {
			return nil, err
		}
		t.edges = append(t.edges, afterEdgeHistory{a: a, cross: pipe != m.Pipeline, outcomes: outs})
	}
	return t, nil
}

// held reports whether the model's after: edges hold back its unit with
// window w (zero for a timeless model).
func (t *afterTable) held(w state.Window) bool {
	return t != nil && afterHeld(t.m, t.verdicts(w))
}

// verdicts are the model's after: edges' verdicts for window w.
func (t *afterTable) verdicts(w state.Window) []AfterVerdict {
	vs := make([]AfterVerdict, len(t.edges))
	for i, e := range t.edges {
		var up UpstreamOutcome
		found := false
		for _, o := range e.outcomes {
			if o.Covers(w) {
				up, found = o.UpstreamOutcome, !o.Running
				break
			}
		}
		vs[i] = afterVerdict(e.a, e.cross, w, up, found)
	}
	return vs
}

// withAfter adds m's after: verdicts vs to a unit's gate: when they hold
// the unit back it is not satisfied, and its blocked_reason names them
// after its gated upstreams.
func withAfter(ug UnitGate, m *spec.Model, vs []AfterVerdict) UnitGate {
	ug.After = vs
	if afterHeld(m, vs) {
		ug.Satisfied, ug.AfterHeld = false, true
		ug.BlockedReason = joinReasons(ug.BlockedReason, afterReasons(vs))
	}
	return ug
}

// afterHeld folds m's after: verdicts with its run condition: the unit is
// held when fewer of its edges hold than the condition needs. A gated
// upstream's implicit edge counts as holding (the contract gate judges it),
// and so does every edge the judgement did not cover.
func afterHeld(m *spec.Model, vs []AfterVerdict) bool {
	total := len(m.After)
	named := map[string]bool{}
	for _, a := range m.After {
		named[a.Task] = true
	}
	for _, src := range m.Upstream {
		if src.Gated() && !named[src.Name] {
			named[src.Name] = true
			total++
		}
	}
	lost := 0
	for _, v := range vs {
		if !v.Satisfied {
			lost++
		}
	}
	if lost == 0 {
		return false
	}
	required := total
	switch m.RunCondition {
	case graph.Any:
		required = min(total, 1)
	case graph.N:
		required = m.RunConditionCount
	}
	return total-lost < required
}

// afterReasons joins the unsatisfied verdicts' reasons.
func afterReasons(vs []AfterVerdict) string {
	var rs []string
	for _, v := range vs {
		if !v.Satisfied {
			rs = append(rs, v.Reason)
		}
	}
	return strings.Join(rs, "; ")
}

// Idle reports an edge that waits for a failure that did not happen: a
// FAILURE edge whose upstream succeeded. Its unit is held — an alert that
// did not fire — but nothing is wrong: no incident is made of it.
func (v AfterVerdict) Idle() bool {
	return !v.Satisfied && v.Edge == graph.Failure && v.Outcome == graph.StatusSuccess.String()
}

// idleOnly reports whether every edge that holds the unit back is idle
// and every gated upstream is satisfied.
func (ug UnitGate) idleOnly() bool {
	if !ug.AfterHeld || ug.Err != nil {
		return false
	}
	for _, v := range ug.Verdicts {
		if !v.Satisfied && !v.Skipped {
			return false
		}
	}
	for _, v := range ug.After {
		if !v.Satisfied && !v.Idle() {
			return false
		}
	}
	return true
}

// Detail is what the edge's verdict says without the upstream and edge
// it names: "satisfied", "ended FAILED in run 4", "has not run over …".
func (v AfterVerdict) Detail() string {
	if v.Satisfied {
		if v.Run == 0 {
			return "satisfied: no run has run it over the window, and a run of the pipeline runs it first"
		}
		return "satisfied: " + EndedDetail(v.Outcome, v.Run)
	}
	_, detail, _ := strings.Cut(v.Reason, "): ")
	return detail
}

// GateLine is the one sentence that sums up what gates the unit, or ""
// when the tables below it say it all; every front end prints this one.
func (r *WhyReport) GateLine() string {
	switch {
	case len(r.Upstreams) == 0 && len(r.After) == 0:
		return "no gated upstream: nothing gates it"
	case r.AfterHeld:
		return "held by its after: edges (the run condition is not met for this window)"
	case r.UnderWay != "":
		return "waiting on work under way, not blocked: " + r.UnderWay
	case !r.Satisfied:
		return ""
	case len(r.After) == 0:
		return "every gated upstream is satisfied now"
	case len(r.Upstreams) == 0:
		return "every after: edge is satisfied for this window"
	}
	return "every gated upstream and after: edge is satisfied now"
}
