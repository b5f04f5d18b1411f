package engine

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// builtOnSpec: core.daily reads raw.orders' hours of its day, mart.total
// every core.daily day through its own, mart.ok only needs raw.orders
// registered (EXISTS reads no data).
const builtOnSpec = `models:
  - name: raw.orders
    pipeline: shop
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["./load.sh", "v1"]}
  - name: core.daily
    pipeline: shop
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: raw.orders, contract: encapsulate}]
    run: {command: ["./daily.sh"]}
  - name: mart.total
    pipeline: shop
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: core.daily, contract: through}]
    run: {command: ["./total.sh"]}
  - name: mart.ok
    pipeline: shop
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: raw.orders, contract: exists}]
    run: {command: ["./ok.sh"]}
`

// builtOnWorld runs day one under raw.orders' v1 and day two under v2:
// raw.orders' first 24 hours are outdated, core.daily's day one is built
// on them, and mart.total's two days are built on core.daily's day one
// (THROUGH reads every day before its own).
func builtOnWorld(t *testing.T, s state.Store) *Engine {
	t.Helper()
	e := runEngine(t, s, builtOnSpec)
	if _, err := e.Run(t.Context(), RunRequest{Window: ptrWin(days(0, 1))}, &fakeExec{}, nil); err != nil {
		t.Fatal(err)
	}
	e.spec = mustParse(t, strings.Replace(builtOnSpec, `"v1"`, `"v2"`, 1))
	if _, err := e.Run(t.Context(), RunRequest{Window: ptrWin(days(1, 2))}, &fakeExec{}, nil); err != nil {
		t.Fatal(err)
	}
	return e
}

func windowsText(ws []state.Window) string {
	var parts []string
	for _, w := range ws {
		parts = append(parts, w.String())
	}
	return strings.Join(parts, " ")
}

func builtOnText(mt *ModelTrace) string {
	if mt == nil {
		return ""
	}
	var parts []string
	for _, b := range mt.BuiltOn {
		var ups []string
		for _, u := range b.Upstreams {
			ups = append(ups, u.Model+" "+windowsText(u.Windows))
		}
		parts = append(parts, b.Window.String()+" on "+strings.Join(ups, ", "))
	}
	return strings.Join(parts, "; ")
}

// Built on outdated follows the contract's reach through the lineage:
// core.daily's day one (ENCAPSULATE over the outdated hours), not its day
// two; both of mart.total's days (THROUGH reaches core.daily's day one);
// nothing of mart.ok (EXISTS reads no data).
func TestBuiltOnOutdatedFollowsTheReach(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := builtOnWorld(t, s)
		tr, err := e.TraceOutdated(t.Context(), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.Of("raw.orders"); got == nil || len(got.Outdated) != 24 || !got.Outdated[0].Equal(hours(0, 1)) || len(got.BuiltOn) != 0 {
			t.Errorf("raw.orders: %+v; want its first 24 hours outdated", got)
		}
		d0, d1 := days(0, 1).String(), days(1, 2).String()
		if got, want := builtOnText(tr.Of("core.daily")), d0+" on raw.orders "+d0; got != want {
			t.Errorf("core.daily built on outdated: %q, want %q", got, want)
		}
		if got, want := builtOnText(tr.Of("mart.total")), d0+" on core.daily "+d0+"; "+d1+" on core.daily "+d0; got != want {
			t.Errorf("mart.total built on outdated: %q, want %q", got, want)
		}
		if tr.Of("mart.ok") != nil || tr.Of("core.daily").Outdated != nil {
			t.Errorf("mart.ok %+v, core.daily's own outdated %v: want neither", tr.Of("mart.ok"), tr.Of("core.daily").Outdated)
		}
		// One model's view reads the same, and why names the upstream.
		mt, err := e.BuiltOnOutdated(t.Context(), "mart.total")
		if err != nil || builtOnText(mt) != builtOnText(tr.Of("mart.total")) {
			t.Errorf("BuiltOnOutdated(mart.total) = %q, %v", builtOnText(mt), err)
		}
		r, err := e.Why(t.Context(), "core.daily", t0)
		if err != nil {
			t.Fatal(err)
		}
		if r.Definition != DefinitionCurrent || len(r.BuiltOnOutdated) != 1 || r.BuiltOnOutdated[0].Model != "raw.orders" ||
			windowsText(r.BuiltOnOutdated[0].Windows) != d0 {
			t.Errorf("why core.daily day one: definition %q, built on %+v", r.Definition, r.BuiltOnOutdated)
		}
		if r, err := e.Why(t.Context(), "core.daily", t0.Add(25*time.Hour)); err != nil || len(r.BuiltOnOutdated) != 0 {
			t.Errorf("why core.daily day two: built on %+v, %v; want none", r, err)
		}
	})
}

// plan --outdated lists the outdated windows by model; --downstream adds
// the windows built on them, model by model with counts, and run rebuilds
// exactly those, after which nothing is outdated or built on outdated.
func TestOutdatedDownstreamRebuilds(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		e := builtOnWorld(t, s)
		summary := func(p *Plan) string {
			var parts []string
			for _, mp := range p.Models {
				parts = append(parts, mp.Model+" "+strconv.Itoa(mp.OutdatedUnits)+"+"+strconv.Itoa(mp.BuiltOnOutdated))
			}
			return strings.Join(parts, ", ")
		}
		p, err := e.Plan(ctx, RunRequest{Outdated: true})
		if err != nil || summary(p) != "raw.orders 24+0" {
			t.Fatalf("plan --outdated = %q, %v; want raw.orders' 24", summary(p), err)
		}
		p, err = e.Plan(ctx, RunRequest{Outdated: true, Downstream: true})
		if err != nil || summary(p) != "raw.orders 24+0, core.daily 0+1, mart.total 0+2" {
			t.Fatalf("plan --outdated --downstream = %q, %v", summary(p), err)
		}
		if mp := modelPlan(t, p, "mart.total"); !windowsEqual(mp.Reset.List(), []state.Window{days(0, 1), days(1, 2)}) {
			t.Errorf("mart.total resets %s", fmtWindows(mp.Reset.List()))
		}
		if p, err := e.Plan(ctx, RunRequest{Outdated: true, Downstream: true, Models: []string{"core.daily"}}); err != nil || summary(p) != "core.daily 0+0" {
			t.Errorf("plan --outdated core.daily --downstream = %q, %v; want core.daily alone, with nothing (it has no outdated unit)", summary(p), err)
		}
		exec := &fakeExec{}
		res, err := e.Run(ctx, RunRequest{Outdated: true, Downstream: true}, exec, nil)
		if err != nil || res.Failed() {
			t.Fatalf("run --outdated --downstream: %v %+v", err, res)
		}
		if exec.count("raw.orders") != 24 || exec.count("core.daily") != 1 || exec.count("mart.total") != 2 || exec.count("mart.ok") != 0 {
			t.Errorf("run --outdated --downstream ran %v", exec.calls)
		}
		tr, err := e.TraceOutdated(ctx, nil, nil)
		if err != nil || len(tr.Models) != 0 {
			t.Errorf("after the rebuild the trace is %+v, %v; want empty", tr, err)
		}
		for _, m := range []string{"raw.orders", "core.daily", "mart.total"} {
			if st := statusOf(t, e, m); st.Outdated != 0 || st.Counts[state.Applied] == 0 || st.Counts[state.Pending]+st.Counts[state.Blocked] != 0 {
				t.Errorf("%s after the rebuild: %+v", m, st.Counts)
			}
		}
	})
}
