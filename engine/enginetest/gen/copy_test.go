package gen_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/state"
)

// An empty store takes the generated project in one bulk copy; a store
// that already holds state gets it through the Store API, a transaction
// per run of units. Both must leave the same registrations, definitions,
// audit log, units (every field but the id a copy numbers in plan order)
// and kept counts and coverage, on each backend: the benchmarks measure
// the same project whichever way it was written.
func TestPopulateByCopyWritesWhatTheStoreAPIWrites(t *testing.T) {
	cfg := gen.Config{Models: 40, Units: 5000, Seed: 3}
	for _, backend := range enginetest.Backends {
		t.Run(backend, func(t *testing.T) {
			ctx := t.Context()
			copied, written := enginetest.Open(t, backend), enginetest.Open(t, backend)
			// A model of another environment: the store is no longer
			// empty, so it cannot be copied into.
			if _, _, err := gen.Seed(ctx, written, "other", gen.Config{Models: 1, Units: 10, Seed: 3}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := gen.Populate(ctx, copied, engine.Options{}, cfg); err != nil {
				t.Fatal(err)
			}
			if _, _, err := gen.Populate(ctx, written, engine.Options{}, cfg); err != nil {
				t.Fatal(err)
			}
			// Which way each was written: a copy starts an empty feed, the
			// Store API records every prefill and status change.
			if seq := latestSeq(t, copied); seq != 0 {
				t.Errorf("the empty store's feed is at seq %d after Populate: it was not filled by a copy", seq)
			}
			if seq := latestSeq(t, written); seq == 0 {
				t.Error("the store that held state has an empty feed after Populate: it was not written through the Store API")
			}
			want, got := dumpEnv(ctx, t, written), dumpEnv(ctx, t, copied)
			if len(got) != len(want) {
				t.Fatalf("the copy holds %d lines of state, the Store API %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("line %d differs:\ncopy:      %s\nStore API: %s", i, got[i], want[i])
				}
			}
		})
	}
}

func latestSeq(t *testing.T, s state.Store) int64 {
	t.Helper()
	seq, err := state.LatestSeq(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// dumpEnv lists the default environment's state as JSON lines: models,
// edges, definitions, summaries, units (ids zeroed) and the audit log.
func dumpEnv(ctx context.Context, t *testing.T, s state.Store) []string {
	t.Helper()
	var out []string
	add := func(kind string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, kind+" "+string(b))
	}
	recs, err := s.Models(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	edges, err := s.Edges(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edges {
		add("edge", e)
	}
	sums, err := s.Summaries(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range sums {
		add("summary", sum)
	}
	for _, rec := range recs {
		add("model", rec)
		defs, err := s.Definitions(ctx, "", rec.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range defs {
			add("definition", d)
		}
		err = s.ScanUnits(ctx, state.UnitQuery{Model: rec.Name}, func(u state.Unit) error {
			u.ID = 0
			add("unit", u)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	audit, err := s.AuditLog(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range audit {
		a.ID = 0
		add("audit", a)
	}
	if len(out) < cfgLines {
		t.Fatalf("the dump holds %d lines: %s", len(out), strings.Join(out, "\n"))
	}
	return out
}

// cfgLines is fewer lines than the dump of any generated project holds:
// a dump this short read nothing.
const cfgLines = 1000
