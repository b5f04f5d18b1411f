package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// UnderWay reports whether ug, the unsatisfied gate of one unit of m, waits
// only on upstream work that is under way, and if so the reason it waits.
//
// Blocked is for what will not come by itself: a failure, a range no one is
// loading, staleness, an outdated row, an after: edge. A unit whose missing
// upstream windows are being loaded right now is not blocked: marking it so
// would leave it blocked for a reason that is gone a minute later (workers
// sharing a store with a run gated the days of a daily model while the hours
// under them were still running, and all 90 days ended blocked although
// every hour was applied). Such a unit waits: it goes back to pending and is
// judged again once that work is done, by a worker or a run alike.
//
// Work is under way over a missing range when the upstream's units cover it
// all and each is running (or was applied after the gate read the
// upstream), or pending when claimsPending says the caller
// claims the upstream's pending units itself (a worker takes every pending
// unit of its spec's models; a run loads only its plan, whose upstream tasks
// have ended before this unit's task starts, so for a run pending upstream
// work is no one's). An EXACT contract needs one unit at exactly the
// missing window. A running unit whose worker died is released to pending
// when its lease expires, so a wait on it ends.
func (g *Reader) UnderWay(ctx context.Context, m *spec.Model, ug UnitGate, claimsPending func(model string) bool) (string, bool, error) {
	if ug.Satisfied || ug.Err != nil || ug.AfterHeld {
		return "", false, nil
	}
	var reasons []string
	for _, v := range ug.Verdicts {
		if v.Satisfied || v.Skipped {
			continue
		}
		if v.Err != nil || v.Stale || len(v.Outdated) > 0 {
			return "", false, nil
		}
		ranges := v.Missing
		if len(ranges) == 0 {
			// A timeless upstream not applied: its one existence row.
			if g.Spec == nil {
				return "", false, nil
			}
			if um := g.Spec.Model(v.Upstream); um == nil || um.Temporality != spec.Timeless {
				return "", false, nil
			}
			ranges = []state.Window{{}}
		}
		// An applied unit in a missing range was applied since the gate
		// read the upstream: work done, which covers its part too.
		statuses := []state.UnitStatus{state.Running, state.Applied}
		if claimsPending != nil && claimsPending(v.Upstream) {
			statuses = append(statuses, state.Pending)
		}
		var work workCount
		for _, r := range ranges {
			ok, err := g.workCovers(ctx, v.Upstream, r, v.Level == spec.Exact, statuses, &work)
			if err != nil || !ok {
				return "", false, err
			}
		}
		reasons = append(reasons, fmt.Sprintf("%s (%s): waiting on %s", v.Upstream, v.Level, work))
	}
	return strings.Join(reasons, "; "), len(reasons) > 0, nil
}

// workCount counts the upstream units a waiting unit waits on.
type workCount struct{ running, pending int }

func (c workCount) String() string {
	var parts []string
	if c.running > 0 {
		parts = append(parts, fmt.Sprintf("%d running", c.running))
	}
	if c.pending > 0 {
		parts = append(parts, fmt.Sprintf("%d pending", c.pending))
	}
	if len(parts) == 0 {
		return "units applied since the gate read them" // a race the next judgement settles
	}
	return strings.Join(parts, " and ") + " unit(s) under way"
}

// workCovers reports whether units of model in statuses cover r with no gap
// (exact: one of them is r itself; r zero: any unit, the existence row of a
// timeless model), counting them into work.
func (g *Reader) workCovers(ctx context.Context, model string, r state.Window, exact bool, statuses []state.UnitStatus, work *workCount) (bool, error) {
	cursor, covered := r.Since, false
	err := g.Store.ScanUnits(ctx, state.UnitQuery{Env: g.Env.Suffix, Model: model, Window: r, Statuses: statuses}, func(u state.Unit) error {
		switch {
		case r.Since.IsZero() && r.Until.IsZero():
			covered = true
		case exact:
			covered = covered || u.Window.Equal(r)
		case u.Window.Since.After(cursor):
			return errStop // a gap no work in flight covers
		default:
			cursor = state.Later(cursor, u.Window.Until)
			covered = !cursor.Before(r.Until)
		}
		switch u.Status {
		case state.Running:
			work.running++
		case state.Pending:
			work.pending++
		}
		return nil
	})
	if errors.Is(err, errStop) || errors.Is(err, state.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the units of %s under way: %w", model, err)
	}
	return covered, nil
}
