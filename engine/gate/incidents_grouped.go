package gate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bollhav/bollhav/state"
)

// errTracedEnough stops BlockedPages after the page Incidents traces.
var errTracedEnough = errors.New("traced enough")

// incidentsFromGroups is Incidents on a state.StuckReader: the units it
// traces are BlockedPages' first page of MaxTracedBlocked (what holds the
// most, in Blocked's order, without reading every blocked unit first),
// and every other blocked unit comes from the grouped read that page was
// ranked from, by model and reason, less the traced units of each group.
// So what is held is one page of units and one row a group, however many
// units are blocked, and the answer is the one the full read gives
// (TestIncidentsStreamedEqualTheListed holds them to it).
func (g *Reader) incidentsFromGroups(ctx context.Context, sr state.StuckReader, lin *gatedLineage, counts []state.ModelCounts, counter *reachCounter) (*IncidentReport, error) {
	failures := g.failuresAhead(ctx, lin, counts)
	defer failures.abandon()
	groups, err := sr.StuckGroups(ctx, g.Env.Suffix, []state.UnitStatus{state.Blocked})
	if err != nil {
		return nil, fmt.Errorf("reading the blocked units: %w", err)
	}
	counter.windows = sr
	return g.incidentsOfGroups(ctx, sr, lin, failures, counter, groups, nil)
}

// incidentsOfGroups is incidentsFromGroups from groups, the grouped read of
// the blocked units, tracing traced when it is not nil (the first
// MaxTracedBlocked blocked units in Blocked's order, or every one when
// there are fewer) and else BlockedPages' first page; failures' read of
// the failed roots runs beside it.
func (g *Reader) incidentsOfGroups(ctx context.Context, sr state.StuckReader, lin *gatedLineage, failures *failuresRead, counter *reachCounter,
	groups []state.StuckGroup, traced []BlockedUnit) (*IncidentReport, error) {
	blocked := []state.UnitStatus{state.Blocked}
	if traced == nil {
		err := g.pagesOf(ctx, sr, lin, counter, BlockedFilter{}, blocked, groups, MaxTracedBlocked, func(p StuckPage) error {
			traced = p.Units
			return errTracedEnough
		})
		if err != nil && !errors.Is(err, errTracedEnough) {
			return nil, err
		}
	}
	tracedIn := make(map[string]int, len(traced))
	tracedAt := make(map[string]bool, len(traced))
	for _, bu := range traced {
		tracedIn[bu.Model+"\x00"+bu.Reason]++
		tracedAt[bu.Model+"\x00"+bu.Window.String()] = true
	}
	rest := func(fn func(heldGroup) error) error {
		for _, gr := range groups {
			// The page and the groups are not one snapshot: a group can
			// have lost units the page still has.
			n := gr.Units - tracedIn[gr.Model+"\x00"+gr.Reason]
			if n <= 0 {
				continue
			}
			exact := func() (time.Time, error) {
				var since time.Time
				err := stuckUnitsOf(ctx, sr, g.Env.Suffix, gr.Model, blocked, func(u state.Unit) error {
					if u.BlockedReason == gr.Reason && !tracedAt[u.Model+"\x00"+u.Window.String()] {
						since = earliest(since, u.UpdatedAt)
					}
					return nil
				})
				return since, err
			}
			if err := fn(heldGroup{model: gr.Model, reason: gr.Reason, units: n, changed: gr.Changed, exact: exact}); err != nil {
				return err
			}
		}
		return nil
	}
	return g.incidents(ctx, failures, counter, traced, rest)
}

// TriageFirst is the Blocked view's load in one pass: TriagePages' first
// page of at most limit units, and the incidents report (Incidents), from
// one grouped read and one set of window indexes instead of one each. When
// the page holds the first MaxTracedBlocked blocked units (or the whole
// queue) they are the ones the report traces — Triage's order restricted
// to blocked units is Blocked's — so the store is not paged a second time.
func (g *Reader) TriageFirst(ctx context.Context, limit int) (StuckPage, *IncidentReport, error) {
	var page StuckPage
	first := func(p StuckPage) error {
		page = p
		return errTracedEnough
	}
	sr, ok := g.Store.(state.StuckReader)
	if !ok {
		if err := g.TriagePages(ctx, BlockedFilter{}, limit, first); err != nil && !errors.Is(err, errTracedEnough) {
			return StuckPage{}, nil, err
		}
		rep, err := g.Incidents(ctx)
		return page, rep, err
	}
	if limit < 1 {
		return StuckPage{}, nil, fmt.Errorf("a page of %d units", limit)
	}
	lin, err := g.gatedLineage(ctx)
	if err != nil {
		return StuckPage{}, nil, err
	}
	counts, err := g.statusCounts(ctx)
	if err != nil {
		return StuckPage{}, nil, err
	}
	failures := g.failuresAhead(ctx, lin, counts)
	defer failures.abandon()
	both := []state.UnitStatus{state.Failed, state.Blocked}
	groups, err := sr.StuckGroups(ctx, g.Env.Suffix, both)
	if err != nil {
		return StuckPage{}, nil, fmt.Errorf("reading the %s units: %w", joinStatuses(both), err)
	}
	counter := newReachCounter(g, lin, outstandingStatuses)
	counter.windows = sr
	if err := g.pagesOf(ctx, sr, lin, counter, BlockedFilter{}, both, groups, limit, first); err != nil && !errors.Is(err, errTracedEnough) {
		return StuckPage{}, nil, err
	}
	var blockedGroups []state.StuckGroup
	for _, gr := range groups {
		if gr.Status == state.Blocked {
			blockedGroups = append(blockedGroups, gr)
		}
	}
	var traced []BlockedUnit
	for _, u := range page.Units {
		if u.Status == state.Blocked && len(traced) < MaxTracedBlocked {
			traced = append(traced, u)
		}
	}
	if len(traced) < MaxTracedBlocked && len(page.Units) == limit {
		traced = nil // more blocked units may follow the page: page them
	} else if traced == nil {
		traced = []BlockedUnit{} // none is blocked
	}
	rep, err := g.incidentsOfGroups(ctx, sr, lin, failures, counter, blockedGroups, traced)
	return page, rep, err
}
