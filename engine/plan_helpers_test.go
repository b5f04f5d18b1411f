package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// The plan tests run on a small hand-checkable world: hourly models from
// 2026-01-01T00:00Z, evaluated at 06:30, so the contract range is
// [00:00, 06:00).
var p0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// hm is p0 plus "h:mm".
func hm(s string) time.Time {
	var h, m int
	if _, err := fmt.Sscanf(s, "%d:%d", &h, &m); err != nil {
		panic(s)
	}
	return p0.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

// win is the window "h:mm-h:mm".
func win(s string) state.Window {
	a, b, _ := strings.Cut(s, "-")
	return state.Window{Since: hm(a), Until: hm(b)}
}

func wins(ss ...string) []state.Window {
	var out []state.Window
	for _, s := range ss {
		out = append(out, win(s))
	}
	return out
}

func wp(s string) *state.Window { w := win(s); return &w }

const planSpec = `models:
  - {name: w.fixed, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: w.flex, pipeline: core, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z", flexibility: flex},
     upstream: [{name: w.fixed, contract: encapsulate}], run: {command: ["true"]}}
  - {name: w.config, pipeline: side, temporality: timeless, run: {command: ["true"]}}
`

// world is an engine on a fresh store with planSpec applied.
func world(t *testing.T, s state.Store, sp string) *Engine {
	t.Helper()
	e := New(s, mustParse(t, sp), Options{Actor: "tester", Now: func() time.Time { return hm("6:30") }})
	if _, err := e.Apply(t.Context()); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	return e
}

// seed prefills windows of model and sets each to its status.
func seed(t *testing.T, e *Engine, model string, units map[string]state.UnitStatus) {
	t.Helper()
	ctx := t.Context()
	var ws []state.Window
	for _, k := range slices.Sorted(maps.Keys(units)) {
		if k == "" {
			ws = append(ws, state.Window{})
		} else {
			ws = append(ws, win(k))
		}
	}
	if _, err := e.store.Prefill(ctx, state.PrefillRequest{Model: model, Windows: ws, Now: p0}); err != nil {
		t.Fatalf("Prefill: %v", err)
	}
	for k, st := range units {
		var w state.Window
		if k != "" {
			w = win(k)
		}
		switch st {
		case state.Pending:
		case state.Running:
			cs, err := e.store.Claim(ctx, state.ClaimRequest{Models: []string{model}, Window: w, Worker: "w1", Lease: time.Hour, Limit: 1, Now: p0})
			if err != nil || len(cs) != 1 {
				t.Fatalf("Claim %s: %v %v", k, cs, err)
			}
		default:
			if _, err := e.store.SetStatus(ctx, state.StatusChange{Model: model, Window: w, From: []state.UnitStatus{state.Pending}, To: st, Now: p0}); err != nil {
				t.Fatalf("SetStatus %s: %v", k, err)
			}
		}
	}
}

// unitRow is a unit as the tests compare it.
type unitRow struct {
	W      state.Window
	Status state.UnitStatus
}

func (u unitRow) String() string {
	if u.W.IsZero() {
		return "existence:" + string(u.Status)
	}
	return fmt.Sprintf("%s-%s:%s", u.W.Since.Format("15:04"), u.W.Until.Format("15:04"), u.Status)
}

// snapshot lists model's units, in window order.
func snapshot(t *testing.T, e *Engine, model string) []unitRow {
	t.Helper()
	var out []unitRow
	err := e.store.ScanUnits(t.Context(), state.UnitQuery{Model: model}, func(u state.Unit) error {
		out = append(out, unitRow{u.Window, u.Status})
		return nil
	})
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("ScanUnits: %v", err)
	}
	return out
}

func rowsString(rs []unitRow) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.String())
	}
	return strings.Join(s, " ")
}

