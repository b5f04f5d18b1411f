package gate

import (
	"context"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// afterBlocker is the unit of an after: edge's upstream that holds back a
// unit with window w, given the edge's unsatisfied verdict v: in the run
// that decided the edge, the upstream's failed unit (the one at w first,
// else the first in that run's window) when it ended FAILED, its held unit
// when it was SKIPPED; with no run over w, the upstream's own unit at w
// (or its missing window), which is what has to run first. nil when no
// unit can be named: an upstream that succeeded where the edge wants a
// failure holds nothing that a fix would release.
func (an *analysis) afterBlocker(ctx context.Context, v AfterVerdict, w state.Window) (*chainStep, error) {
	um, _, err := an.model(ctx, v.Upstream)
	if err != nil {
		return nil, err
	}
	at := w
	if um.Temporality == spec.Timeless {
		at = state.Window{}
	}
	if v.Run == 0 {
		u, err := an.firstUnit(ctx, state.UnitQuery{Env: an.env, Model: um.Name, Window: at})
		if err != nil {
			return nil, err
		}
		return &chainStep{m: um, link: linkOf(um, at, u)}, nil
	}
	var want state.UnitStatus
	switch v.Outcome {
	case graph.StatusFailed.String():
		want = state.Failed
	case graph.StatusSkipped.String():
		want = state.Blocked
	default:
		return nil, nil
	}
	run, err := an.g.Store.GetRun(ctx, v.Run)
	if err != nil {
		return nil, err
	}
	scopes := []state.Window{at}
	if !at.IsZero() {
		scopes = append(scopes, run.Window) // zero: every unit
	}
	for _, in := range scopes {
		u, err := an.firstUnit(ctx, state.UnitQuery{Env: an.env, Model: um.Name, Window: in, Statuses: []state.UnitStatus{want}})
		if err != nil {
			return nil, err
		}
		if u != nil {
			return &chainStep{m: um, link: linkOf(um, u.Window, u)}, nil
		}
	}
	return nil, nil
}

// maxRoots bounds how many roots one unit is credited to — a month held by
// each of its outdated hours has 744 — past it the first ones found stand
// for the rest.
const maxRoots = 256

// allRoots is every root that holds the unit of m at link back: where its
// root-cause chain ends following each of its unsatisfied upstreams (each
// gated upstream and each after: edge that does not hold), not only the
// first one as RootCause does; each root link once, at most maxRoots. A
// unit nothing holds back is its own root. gate is the unit's gate when
// the caller has it. The roots of every unit met on the way are kept for
// the analysis (an incident traces hundreds of units whose chains meet).
func (an *analysis) allRoots(ctx context.Context, m *spec.Model, link ChainLink, gate *UnitGate) ([]ChainLink, error) {
	return an.rootsOf(ctx, chainStep{m: m, link: link, gate: gate}, 0, map[string]bool{})
}

func (an *analysis) rootsOf(ctx context.Context, cur chainStep, depth int, visiting map[string]bool) ([]ChainLink, error) {
	k := chainKey(cur.link)
	if rs, ok := an.roots[k]; ok {
		return rs, nil
	}
	self := []ChainLink{cur.link}
	switch cur.link.Status {
	case state.Applied, state.Failed, StatusMissing:
		return self, nil
	}
	g, err := an.gateOf(ctx, cur)
	if err != nil {
		return nil, err
	}
	if g.Err != nil || depth >= MaxRootCauseDepth {
		l := cur.link
		if g.Err != nil && l.Detail == "" {
			l.Detail = "gate: " + g.Err.Error()
		}
		return []ChainLink{l}, nil
	}
	var nexts []*chainStep
	for i, src := range gatedSources(cur.m) {
		if v := g.Verdicts[i]; !v.Satisfied && !v.Skipped {
			steps, err := an.blockers(ctx, cur.m, src, v, cur.link.Window)
			if err != nil {
				return nil, err
			}
			nexts = append(nexts, steps...)
		}
	}
	for _, v := range g.After {
		if !v.Satisfied {
			next, err := an.afterBlocker(ctx, v, cur.link.Window)
			if err != nil {
				return nil, err
			}
			nexts = append(nexts, next)
		}
	}
	visiting[k] = true
	defer delete(visiting, k)
	var out []ChainLink
	seen := map[string]bool{}
	followed, cut := false, false
	for _, next := range nexts {
		if next == nil {
			continue
		}
		if visiting[chainKey(next.link)] {
			cut = true // a cycle: its roots are the ones found elsewhere
			continue
		}
		followed = true
		rs, err := an.rootsOf(ctx, *next, depth+1, visiting)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			if rk := chainKey(r); !seen[rk] && len(out) < maxRoots {
				seen[rk] = true
				out = append(out, r)
			}
		}
	}
	if !followed {
		out = self
	}
	if !cut {
		if an.roots == nil {
			an.roots = map[string][]ChainLink{}
		}
		an.roots[k] = out
	}
	return out, nil
}

