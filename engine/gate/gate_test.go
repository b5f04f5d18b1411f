package gate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func hours(a, b int) state.Window {
	return state.MustWindow(t0.Add(time.Duration(a)*time.Hour), t0.Add(time.Duration(b)*time.Hour))
}

func days(a, b int) state.Window { return hours(24*a, 24*b) }

func ptr[T any](v T) *T { return &v }

// applied builds applied rows, all loaded at the given time.
func applied(at time.Time, ws ...state.Window) []AppliedRow {
	rows := make([]AppliedRow, len(ws))
	for i, w := range ws {
		rows[i] = AppliedRow{Window: w, AppliedAt: at}
	}
	return rows
}

// hourlyRows returns applied hourly rows [a, a+1) … [b-1, b).
func hourlyRows(at time.Time, a, b int) []AppliedRow {
	var rows []AppliedRow
	for h := a; h < b; h++ {
		rows = append(rows, AppliedRow{Window: hours(h, h+1), AppliedAt: at})
	}
	return rows
}

func fixedUp(rangeEnd time.Time, rows []AppliedRow) UpstreamState {
	return UpstreamState{Registered: true, Temporality: spec.Temporal, Flexibility: spec.Fix, Start: t0, RangeEnd: rangeEnd, Applied: rows}
}

func src(level spec.ContractLevel) spec.Source {
	return spec.Source{Name: "warehouse.orders", Kind: spec.KindModel, Model: &spec.SourceModel{}, Contract: level}
}

var now = t0.Add(30 * 24 * time.Hour)

func TestGateContracts(t *testing.T) {
	day1 := days(1, 2)
	cases := []struct {
		name      string
		level     spec.ContractLevel
		window    state.Window
		up        UpstreamState
		satisfied bool
		missing   []state.Window
	}{
		{"EXISTS/satisfied when registered, no data wait", spec.Exists, day1, fixedUp(t0, nil), true, nil},
		{"EXACT/one applied row equals my window", spec.Exact, day1, fixedUp(now, applied(t0, days(0, 1), days(1, 2))), true, nil},
		{"EXACT/a coarser row containing my window does not count", spec.Exact, day1, fixedUp(now, applied(t0, days(0, 7))), false, []state.Window{day1}},
		{"EXACT/a union of finer rows does not count", spec.Exact, day1, fixedUp(now, hourlyRows(t0, 24, 48)), false, []state.Window{day1}},
		{"ENCAPSULATE/a single coarser row that contains my window", spec.Encapsulate, day1, fixedUp(now, applied(t0, days(0, 7))), true, nil},
		{"ENCAPSULATE/the exact-grain row", spec.Encapsulate, day1, fixedUp(now, applied(t0, day1)), true, nil},
		{"ENCAPSULATE/24 hourly rows cover a daily window", spec.Encapsulate, day1, fixedUp(now, hourlyRows(t0, 24, 48)), true, nil},
		{"ENCAPSULATE/a daily upstream covers an hourly downstream", spec.Encapsulate, hours(30, 31), fixedUp(now, applied(t0, day1)), true, nil},
		{"ENCAPSULATE/a union with a hole is not gap-free", spec.Encapsulate, day1,
			fixedUp(now, append(hourlyRows(t0, 24, 30), hourlyRows(t0, 31, 48)...)), false, []state.Window{hours(30, 31)}},
		{"ENCAPSULATE/nothing outside my window can block me", spec.Encapsulate, day1,
			fixedUp(now, applied(t0, day1, days(3, 4))), true, nil},
		{"EXACT/nothing outside my window can block me", spec.Exact, day1, fixedUp(now, applied(t0, day1)), true, nil},
		{"THROUGH/a gap-free prefix up to and including my window", spec.Through, days(2, 3),
			fixedUp(now, applied(t0, days(0, 1), days(1, 2), days(2, 3))), true, nil},
		{"THROUGH/a hole anywhere before my window blocks", spec.Through, days(2, 3),
			fixedUp(now, applied(t0, days(1, 2), days(2, 3))), false, []state.Window{days(0, 1)}},
		{"THROUGH/my own window must be applied", spec.Through, days(2, 3),
			fixedUp(now, applied(t0, days(0, 1), days(1, 2))), false, []state.Window{days(2, 3)}},
		{"THROUGH/a hole after my window does not block", spec.Through, days(1, 2),
			fixedUp(now, applied(t0, days(0, 1), days(1, 2), days(3, 4))), true, nil},
		{"WHOLE/every window of the contract range applied", spec.Whole, day1,
			fixedUp(t0.Add(72*time.Hour), applied(t0, days(0, 1), days(1, 2), days(2, 3))), true, nil},
		{"WHOLE/a hole anywhere blocks, even after my window", spec.Whole, day1,
			fixedUp(t0.Add(72*time.Hour), applied(t0, days(0, 1), days(1, 2))), false, []state.Window{days(2, 3)}},
		{"EXACT on a fixed upstream of another grain blocks, it is no error", spec.Exact, day1,
			fixedUp(now, hourlyRows(t0, 0, 72)), false, []state.Window{day1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Evaluate(&c.window, src(c.level), c.up, now)
			if v.Err != nil {
				t.Fatalf("hard error %v, want a verdict", v.Err)
			}
			if v.Satisfied != c.satisfied {
				t.Errorf("satisfied = %v, want %v (reason %q)", v.Satisfied, c.satisfied, v.Reason)
			}
			if !sameWindows(v.Missing, c.missing) {
				t.Errorf("missing = %v, want %v", v.Missing, c.missing)
			}
			if c.satisfied != (v.Reason == "") {
				t.Errorf("reason %q does not match satisfied=%v", v.Reason, c.satisfied)
			}
		})
	}
}

