package postgres

import (
	"testing"

	"github.com/bollhav/bollhav/state"
)

// The schema itself refuses what must never be stored, whoever writes it: a
// bug in the store, an operator's hand-written UPDATE, a future release.
// These tests go around the Store and write SQL directly.

// constraintOf runs sql and returns the violated constraint, "" when the
// statement succeeded.
func constraintOf(t *testing.T, s *Store, sql string, args ...any) string {
	t.Helper()
	_, err := s.pool.Exec(t.Context(), s.sql(sql), args...)
	if err == nil {
		return ""
	}
	var name string
	if e := pgErr(err); e != nil {
		name = e.ConstraintName
	}
	if name == "" {
		t.Fatalf("%s: %v, want a constraint violation", sql, err)
	}
	return name
}

func registerFlex(t *testing.T, s *Store, names ...string) {
	t.Helper()
	var ms []state.ModelRecord
	for _, n := range names {
		ms = append(ms, state.ModelRecord{Name: n, Temporality: "temporal", Flexibility: "flex", Interval: "1h", Start: t0})
	}
	if _, err := s.Register(t.Context(), "", ms, nil, at(0)); err != nil {
		t.Fatal(err)
	}
}

// TestExclusionRefusesOverlappingRunning: two running units of one flexible
// model with overlapping windows cannot both be stored, while units that
// only touch, or belong to another model, can.
func TestExclusionRefusesOverlappingRunning(t *testing.T) {
	s, _ := openTest(t, Options{})
	registerFlex(t, s, "f", "g")
	for _, m := range []string{"f", "g"} {
		if _, err := s.Prefill(t.Context(), state.PrefillRequest{Model: m, Windows: []state.Window{state.MustWindow(at(0), at(2)), state.MustWindow(at(1), at(3)), state.MustWindow(at(2), at(4))}, Now: at(0)}); err != nil {
			t.Fatal(err)
		}
	}
	run := `UPDATE {schema}.units SET status = 'running', lease_until = $4
		WHERE model = $1 AND since = $2 AND until = $3`
	lease := at(100)
	if c := constraintOf(t, s, run, "f", at(0), at(2), lease); c != "" {
		t.Fatalf("first running unit refused by %s", c)
	}
	if c := constraintOf(t, s, run, "f", at(1), at(3), lease); c != "units_running_no_overlap" {
		t.Errorf("overlapping running unit: violated %q, want units_running_no_overlap", c)
	}
	if c := constraintOf(t, s, run, "f", at(2), at(4), lease); c != "" {
		t.Errorf("a running unit that only touches [0h,2h) was refused by %s", c)
	}
	if c := constraintOf(t, s, run, "g", at(1), at(3), lease); c != "" {
		t.Errorf("an overlapping running unit of another model was refused by %s", c)
	}
	// Fixed models keep one unit per grid window and are not constrained.
	if c := constraintOf(t, s, `UPDATE {schema}.units SET flexible = false, status = 'running', lease_until = $2 WHERE model = $1`, "g", lease); c != "" {
		t.Errorf("overlapping running units of a fixed model were refused by %s", c)
	}
}

// TestEmptyWindowRefused: an empty range overlaps nothing, so it would slip
// past && and the exclusion constraint; the table refuses it.
func TestEmptyWindowRefused(t *testing.T) {
	s, _ := openTest(t, Options{})
	registerFlex(t, s, "f")
	insert := `INSERT INTO {schema}.units (env, model, flexible, since, until, status, updated_at)
		VALUES ('', 'f', true, $1, $2, 'pending', now())`
	if c := constraintOf(t, s, insert, at(1), at(1)); c != "units_span_not_empty" {
		t.Errorf("empty window: violated %q, want units_span_not_empty", c)
	}
	if c := constraintOf(t, s, insert, at(1), nil); c != "units_bounds_together" {
		t.Errorf("window without an end: violated %q, want units_bounds_together", c)
	}
	// The existence row, NULL bounds, is one per model.
	if c := constraintOf(t, s, insert, nil, nil); c != "" {
		t.Fatalf("existence row refused by %s", c)
	}
	if c := constraintOf(t, s, insert, nil, nil); c != "units_existence_key" {
		t.Errorf("second existence row: violated %q, want units_existence_key", c)
	}
	if c := constraintOf(t, s, insert, at(1), at(2)); c != "" {
		t.Fatalf("unit refused by %s", c)
	}
	if c := constraintOf(t, s, insert, at(1), at(2)); c != "units_window_key" {
		t.Errorf("second unit of one window: violated %q, want units_window_key", c)
	}
}

// TestLeaseAndAppliedAtFollowStatus: a running unit always has a lease end
// (or ReleaseExpired could never free it), an applied one always has
// applied_at (or freshness could not be judged).
func TestLeaseAndAppliedAtFollowStatus(t *testing.T) {
	s, _ := openTest(t, Options{})
	registerFlex(t, s, "f")
	if _, err := s.Prefill(t.Context(), state.PrefillRequest{Model: "f", Windows: []state.Window{state.MustWindow(at(0), at(1))}, Now: at(0)}); err != nil {
		t.Fatal(err)
	}
	if c := constraintOf(t, s, `UPDATE {schema}.units SET status = 'running'`); c != "units_lease" {
		t.Errorf("running without a lease: violated %q, want units_lease", c)
	}
	if c := constraintOf(t, s, `UPDATE {schema}.units SET status = 'applied'`); c != "units_applied_at" {
		t.Errorf("applied without applied_at: violated %q, want units_applied_at", c)
	}
	if c := constraintOf(t, s, `UPDATE {schema}.units SET status = 'done'`); c != "units_status_known" {
		t.Errorf("unknown status: violated %q, want units_status_known", c)
	}
}
