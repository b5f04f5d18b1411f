package state

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// StuckReader is a Store that reads an environment's blocked and failed
// units where they are kept: grouped in the store, and a model's of them a
// page at a time by a stable key. What `bollhav blocked` ranks from without
// holding every stuck unit of a large platform in the process (issue 33).
// Both backends implement it; the engine falls back to ScanUnits for a
// Store that does not.
type StuckReader interface {
	// StuckGroups counts env's units of statuses (blocked, failed or both;
	// anything else is refused) by model, status and stored blocked
	// reason, in one grouped read: ordered by model, then status, then
	// reason. Each group carries the span of its units' windows (the
	// zero Window for a timeless model's existence row).
	StuckGroups(ctx context.Context, env string, statuses []UnitStatus) ([]StuckGroup, error)
	// StuckPage returns at most q.Limit units of q.Model of q.Statuses in
	// window order (since, then until) that come after q.After: keyset
	// pagination, so a page costs an index seek however deep it is, and a
	// unit that changes between two pages is neither skipped nor read
	// twice unless its own window moved. An unregistered model is
	// ErrNotFound; a limit below one is refused.
	StuckPage(ctx context.Context, q StuckPageQuery) ([]Unit, error)
	// OutstandingWindows calls fn with the window of each unit of env's
	// models that is not applied, each model's together and in window
	// order (the models in no particular order), as Unix microseconds
	// (0, 0 for a timeless model's existence row, as SweepUnit has it):
	// an index-only read of the windows what a stuck unit holds is
	// counted from, without the rest of each row, in one statement for
	// many models. An unregistered model has none.
	OutstandingWindows(ctx context.Context, env string, models []string, fn func(model string, since, until int64) error) error
	// FailingUnits calls fn with each of env's failed units and each of
	// its pending units that carries a not-before time (a failed attempt
	// waiting for its retry, or a unit released unrun to wait): what the
	// incidents report makes its failed roots of, read from partial
	// indexes in one statement however many models env has, instead of
	// every pending unit of every model that retries. Each model's units
	// come together, in window order; the models in no particular order.
	FailingUnits(ctx context.Context, env string, fn func(Unit) error) error
}

// StuckGroup is a count of one model's units of one status and blocked
// reason (empty for a failed unit, whose reason is cleared).
type StuckGroup struct {
	Model  string
	Status UnitStatus
	Reason string
	Units  int
	// Span runs from the earliest since to the latest until of the
	// group's units: every one of their windows lies inside it. Zero for
	// a timeless model.
	Span Window
	// Changed is the earliest updated_at of the group's units: how long
	// the oldest of them has been stuck, what an incident's age counts
	// from without reading each unit (issue 33).
	Changed time.Time
}

// StuckPageQuery asks for a page of a model's stuck units.
type StuckPageQuery struct {
	Env, Model string
	// Statuses are blocked, failed or both.
	Statuses []UnitStatus
	// After is the window of the last unit of the previous page; nil for
	// the first page. A timeless model's one unit has the zero window,
	// after which nothing comes.
	After *Window
	Limit int
}

// CheckStuckStatuses refuses a status list a stuck read does not take:
// empty, or naming a status other than blocked and failed. The backends
// write the statuses into their SQL as literals (a partial index is only
// read for a condition that implies its own), so the list is checked
// first.
func CheckStuckStatuses(statuses []UnitStatus) error {
	if len(statuses) == 0 {
		return fmt.Errorf("a stuck read needs blocked, failed or both")
	}
	for _, s := range statuses {
		if s != Blocked && s != Failed {
			return fmt.Errorf("a stuck read takes blocked and failed units, not %q", s)
		}
	}
	return nil
}

// StuckStatusList is statuses, checked by CheckStuckStatuses, as the SQL
// list both backends write: "'blocked', 'failed'", sorted and without
// duplicates.
func StuckStatusList(statuses []UnitStatus) (string, error) {
	if err := CheckStuckStatuses(statuses); err != nil {
		return "", err
	}
	ss := make([]string, 0, len(statuses))
	for _, s := range statuses {
		ss = append(ss, "'"+string(s)+"'")
	}
	slices.Sort(ss)
	ss = slices.Compact(ss)
	return strings.Join(ss, ", "), nil
}

// CheckStuckPage refuses a page query that cannot be answered and gives
// its statuses as StuckStatusList writes them; done reports a query
// after the zero window (a timeless model's one unit), after which
// nothing comes.
func CheckStuckPage(q StuckPageQuery) (list string, done bool, err error) {
	if q.Limit < 1 {
		return "", false, fmt.Errorf("a stuck page needs a limit of at least one, not %d", q.Limit)
	}
	list, err = StuckStatusList(q.Statuses)
	return list, err == nil && q.After != nil && q.After.IsZero(), err
}

// SortStuckGroups puts groups in StuckGroups' order: by model, status and
// reason, compared as Go compares strings. Both backends sort what they
// read with it, so a database collation cannot reorder names.
func SortStuckGroups(gs []StuckGroup) {
	slices.SortFunc(gs, func(a, b StuckGroup) int {
		return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.Status, b.Status), cmp.Compare(a.Reason, b.Reason))
	})
}