func sameWindows(a, b []state.Window) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

func TestGateBlockedReasonNamesMissingRanges(t *testing.T) {
	w := days(1, 2)
	up := fixedUp(now, append(hourlyRows(t0, 24, 30), hourlyRows(t0, 31, 47)...))
	v := Evaluate(&w, src(spec.Encapsulate), up, now)
	want := "warehouse.orders (ENCAPSULATE): missing [2026-01-02T06:00:00Z, 2026-01-02T07:00:00Z), [2026-01-02T23:00:00Z, 2026-01-03T00:00:00Z)"
	if v.Reason != want {
		t.Errorf("reason\n got %q\nwant %q", v.Reason, want)
	}
}

// The "Fixed vs flexible upstreams" table: every level works against a fixed
// upstream; against a flexible one only EXACT is a hard error (Guard A).
func TestGateFixedVersusFlexibleMatrix(t *testing.T) {
	w := days(1, 2)
	for _, flex := range []spec.Flexibility{spec.Fix, spec.Flex} {
		for _, level := range []spec.ContractLevel{spec.Exists, spec.Exact, spec.Encapsulate, spec.Through, spec.Whole} {
			t.Run(flex.String()+"/"+level.String(), func(t *testing.T) {
				up := fixedUp(t0.Add(48*time.Hour), applied(t0, days(0, 1), days(1, 2)))
				up.Flexibility = flex
				v := Evaluate(&w, src(level), up, now)
				wantErr := flex == spec.Flex && level == spec.Exact
				if (v.Err != nil) != wantErr {
					t.Fatalf("err = %v, want error: %v", v.Err, wantErr)
				}
				if !wantErr && !v.Satisfied {
					t.Errorf("not satisfied: %s", v.Reason)
				}
			})
		}
	}
}

func TestGateGuardAExactOnFlexibleIsHardError(t *testing.T) {
	w := days(1, 2)
	up := fixedUp(now, applied(t0, w)) // even an exactly matching row
	up.Flexibility = spec.Flex
	v := Evaluate(&w, src(spec.Exact), up, now)
	var ge *Error
	if !errors.As(v.Err, &ge) || !strings.Contains(ge.Error(), "ENCAPSULATE") {
		t.Fatalf("want a Error pointing to ENCAPSULATE, got %v", v.Err)
	}
	if v.Satisfied {
		t.Error("a hard error must not be satisfied")
	}
}