// simulate is what the plan says the model's units become: Delete and
// Uncover first (uncover trims and splits, keeping status), then Reset to
// pending, then Create as pending.
func simulate(before []unitRow, mp ModelPlan) []unitRow {
	cur := slices.Clone(before)
	if mp.Delete != nil {
		cur = nil
	}
	for _, w := range mp.Uncover {
		var next []unitRow
		for _, u := range cur {
			if w.IsZero() || w.Covers(u.W) {
				continue
			}
			if !u.W.Overlaps(w) {
				next = append(next, u)
				continue
			}
			for _, part := range state.NewIntervalSet(u.W).SubtractWindow(w).Windows() {
				next = append(next, unitRow{part, u.Status})
			}
		}
		cur = next
	}
	for _, r := range mp.Reset.List() {
		for i := range cur {
			if cur[i].W.Equal(r) {
				cur[i].Status = state.Pending
			}
		}
	}
	for _, c := range mp.Create.List() {
		cur = append(cur, unitRow{c, state.Pending})
	}
	slices.SortFunc(cur, func(a, b unitRow) int {
		if c := a.W.Since.Compare(b.W.Since); c != 0 {
			return c
		}
		return a.W.Until.Compare(b.W.Until)
	})
	return cur
}

// applyAndCheck applies p and checks every planned model's units became
// exactly what the plan says, and that the Run list is exactly the pending
// units the run will claim.
func applyAndCheck(t *testing.T, e *Engine, p *Plan) {
	t.Helper()
	before := map[string][]unitRow{}
	for _, mp := range p.Models {
		before[mp.Model] = snapshot(t, e, mp.Model)
	}
	if err := e.ApplyPlan(t.Context(), p, 0); err != nil {
		t.Fatalf("ApplyPlan: %v", err)
	}
	for _, mp := range p.Models {
		want := simulate(before[mp.Model], mp)
		got := snapshot(t, e, mp.Model)
		if rowsString(got) != rowsString(want) {
			t.Errorf("%s after ApplyPlan:\n got  %s\n want %s", mp.Model, rowsString(got), rowsString(want))
		}
		var claimable []state.Window
		for _, u := range got {
			if u.Status == state.Pending && (mp.Window == nil || u.W.Overlaps(*mp.Window)) {
				claimable = append(claimable, u.W)
			}
		}
		if !windowsEqual(claimable, mp.Run.List()) {
			t.Errorf("%s: pending units the run claims %s, plan.Run %s", mp.Model, fmtWindows(claimable), fmtWindows(mp.Run.List()))
		}
	}
}

func windowsEqual(a, b []state.Window) bool {
	return slices.EqualFunc(a, b, func(x, y state.Window) bool { return x.Equal(y) })
}

func fmtWindows(ws []state.Window) string {
	var s []string
	for _, w := range ws {
		if w.IsZero() {
			s = append(s, "existence")
			continue
		}
		s = append(s, w.Since.Format("15:04")+"-"+w.Until.Format("15:04"))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// expectWindows checks one list of a plan.
func expectWindows(t *testing.T, what string, got []state.Window, want ...string) {
	t.Helper()
	if !windowsEqual(got, wins(want...)) {
		t.Errorf("%s = %s, want %s", what, fmtWindows(got), fmtWindows(wins(want...)))
	}
}

func modelPlan(t *testing.T, p *Plan, name string) ModelPlan {
	t.Helper()
	for _, mp := range p.Models {
		if mp.Model == name {
			return mp
		}
	}
	t.Fatalf("plan has no model %s: %v", name, p.ModelNames())
	return ModelPlan{}
}

// mustPlan plans req and returns the plan of its one model.
func mustPlan(t *testing.T, e *Engine, req RunRequest) (*Plan, ModelPlan) {
	t.Helper()
	p, err := e.Plan(t.Context(), req)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	if len(p.Models) != 1 {
		t.Fatalf("planned %v, want one model", p.ModelNames())
	}
	return p, p.Models[0]
}

func hasWarning(mp ModelPlan, sub string) bool {
	return slices.ContainsFunc(mp.Warnings, func(w string) bool { return strings.Contains(w, sub) })
}

// storeState is everything a refused call must leave alone: every model's
// units and registration, and the audit log's length.
func storeState(t *testing.T, e *Engine) string {
	t.Helper()
	recs, err := e.store.Models(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%s %s %s %s\n", r.Name, r.Interval, r.ContentHash, rowsString(snapshot(t, e, r.Name)))
	}
	return b.String()
}

var _ = enginetest.Each

// t0 is the first instant of the windows the engine's tests build.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// hours is the window [t0+a h, t0+b h).
func hours(a, b int) state.Window {
	return state.MustWindow(t0.Add(time.Duration(a)*time.Hour), t0.Add(time.Duration(b)*time.Hour))
}

// days is the window [t0+a d, t0+b d).
func days(a, b int) state.Window { return hours(24*a, 24*b) }
