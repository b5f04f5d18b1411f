package gate

import (
	"testing"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// withFingerprint sets fp on rows.
func withFingerprint(fp string, rows []AppliedRow) []AppliedRow {
	for i := range rows {
		rows[i].Fingerprint = fp
	}
	return rows
}

// require_current, level by level: rows built under another known
// fingerprint count as not applied and are reported apart from the truly
// missing ranges; unknown rows count; without the flag nothing changes.
func TestGateRequireCurrent(t *testing.T) {
	const cur, old = "00000000000000c1", "00000000000000e0"
	// Hours 0-24 of day 1: 0-6 outdated, 6-10 unknown, 10-20 current, 20-24 missing.
	rows := append(withFingerprint(old, hourlyRows(t0, 0, 6)), hourlyRows(t0, 6, 10)...)
	rows = append(rows, withFingerprint(cur, hourlyRows(t0, 10, 20))...)
	up := fixedUp(now, rows)
	up.Current = cur
	cases := []struct {
		name              string
		level             spec.ContractLevel
		window            state.Window
		missing, outdated []state.Window
		reason            string
	}{
		{"encapsulate over outdated and missing hours", spec.Encapsulate, days(0, 1), []state.Window{hours(20, 24)}, []state.Window{hours(0, 6)},
			"warehouse.orders (ENCAPSULATE): missing [2026-01-01T20:00:00Z, 2026-01-02T00:00:00Z); [2026-01-01T00:00:00Z, 2026-01-01T06:00:00Z) applied under an earlier definition"},
		{"encapsulate over unknown and current hours", spec.Encapsulate, hours(6, 20), nil, nil, ""},
		{"through a window after outdated hours", spec.Through, hours(12, 13), nil, []state.Window{hours(0, 6)},
			"warehouse.orders (THROUGH): [2026-01-01T00:00:00Z, 2026-01-01T06:00:00Z) applied under an earlier definition"},
		{"exact on an outdated hour", spec.Exact, hours(2, 3), nil, []state.Window{hours(2, 3)},
			"warehouse.orders (EXACT): [2026-01-01T02:00:00Z, 2026-01-01T03:00:00Z) applied under an earlier definition"},
		{"exact on a day the hours do not match", spec.Exact, days(0, 1), []state.Window{days(0, 1)}, nil,
			"warehouse.orders (EXACT): missing [2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z)"},
	}
	for _, c := range cases {
		s := src(c.level)
		s.RequireCurrent = true
		w := c.window
		v := Evaluate(&w, s, up, now)
		if v.Satisfied != (c.reason == "") || !sameWindows(v.Missing, c.missing) || !sameWindows(v.Outdated, c.outdated) || v.Reason != c.reason {
			t.Errorf("%s: satisfied %v, missing %v, outdated %v, reason %q\nwant missing %v, outdated %v, reason %q",
				c.name, v.Satisfied, v.Missing, v.Outdated, v.Reason, c.missing, c.outdated, c.reason)
		}
		s.RequireCurrent = false
		if v := Evaluate(&w, s, up, now); len(v.Outdated) != 0 {
			t.Errorf("%s without require_current: outdated %v, want none", c.name, v.Outdated)
		}
	}
	// No current fingerprint known (an upstream without a definition):
	// nothing is outdated.
	up.Current = ""
	s := src(spec.Encapsulate)
	s.RequireCurrent = true
	if v := Evaluate(ptr(hours(0, 6)), s, up, now); !v.Satisfied {
		t.Errorf("with no current fingerprint: %q; want satisfied", v.Reason)
	}

	// A timeless upstream's existence row built under another definition.
	tl := UpstreamState{Registered: true, Temporality: spec.Timeless, Current: cur,
		Applied: []AppliedRow{{AppliedAt: t0, Fingerprint: old}}}
	s = src(spec.Whole)
	s.RequireCurrent = true
	if v := Evaluate(ptr(days(0, 1)), s, tl, now); v.Satisfied || v.Reason != "warehouse.orders (WHOLE): applied under an earlier definition" {
		t.Errorf("timeless outdated: %v %q", v.Satisfied, v.Reason)
	}
}
