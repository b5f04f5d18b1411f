package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

func changesOf(t *testing.T, e *Engine, model string, at time.Time) (string, *time.Time) {
	t.Helper()
	r, err := e.Why(t.Context(), model, at)
	if err != nil {
		t.Fatal(err)
	}
	if r.Definition != DefinitionOutdated {
		t.Fatalf("why %s: definition %q, want outdated", model, r.Definition)
	}
	if r.Change == nil {
		return "<none>", nil
	}
	var parts []string
	for _, c := range r.Change.Changes {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, "; "), r.Change.ChangedAt
}

// why says what changed since an outdated unit was built, from the
// definitions registration keeps: the spec's edit before it is registered
// (no time), then with the time the new definition was registered.
func TestWhyDiffsTheEarlierDefinition(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, outdatedSpec)
		if _, err := e.Run(t.Context(), RunRequest{Window: firstDay(), Models: []string{"raw.orders"}}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		e.spec = mustParse(t, strings.Replace(outdatedSpec, `"v1"`, `"v2"`, 1))
		got, at := changesOf(t, e, "raw.orders", t0)
		if got != "run.command: ./load.sh v1 → ./load.sh v2" || at != nil {
			t.Errorf("before apply: %q at %v; want the command, not registered yet", got, at)
		}
		applied := t0.Add(50 * time.Hour)
		e.opts.Now = func() time.Time { return applied }
		if _, err := e.Apply(t.Context()); err != nil {
			t.Fatal(err)
		}
		got, at = changesOf(t, e, "raw.orders", t0)
		if got != "run.command: ./load.sh v1 → ./load.sh v2" || at == nil || !at.Equal(applied) {
			t.Errorf("after apply: %q at %v; want the command, changed at %s", got, at, applied)
		}
		// A store-only engine reads both definitions from the store.
		bare := New(s, nil, Options{Now: e.opts.Now})
		if got, _ := changesOf(t, bare, "raw.orders", t0); got != "run.command: ./load.sh v1 → ./load.sh v2" {
			t.Errorf("store-only: %q", got)
		}
	})
}

// A registration written before definitions were kept (no fingerprint
// given to Register) is kept, first seen when it was registered, when the
// next apply replaces it; a unit built under a definition never kept has
// no change to show.
func TestApplyKeepsTheReplacedRegistration(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		ctx := t.Context()
		e := runEngine(t, s, outdatedSpec)
		old := modelRecord("", e.spec.Model("raw.orders"), state.Interval{})
		fp := old.Fingerprint
		old.Fingerprint = "" // as an earlier bollhav registered it
		registeredAt := t0.Add(time.Hour)
		if _, err := s.Register(ctx, "", []state.ModelRecord{old}, nil, registeredAt); err != nil {
			t.Fatal(err)
		}
		if ds, err := s.Definitions(ctx, "", "raw.orders"); err != nil || len(ds) != 0 {
			t.Fatalf("history before the apply: %v, %v; want none", ds, err)
		}
		e.spec = mustParse(t, strings.Replace(outdatedSpec, `"v1"`, `"v2"`, 1))
		if _, err := e.Apply(ctx); err != nil {
			t.Fatal(err)
		}
		ds, err := s.Definitions(ctx, "", "raw.orders")
		if err != nil || len(ds) != 2 || ds[0].Fingerprint != fp || !ds[0].FirstSeen.Equal(registeredAt) {
			t.Fatalf("history after the apply: %+v, %v; want v1 first seen at %s, then v2", ds, err, registeredAt)
		}
		// Units applied under a definition the store never kept.
		if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "raw.orders", Windows: []state.Window{hours(0, 1)}, Now: t0}); err != nil {
			t.Fatal(err)
		}
		cs, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"raw.orders"}, Worker: "w", Lease: time.Hour, Limit: 1, Now: t0})
		if err != nil || len(cs) != 1 {
			t.Fatal(cs, err)
		}
		if err := s.Complete(ctx, cs[0], state.Outcome{Status: state.Applied, At: t0, Fingerprint: "00000000000000e0"}); err != nil {
			t.Fatal(err)
		}
		if got, _ := changesOf(t, e, "raw.orders", t0); got != "<none>" {
			t.Errorf("a definition never kept: %q, want no change", got)
		}
	})
}
