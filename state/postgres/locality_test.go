package postgres

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/state"
)

// recorder keeps the statements the store sends.
type recorder struct {
	mu    sync.Mutex
	stmts []pgx.TraceQueryStartData
}

func (r *recorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stmts = append(r.stmts, d)
	return ctx
}

func (r *recorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// take returns the statements recorded since the last take.
func (r *recorder) take() []pgx.TraceQueryStartData {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.stmts
	r.stmts = nil
	return out
}

// buffers runs a statement under EXPLAIN (ANALYZE, BUFFERS) in a
// transaction it rolls back, and returns the pages it touched and the plan.
func buffers(t *testing.T, s *Store, d pgx.TraceQueryStartData) (int, string) {
	t.Helper()
	tx, err := s.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	var out []struct {
		Plan map[string]any
	}
	if err := tx.QueryRow(t.Context(), "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+d.SQL, d.Args...).Scan(&out); err != nil {
		t.Fatalf("EXPLAIN %s: %v", d.SQL, err)
	}
	plan, _ := json.MarshalIndent(out[0].Plan, "", " ")
	hit, _ := out[0].Plan["Shared Hit Blocks"].(float64)
	read, _ := out[0].Plan["Shared Read Blocks"].(float64)
	return int(hit + read), string(plan)
}

// TestWindowedCallsStayLocal: with a long history, what the gate, the UI and
// a window-scoped run ask about one window touches the pages of that window,
// not the model's whole history. Every statement a call sends to the units
// table is replayed under EXPLAIN (ANALYZE, BUFFERS).
func TestWindowedCallsStayLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("prefills 100,000 units")
	}
	const (
		n = 100_000 // hourly units: eleven years
		// A window's calls read a few index pages and the heap pages of
		// its units; the history is thousands of pages.
		pageBudget = 100
	)
	rec := &recorder{}
	s, _ := openTest(t, Options{tracer: rec})
	ctx := t.Context()
	if _, err := s.Register(ctx, "", []state.ModelRecord{{Name: "a", Temporality: "temporal", Flexibility: "flex", Interval: "1h", Start: t0}}, nil, at(0)); err != nil {
		t.Fatal(err)
	}
	ws := make([]state.Window, n)
	for i := range ws {
		ws[i] = state.MustWindow(at(i), at(i+1))
	}
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "a", Windows: ws, Now: at(0)}); err != nil {
		t.Fatal(err)
	}
	// The newest 1,000 hours are applied; the rest waits.
	if _, err := s.SetStatus(ctx, state.StatusChange{Model: "a", Window: state.MustWindow(at(n-1000), at(n)), From: []state.UnitStatus{state.Pending}, To: state.Applied, Now: at(n)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.pool.Exec(ctx, s.sql(`ANALYZE {schema}.units`)); err != nil {
		t.Fatal(err)
	}

	applied := state.Window{Since: at(n - 500).Add(30 * time.Minute), Until: at(n - 497)}
	pending := state.MustWindow(at(n-5000), at(n-4997))
	noop := func(state.Unit) error { return nil }
	calls := []struct {
		name string
		call func() error
	}{
		{"Applied", func() error { _, err := s.Applied(ctx, "", "a", applied); return err }},
		{"Coverage", func() error { _, err := s.Coverage(ctx, "", "a", applied); return err }},
		{"ScanUnits", func() error { return s.ScanUnits(ctx, state.UnitQuery{Model: "a", Window: pending}, noop) }},
		{"ScanUnits of every model", func() error { return s.ScanUnits(ctx, state.UnitQuery{Window: pending}, noop) }},
		{"Claim", func() error {
			_, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"a"}, Window: pending, Worker: "w", Lease: time.Minute, Limit: 10, Now: at(n)})
			return err
		}},
		{"SetStatus", func() error {
			_, err := s.SetStatus(ctx, state.StatusChange{Model: "a", Window: applied, From: []state.UnitStatus{state.Applied}, To: state.Pending, Now: at(n)})
			return err
		}},
		{"Uncover", func() error {
			_, err := s.Uncover(ctx, state.RemoveRequest{Model: "a", Window: applied, Now: at(n)})
			return err
		}},
	}
	for _, c := range calls {
		rec.take()
		if err := c.call(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, d := range rec.take() {
			if !strings.Contains(d.SQL, ".units") {
				continue
			}
			if pages, plan := buffers(t, s, d); pages > pageBudget {
				t.Errorf("%s touches %d pages, more than %d, in:\n%s\nplan: %s", c.name, pages, pageBudget, d.SQL, plan)
			}
		}
	}
}
