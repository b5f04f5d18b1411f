package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// outdatedSpec is chainSpec with a comment to edit: mart.daily reads
// raw.orders, and both run commands a test can change.
const outdatedSpec = `models:
  - name: raw.orders
    pipeline: shop
    chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}
    run: {command: ["./load.sh", "v1"], timeout: 5m} # the loader
  - name: mart.daily
    pipeline: shop
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream: [{name: raw.orders, contract: encapsulate}]
    run: {command: ["./mart.sh"]}
`

func statusOf(t *testing.T, e *Engine, model string) ModelStatus {
	t.Helper()
	all, err := e.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range all {
		if st.Name == model {
			one, err := e.ModelStatus(t.Context(), model)
			if err != nil {
				t.Fatal(err)
			}
			if one.Outdated != st.Outdated {
				t.Errorf("%s: ModelStatus says %d outdated, Status %d", model, one.Outdated, st.Outdated)
			}
			return st
		}
	}
	t.Fatalf("status has no %s", model)
	return ModelStatus{}
}

// Change a model's command → exactly its applied windows are outdated; an
// unchanged model and a change that does not touch output (a timeout, a
// comment) stay current; an operator's mark is unknown, never outdated;
// plan --outdated lists exactly them and run --outdated makes them current.
func TestOutdatedWindowsRebuilt(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		e := runEngine(t, s, outdatedSpec)
		if _, err := e.Run(ctx, RunRequest{Window: firstDay()}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		// A mark on the second day's first hours: unknown definition.
		if _, err := e.Run(ctx, RunRequest{Models: []string{"raw.orders"}, Window: ptrWin(days(1, 2)), Mode: "discover"}, &fakeExec{fail: func(string, *state.Window) error { return errors.New("down") }}, nil); err != nil {
			t.Fatal(err)
		}
		if n, err := e.Mark(ctx, "raw.orders", days(1, 2), state.Applied); err != nil || n != 24 {
			t.Fatalf("Mark = %d, %v", n, err)
		}
		if got := statusOf(t, e, "raw.orders").Outdated; got != 0 {
			t.Fatalf("unchanged spec: %d outdated, want 0", got)
		}

		// A timeout and a comment: still current.
		e.spec = mustParse(t, strings.NewReplacer("timeout: 5m", "timeout: 1h", "# the loader", "# loads orders").Replace(outdatedSpec))
		if got := statusOf(t, e, "raw.orders").Outdated; got != 0 {
			t.Errorf("a timeout and a comment changed: %d outdated, want 0", got)
		}

		// The command: exactly the 24 hours run under v1 are outdated.
		e.spec = mustParse(t, strings.Replace(outdatedSpec, `"v1"`, `"v2"`, 1))
		raw := statusOf(t, e, "raw.orders")
		if raw.Outdated != 24 || raw.Counts[state.Applied] != 48 {
			t.Errorf("after the command change: %d outdated of %d applied, want 24 of 48", raw.Outdated, raw.Counts[state.Applied])
		}
		if got := statusOf(t, e, "mart.daily").Outdated; got != 0 {
			t.Errorf("mart.daily (unchanged) has %d outdated, want 0", got)
		}
		var defs []string
		err := e.ScanUnits(ctx, "raw.orders", state.Window{}, nil, func(u state.Unit) error {
			defs = append(defs, UnitDefinition(u, raw.Fingerprint))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(strings.Join(defs, " "), DefinitionOutdated) != 24 || defs[0] != DefinitionOutdated || defs[24] != DefinitionUnknown {
			t.Errorf("unit definitions %v; want the first day outdated, the marked day unknown", defs)
		}

		p, err := e.Plan(ctx, RunRequest{Outdated: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Models) != 1 || p.Models[0].Model != "raw.orders" || p.Models[0].Reset.Len() != 24 || p.Models[0].Run.Len() != 24 ||
			!p.Models[0].Window.Equal(days(0, 1)) {
			t.Fatalf("plan --outdated = %+v; want raw.orders' 24 hours of day one", p.Models)
		}
		exec := &fakeExec{}
		res, err := e.Run(ctx, RunRequest{Outdated: true}, exec, nil)
		if err != nil || res.Failed() {
			t.Fatalf("run --outdated: %v %+v", err, res)
		}
		if exec.count("raw.orders") != 24 || exec.count("mart.daily") != 0 {
			t.Errorf("run --outdated ran %v; want the 24 outdated hours only", exec.calls)
		}
		if got := statusOf(t, e, "raw.orders"); got.Outdated != 0 || got.Counts[state.Applied] != 48 {
			t.Errorf("after run --outdated: %d outdated, %d applied; want 0 and 48", got.Outdated, got.Counts[state.Applied])
		}
		if p, err := e.Plan(ctx, RunRequest{Outdated: true}); err != nil || len(p.Models) != 0 {
			t.Errorf("plan --outdated after the rebuild = %+v, %v; want nothing", p, err)
		}
		if _, err := e.Plan(ctx, RunRequest{Outdated: true, Mode: "torch"}); err == nil || !strings.Contains(err.Error(), "bulldozer") {
			t.Errorf("--outdated with torch: %v; want a refusal naming bulldozer", err)
		}
	})
}

func ptrWin(w state.Window) *state.Window { return &w }

// hardcodedSpec: a command model reading a hardcoded source of rates.
const hardcodedSpec = `models:
  - name: core.priced
    pipeline: shop
    chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}
    upstream:
      - name: ref.rates
        hardcoded: {rows: [{cur: SEK, rate: 1}]}
    run: {command: ["./price.sh"]}
`

// A change to a hardcoded source's rows marks its reader's applied windows
// outdated; rewriting the same rows in another order of keys does not.
func TestHardcodedRowsChangeOutdatesTheReader(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, hardcodedSpec)
		if _, err := e.Run(t.Context(), RunRequest{Window: ptrWin(days(0, 2))}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		e.spec = mustParse(t, strings.Replace(hardcodedSpec, "{cur: SEK, rate: 1}", "{rate: 1, cur: SEK}", 1))
		if got := statusOf(t, e, "core.priced"); got.Outdated != 0 || got.Counts[state.Applied] != 2 {
			t.Errorf("the same rows written otherwise: %d outdated of %d, want 0 of 2", got.Outdated, got.Counts[state.Applied])
		}
		e.spec = mustParse(t, strings.Replace(hardcodedSpec, "rate: 1}", "rate: 2}", 1))
		if got := statusOf(t, e, "core.priced"); got.Outdated != 2 {
			t.Errorf("after a rate changed: %d outdated, want both days", got.Outdated)
		}
	})
}
