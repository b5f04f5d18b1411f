package engine

import (
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// TestConfirmedTorchOnAFreshStoreRuns: the CLI confirms a torch's plan
// before the run registers the spec; that the registration is written
// first is not a change in the store, so the run goes ahead.
func TestConfirmedTorchOnAFreshStoreRuns(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		req := RunRequest{Mode: spec.Torch, Window: firstDay()}
		confirmed, err := e.Plan(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		req.Confirmed = confirmed
		if _, err := e.Run(t.Context(), req, &fakeExec{}, nil); err != nil {
			t.Fatalf("fresh store torch, confirmed: %v", err)
		}
	})
}

// TestConfirmedTorchAfterAnEditRuns: the same after the model's command was
// edited (its registration changes when the run registers the spec).
func TestConfirmedTorchAfterAnEditRuns(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		if _, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		e2 := runEngine(t, s, strings.Replace(chainSpec, `["true"]`, `["true", "x"]`, 1))
		req := RunRequest{Mode: spec.Torch, Window: firstDay(), Models: []string{"raw.orders"}}
		confirmed, err := e2.Plan(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		req.Confirmed = confirmed
		if _, err := e2.Run(t.Context(), req, &fakeExec{}, nil); err != nil {
			t.Fatalf("torch after editing the command, confirmed: %v", err)
		}
	})
}
