package gate_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// The gate's tests read state the factory seeds (enginetest): the named
// fixtures stand for what real runs leave, and engine's
// factory_matches_run_test proves they do.

var t0 = enginetest.T0

func hours(a, b int) state.Window { return enginetest.Hours(a, b) }
func days(a, b int) state.Window  { return enginetest.Days(a, b) }

// reader is a gate reader over w's store and spec at its clock.
func reader(w *enginetest.World) *gate.Reader {
	return &gate.Reader{Store: w.Store, Spec: w.Spec, Now: w.Clock()}
}

// lineage seeds enginetest.Lineage (the why lineage: raw.orders 05 and 07
// failed, eight units blocked behind them) and reads it.
func lineage(t *testing.T, s state.Store) *gate.Reader {
	t.Helper()
	return reader(enginetest.Lineage.Seed(t, s))
}

// at is a clock fixed at t.
func at(t time.Time) func() time.Time { return func() time.Time { return t } }

// generated seeds s with a generated project of 60 models and about units
// units (gen's seed 5) and is a gate reader over it at gen.AsOf.
func generated(t *testing.T, s state.Store, units int) *gate.Reader {
	t.Helper()
	sp, _, err := gen.Seed(t.Context(), s, "", gen.Config{Models: 60, Units: units, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	return &gate.Reader{Store: s, Spec: sp, Now: at(gen.AsOf)}
}

// mark moves model's units in w to status as an operator's mark does
// (engine.Mark): to applied from pending, blocked or failed with applied_at
// now, to pending from applied, blocked or failed.
func mark(t *testing.T, s state.Store, model string, w state.Window, status state.UnitStatus, now time.Time) int {
	t.Helper()
	from := []state.UnitStatus{state.Pending, state.Blocked, state.Failed}
	if status == state.Pending {
		from = []state.UnitStatus{state.Applied, state.Blocked, state.Failed}
	}
	n, err := s.SetStatus(t.Context(), state.StatusChange{Model: model, Window: w, From: from, To: status, AppliedAt: now, Now: now})
	if err != nil {
		t.Fatalf("mark %s %s %s: %v", model, w, status, err)
	}
	return n
}

func windowsEqual(a, b []state.Window) bool {
	return slices.EqualFunc(a, b, func(x, y state.Window) bool { return x.Equal(y) })
}

func expectStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

// storeText is everything a read must leave alone: every model's
// registration and units, and the change feed's end.
func storeText(t *testing.T, s state.Store) string {
	t.Helper()
	var b strings.Builder
	for _, r := range enginetest.Models(t, s) {
		fmt.Fprintf(&b, "%s %s %s\n", r.Name, r.Interval, r.ContentHash)
		enginetest.EachUnit(t, s, state.UnitQuery{Model: r.Name}, func(u state.Unit) {
			fmt.Fprintf(&b, "  %s %s %q %q\n", u.Window, u.Status, u.BlockedReason, u.Error)
		})
	}
	seq, err := state.LatestSeq(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "seq %d\n", seq)
	return b.String()
}

// allApplied is enginetest.FailedHourSpec with every unit of 2026-01-01
// applied: raw.orders' 24 hours and mart.daily's day.
func allApplied(t *testing.T, s state.Store) *gate.Reader {
	t.Helper()
	sp := enginetest.RegisterYAML(t, s, enginetest.FailedHourSpec, t0)
	now := t0.Add(24 * time.Hour)
	us := []enginetest.UnitOpts{{Model: "mart.daily", Window: days(0, 1), Status: state.Applied, At: now}}
	for h := range 24 {
		us = append(us, enginetest.UnitOpts{Model: "raw.orders", Window: hours(h, h+1), Status: state.Applied, At: now})
	}
	enginetest.Units(t, s, us...)
	return &gate.Reader{Store: s, Spec: sp, Now: at(now)}
}
