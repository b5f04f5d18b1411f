package gate

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// AppliedRow is one applied state row of an upstream: its window (zero for a
// timeless upstream's existence row) and when bollhav loaded it. It is the
// store's own row type, so the gate reads what the store returns as is.
type AppliedRow = state.AppliedRow

// UpstreamState is everything the gate reads about one gated upstream: its
// registration (shape, as the registry knows it — not as the downstream's
// spec might assume it) and its applied rows. The gate is a pure function of
// this, the downstream window and now, so it can be tested and benchmarked
// without a store.
type UpstreamState struct {
	// Registered is false when the upstream has no registration in the
	// environment the gate consults; that is a hard error, never a skip.
	Registered  bool
	Temporality spec.Temporality
	Flexibility spec.Flexibility
	// Start is the first window's since of a temporal upstream.
	Start time.Time
	// RangeEnd is the until of the upstream's contract range at now: the last
	// complete window's until, or chunking.end when set.
	RangeEnd time.Time
	// Applied holds the upstream's applied rows. Passing every applied row is
	// always correct; a caller may pass only those the level needs (touching
	// the window for EXACT and ENCAPSULATE, before its until for THROUGH).
	Applied []AppliedRow
	// Current is the upstream's current definition fingerprint ("" when
	// unknown): a require_current contract counts a row built under
	// another (known) fingerprint as not applied.
	Current string
}

// Verdict is the gate's answer for one gated upstream of one unit.
type Verdict struct {
	Upstream string
	Level    spec.ContractLevel
	// Satisfied is true when the unit may run as far as this upstream goes.
	Satisfied bool
	// Stale is true when completeness holds but freshness does not.
	Stale bool
	// Skipped is true when deactivate_for_dev trusts the upstream in a
	// suffixed run: its gate is not evaluated at all.
	Skipped bool
	// Err is a hard error (*Error): the unit fails instead of blocking.
	Err error
	// Missing lists the ranges the level needs that are not applied.
	Missing []state.Window
	// Outdated lists the ranges the level needs that are applied only
	// under an earlier definition than the upstream's current one, which
	// a require_current contract does not accept; nil otherwise.
	Outdated []state.Window
	// Newest and Oldest are the max and min applied_at of the rows the level
	// selected, when it selected any.
	Newest, Oldest *time.Time
	// Reason is this upstream's blocked_reason entry; empty when satisfied.
	Reason string
}

// Error is a gate-time hard error: a combination that can never be
// satisfied (Guard A, a window-scoped level on a timeless upstream) or a gated
// upstream that is not registered. It fails the unit loudly rather than
// leaving it blocked forever.
type Error struct {
	Upstream string
	Level    spec.ContractLevel
	Msg      string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (%s): %s", e.Upstream, e.Level, e.Msg)
}

// Evaluate checks one gated upstream for a downstream unit. window is the
// unit's window, or nil when the downstream model is timeless. The upstream's
// shape comes from its registration, so a spec that changed since cannot fool
// the gate.
func Evaluate(window *state.Window, src spec.Source, up UpstreamState, now time.Time) Verdict {
	v := Verdict{Upstream: src.Name, Level: src.Contract}
	if msg := hardMsg(window != nil, src, up); msg != "" {
		v.Err = &Error{Upstream: src.Name, Level: src.Contract, Msg: msg}
		return v
	}
	if src.Contract == spec.Exists {
		// EXISTS never inspects state: registration is the whole contract.
		v.Satisfied = true
		return v
	}
	var selected []AppliedRow
	applied, outdated := up.Applied, []AppliedRow(nil)
	if src.RequireCurrent {
		applied, outdated = splitOutdated(up.Applied, up.Current)
	}
	if up.Temporality == spec.Timeless {
		// WHOLE on a timeless upstream: its one existence row applied.
		selected = applied
		if len(selected) == 0 {
			v.Reason = fmt.Sprintf("%s (%s): not applied", src.Name, src.Contract)
			if len(outdated) > 0 {
				v.Reason = fmt.Sprintf("%s (%s): %s", src.Name, src.Contract, OutdatedText)
			}
			return v
		}
	} else {
		var need state.Window
		switch src.Contract {
		case spec.Exact:
			for _, r := range applied {
				if r.Window.Equal(*window) {
					selected = append(selected, r)
				}
			}
			if len(selected) == 0 {
				// Only a row at exactly this grain counts; a coarser
				// container or a union of finer rows does not.
				v.Missing = []state.Window{*window}
			}
		case spec.Encapsulate:
			need = *window
		case spec.Through:
			// Every upstream window up to and including mine: the prefix
			// from the upstream's start, and my whole window even when it
			// begins before the upstream does (then it can never be met).
			since := up.Start
			if window.Since.Before(since) {
				since = window.Since
			}
			need = state.Window{Since: since, Until: window.Until}
		case spec.Whole:
			if !up.RangeEnd.After(up.Start) {
				v.Reason = fmt.Sprintf("%s (%s): no complete window yet (the upstream starts %s)", src.Name, src.Contract, state.FormatTime(up.Start))
				return v
			}
			need = state.Window{Since: up.Start, Until: up.RangeEnd}
		}
		if src.Contract != spec.Exact {
			selected = touching(applied, need)
			v.Missing = coverageOf(selected).Gaps(need)
		}
		if len(v.Missing) > 0 {
			if src.Contract == spec.Exact {
				outdated = exactRows(outdated, *window) // only a row at this grain would do
			}
			v.Missing, v.Outdated = splitMissing(v.Missing, outdated)
			v.Reason = missingReason(src, v.Missing, v.Outdated)
			return v
		}
	}

	v.Newest, v.Oldest = appliedSpan(selected)
	if f := src.Freshness; f != nil {
		age, which := *v.Newest, "newest"
		if f.Scope == spec.All {
			age, which = *v.Oldest, "oldest"
		}
		if age.Before(now.Add(-f.Within)) {
			v.Stale = true
			v.Reason = fmt.Sprintf("%s (%s, stale): %s applied_at %s is older than %s",
				src.Name, src.Contract, which, state.FormatTime(age), FormatWithin(f.Within))
			return v
		}
	}
	v.Satisfied = true
	return v
}

