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
	blocked := []state.UnitStatus{state.Blocked}
	groups, err := sr.StuckGroups(ctx, g.Env.Suffix, blocked)
	if err != nil {
		return nil, fmt.Errorf("reading the blocked units: %w", err)
	}
	counter.windows = sr
	var traced []BlockedUnit
	err = g.pagesOf(ctx, sr, lin, counter, BlockedFilter{}, blocked, groups, MaxTracedBlocked, func(p StuckPage) error {
		traced = p.Units
		return errTracedEnough
	})
	if err != nil && !errors.Is(err, errTracedEnough) {
		return nil, err
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
	return g.incidents(ctx, lin, counts, counter, traced, rest)
}