func TestGateTimelessUpstream(t *testing.T) {
	w := days(1, 2)
	timeless := func(rows []AppliedRow) UpstreamState {
		return UpstreamState{Registered: true, Temporality: spec.Timeless, Applied: rows}
	}
	existence := []AppliedRow{{AppliedAt: t0}}
	for _, level := range []spec.ContractLevel{spec.Exact, spec.Encapsulate, spec.Through} {
		t.Run(level.String()+" is a hard error", func(t *testing.T) {
			v := Evaluate(&w, src(level), timeless(existence), now)
			if v.Err == nil || !strings.Contains(v.Err.Error(), "WHOLE or EXISTS") {
				t.Fatalf("want hard error suggesting WHOLE or EXISTS, got %v", v.Err)
			}
		})
	}
	t.Run("WHOLE satisfied by its one applied row", func(t *testing.T) {
		if v := Evaluate(&w, src(spec.Whole), timeless(existence), now); !v.Satisfied {
			t.Fatalf("not satisfied: %s %v", v.Reason, v.Err)
		}
	})
	t.Run("WHOLE blocks while its row is not applied", func(t *testing.T) {
		v := Evaluate(&w, src(spec.Whole), timeless(nil), now)
		if v.Satisfied || v.Err != nil || v.Reason != "warehouse.orders (WHOLE): not applied" {
			t.Fatalf("got %+v", v)
		}
	})
	t.Run("WHOLE from a timeless downstream", func(t *testing.T) {
		if v := Evaluate(nil, src(spec.Whole), timeless(existence), now); !v.Satisfied {
			t.Fatalf("not satisfied: %s %v", v.Reason, v.Err)
		}
	})
	t.Run("EXISTS satisfied by registration alone", func(t *testing.T) {
		if v := Evaluate(&w, src(spec.Exists), timeless(nil), now); !v.Satisfied {
			t.Fatalf("not satisfied: %s %v", v.Reason, v.Err)
		}
	})
}

func TestGateUnregisteredUpstreamIsHardErrorAtEveryLevel(t *testing.T) {
	w := days(1, 2)
	for _, level := range []spec.ContractLevel{spec.Exists, spec.Exact, spec.Encapsulate, spec.Through, spec.Whole} {
		v := Evaluate(&w, src(level), UpstreamState{}, now)
		if v.Err == nil || !strings.Contains(v.Err.Error(), "not registered") {
			t.Errorf("%s: want 'not registered' hard error, got %v", level, v.Err)
		}
	}
}

func TestGateWindowScopedLevelFromTimelessDownstreamIsHardError(t *testing.T) {
	v := Evaluate(nil, src(spec.Encapsulate), fixedUp(now, nil), now)
	if v.Err == nil {
		t.Fatal("want a hard error")
	}
}

func TestGateWholeOnEmptyContractRangeBlocks(t *testing.T) {
	w := days(0, 1)
	v := Evaluate(&w, src(spec.Whole), fixedUp(t0, nil), now)
	if v.Satisfied || v.Err != nil || !strings.Contains(v.Reason, "no complete window yet") {
		t.Fatalf("got %+v", v)
	}
}

func TestGateThroughWindowBeforeUpstreamStartNeverSatisfied(t *testing.T) {
	// The upstream starts on day 1; my window is day 0: its data can never exist.
	up := fixedUp(now, applied(t0, days(1, 2), days(2, 3)))
	up.Start = t0.Add(24 * time.Hour)
	w := days(0, 1)
	v := Evaluate(&w, src(spec.Through), up, now)
	if v.Satisfied || !sameWindows(v.Missing, []state.Window{days(0, 1)}) {
		t.Fatalf("got %+v", v)
	}
}