// hardMsg is why src can never be satisfied for a unit of a downstream
// that is temporal or not (windowed), whatever the store holds: a gated
// upstream not registered, a window-scoped level on a timeless side, EXACT
// over a flexible upstream (Guard A). Empty when it can be. None of it
// reads a window or an applied row, so one check stands for every unit of
// a model (Reader.hardError).
func hardMsg(windowed bool, src spec.Source, up UpstreamState) string {
	if !up.Registered {
		return "gated upstream is not registered (register it with `bollhav apply`, or drop the contract to make it ungated)"
	}
	if !src.Contract.WindowScoped() {
		return ""
	}
	switch {
	case up.Temporality == spec.Timeless:
		return "a timeless upstream has no window to match a window-scoped level against; gate it WHOLE or EXISTS"
	case src.Contract == spec.Exact && up.Flexibility == spec.Flex:
		return "EXACT on a flexible upstream can never match: its rows are coalesced into ranges, so no exact-grain row exists (Guard A); use ENCAPSULATE"
	case !windowed:
		return "the downstream is timeless and has no window for a window-scoped level; gate it WHOLE or EXISTS"
	}
	return ""
}

// UnitGate is the gate's answer for a whole unit: one verdict per gated
// upstream in declaration order.
type UnitGate struct {
	Verdicts []Verdict
	// Satisfied is true when every gated upstream is satisfied (or skipped).
	Satisfied bool
	// BlockedReason joins the reasons of the unsatisfied upstreams with "; ".
	BlockedReason string
	// Err joins the hard errors; when set the unit fails instead of blocking.
	Err error
	// After holds the verdicts of the model's after: edges for the unit's
	// window (Reader.CachedUnit judges them; Judge does not), and
	// AfterHeld says they hold the unit back under its run condition:
	// Satisfied is then false and BlockedReason names the edges.
	After     []AfterVerdict
	AfterHeld bool
}

// Judge checks every gated upstream of model m for one unit — all of them,
// with no short-circuit, so a blocked_reason names each missing upstream.
// window is nil for a timeless model. upstreams holds the state of each gated
// upstream by source name, read from the environment RegistrationEnv names;
// a missing entry counts as not registered.
func Judge(m *spec.Model, window *state.Window, env spec.Env, upstreams map[string]UpstreamState, now time.Time) UnitGate {
	g := UnitGate{Satisfied: true}
	var reasons []string
	var errs []error
	for _, src := range m.Upstream {
		if !src.Gated() {
			continue // ungated sources are never checked
		}
		if m.GateSkipped(src, env) {
			g.Verdicts = append(g.Verdicts, Verdict{Upstream: src.Name, Level: src.Contract, Satisfied: true, Skipped: true})
			continue
		}
		v := Evaluate(window, src, upstreams[src.Name], now)
		g.Verdicts = append(g.Verdicts, v)
		switch {
		case v.Err != nil:
			errs = append(errs, v.Err)
			g.Satisfied = false
		case !v.Satisfied:
			reasons = append(reasons, v.Reason)
			g.Satisfied = false
		}
	}
	g.BlockedReason = strings.Join(reasons, "; ")
	g.Err = errors.Join(errs...)
	return g
}

// touching returns the rows that overlap w, the selection a coverage level
// (and its freshness) looks at.
func touching(rows []AppliedRow, w state.Window) []AppliedRow {
	return rowsWhere(rows, func(r AppliedRow) bool { return r.Window.Overlaps(w) })
}

// rowsWhere returns the rows for which keep holds, in order.
func rowsWhere(rows []AppliedRow, keep func(AppliedRow) bool) []AppliedRow {
	var out []AppliedRow
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func coverageOf(rows []AppliedRow) state.IntervalSet {
	ws := make([]state.Window, len(rows))
	for i, r := range rows {
		ws[i] = r.Window
	}
	return state.NewIntervalSet(ws...)
}

func appliedSpan(rows []AppliedRow) (newest, oldest *time.Time) {
	for i := range rows {
		t := rows[i].AppliedAt
		if newest == nil || t.After(*newest) {
			newest = &rows[i].AppliedAt
		}
		if oldest == nil || t.Before(*oldest) {
			oldest = &rows[i].AppliedAt
		}
	}
	return newest, oldest
}

func joinWindows(ws []state.Window) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.String()
	}
	return strings.Join(parts, ", ")
}

// FormatWithin prints a freshness threshold the way a spec writes it: whole
// days as "1d", otherwise Go's form without trailing zero units ("90m", "1h30m").
func FormatWithin(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return state.ShortDuration(d)
}