// blockers are every unit of src that holds back a unit of m with window
// w, given src's unsatisfied verdict v: each unit that is not applied and
// each window no unit covers, in every range v misses; each row too old
// for a freshness limit; else each row built under an earlier definition
// that a require_current contract does not accept. At most maxRoots;
// blocker's one when it names nothing more (a timeless upstream).
func (an *analysis) blockers(ctx context.Context, m *spec.Model, src spec.Source, v Verdict, w state.Window) ([]*chainStep, error) {
	um, _, err := an.model(ctx, src.Name)
	if err != nil {
		return nil, err
	}
	var out []*chainStep
	switch {
	case v.Stale:
		rows, err := an.staleRows(ctx, m, src, w, v)
		if err != nil {
			return nil, err
		}
		for _, r := range rows[:min(len(rows), maxRoots)] {
			out = append(out, &chainStep{m: um, link: ChainLink{Model: um.Name, Window: r.Window, Status: state.Applied, Stale: true, Detail: v.Reason}})
		}
	case um.Temporality != spec.Timeless:
		for _, r := range v.Missing {
			err := an.walkOutstanding(ctx, um, r, func(u *state.Unit, gap state.Window) bool {
				if u != nil {
					out = append(out, &chainStep{m: um, link: linkOf(um, u.Window, u)})
				} else if ws, _ := gapWindows(um, gap, 1); len(ws) > 0 {
					// One root for the whole stretch no unit covers (from
					// the model's start): a run loading it fixes it.
					if um.Chunking != nil && um.Chunking.Flexibility != spec.Flex {
						gap.Since = ws[0].Since
					}
					out = append(out, &chainStep{m: um, link: ChainLink{Model: um.Name, Window: gap, Status: StatusMissing}})
				}
				return len(out) >= maxRoots
			})
			if err != nil || len(out) >= maxRoots {
				return out, err
			}
		}
	}
	if len(out) == 0 && len(v.Outdated) > 0 {
		// Nothing unloaded: every applied row built under an earlier
		// definition that a require_current contract does not accept.
		err := an.outdatedUnits(ctx, m, src, um, v.Outdated, func(u state.Unit) bool {
			l := linkOf(um, u.Window, &u)
			l.Outdated, l.Detail = true, OutdatedText
			out = append(out, &chainStep{m: um, link: l})
			return len(out) >= maxRoots
		})
		if err != nil {
			return nil, err
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	one, err := an.blocker(ctx, m, src, v, w)
	if err != nil || one == nil {
		return nil, err
	}
	return []*chainStep{one}, nil
}

// gateOf is the gate of a chain step: the one it carries, else judged now.
func (an *analysis) gateOf(ctx context.Context, cur chainStep) (*UnitGate, error) {
	if cur.gate != nil {
		return cur.gate, nil
	}
	ug, err := an.g.CachedUnit(ctx, an.shapes, cur.m, windowOf(cur.m, cur.link.Window), an.now)
	if err != nil {
		return nil, err
	}
	return &ug, nil
}