func TestFreshness(t *testing.T) {
	old, fresh := now.Add(-48*time.Hour), now.Add(-time.Hour)
	within := 24 * time.Hour
	multi := append(applied(old, days(0, 1)), applied(fresh, days(1, 2))...)
	cases := []struct {
		name   string
		level  spec.ContractLevel
		window state.Window
		scope  spec.FreshnessScope
		rows   []AppliedRow
		stale  bool
		reason string
	}{
		{"LATEST/fresh when the newest row is within", spec.Whole, days(1, 2), spec.Latest, multi, false, ""},
		{"ALL/stale when the oldest row is not within", spec.Whole, days(1, 2), spec.All, multi, true,
			"warehouse.orders (WHOLE, stale): oldest applied_at 2026-01-29T00:00:00Z is older than 1d"},
		{"LATEST/stale when even the newest is old", spec.Whole, days(1, 2), spec.Latest, applied(old, days(0, 1), days(1, 2)), true,
			"warehouse.orders (WHOLE, stale): newest applied_at 2026-01-29T00:00:00Z is older than 1d"},
		{"THROUGH/selects the prefix, so an old first day makes ALL stale", spec.Through, days(1, 2), spec.All, multi, true,
			"warehouse.orders (THROUGH, stale): oldest applied_at 2026-01-29T00:00:00Z is older than 1d"},
		{"ENCAPSULATE/selects only rows touching my window", spec.Encapsulate, days(1, 2), spec.All, multi, false, ""},
		{"EXACT/selects the exact row only", spec.Exact, days(1, 2), spec.All, multi, false, ""},
		{"EXACT/single row: LATEST and ALL agree (LATEST)", spec.Exact, days(0, 1), spec.Latest, multi, true,
			"warehouse.orders (EXACT, stale): newest applied_at 2026-01-29T00:00:00Z is older than 1d"},
		{"EXACT/single row: LATEST and ALL agree (ALL)", spec.Exact, days(0, 1), spec.All, multi, true,
			"warehouse.orders (EXACT, stale): oldest applied_at 2026-01-29T00:00:00Z is older than 1d"},
		{"ENCAPSULATE/a union of finer rows differs by scope (LATEST)", spec.Encapsulate, days(0, 2), spec.Latest, multi, false, ""},
		{"ENCAPSULATE/a union of finer rows differs by scope (ALL)", spec.Encapsulate, days(0, 2), spec.All, multi, true,
			"warehouse.orders (ENCAPSULATE, stale): oldest applied_at 2026-01-29T00:00:00Z is older than 1d"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := src(c.level)
			s.Freshness = &spec.Freshness{Within: within, Scope: c.scope}
			v := Evaluate(&c.window, s, fixedUp(t0.Add(48*time.Hour), c.rows), now)
			if v.Err != nil {
				t.Fatal(v.Err)
			}
			if v.Stale != c.stale || v.Satisfied == c.stale || v.Reason != c.reason {
				t.Errorf("got stale=%v satisfied=%v reason=%q, want stale=%v reason=%q", v.Stale, v.Satisfied, v.Reason, c.stale, c.reason)
			}
		})
	}
}

func TestFreshnessIsCheckedOnlyAfterCompleteness(t *testing.T) {
	w := days(1, 2)
	s := src(spec.Encapsulate)
	s.Freshness = &spec.Freshness{Within: time.Hour, Scope: spec.Latest}
	v := Evaluate(&w, s, fixedUp(now, nil), now)
	if v.Stale || v.Reason != "warehouse.orders (ENCAPSULATE): missing [2026-01-02T00:00:00Z, 2026-01-03T00:00:00Z)" {
		t.Fatalf("an incomplete upstream is missing, not stale: %+v", v)
	}
}

func TestFreshnessOnTimelessExistenceRow(t *testing.T) {
	s := src(spec.Whole)
	s.Freshness = &spec.Freshness{Within: time.Hour, Scope: spec.All}
	up := UpstreamState{Registered: true, Temporality: spec.Timeless, Applied: []AppliedRow{{AppliedAt: now.Add(-2 * time.Hour)}}}
	if v := Evaluate(nil, s, up, now); !v.Stale {
		t.Fatalf("a two-hour-old existence row is stale under within 1h: %+v", v)
	}
	up.Applied[0].AppliedAt = now.Add(-time.Minute)
	if v := Evaluate(nil, s, up, now); !v.Satisfied {
		t.Fatalf("fresh existence row: %+v", v)
	}
}

// The as-of clock decides staleness: the same state is fresh today and stale
// tomorrow, with no sleeping.
func TestFreshnessUsesExplicitNow(t *testing.T) {
	w := days(1, 2)
	s := src(spec.Encapsulate)
	s.Freshness = &spec.Freshness{Within: 24 * time.Hour, Scope: spec.Latest}
	up := fixedUp(now, applied(now.Add(-23*time.Hour), w))
	if v := Evaluate(&w, s, up, now); !v.Satisfied {
		t.Fatalf("fresh now: %+v", v)
	}
	if v := Evaluate(&w, s, up, now.Add(2*time.Hour)); !v.Stale {
		t.Fatalf("stale two hours later: %+v", v)
	}
}

func TestFormatWithin(t *testing.T) {
	for d, want := range map[time.Duration]string{
		24 * time.Hour: "1d", 48 * time.Hour: "2d", time.Hour: "1h", 90 * time.Minute: "1h30m",
		30 * time.Minute: "30m", 25 * time.Hour: "25h", 90 * time.Second: "1m30s",
	} {
		if got := FormatWithin(d); got != want {
			t.Errorf("FormatWithin(%v) = %q, want %q", d, got, want)
		}
	}
}
