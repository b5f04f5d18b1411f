package sqlite

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func hours(from, to int) []state.Window {
	var out []state.Window
	for h := from; h < to; h++ {
		out = append(out, state.MustWindow(t0.Add(time.Duration(h)*time.Hour), t0.Add(time.Duration(h+1)*time.Hour)))
	}
	return out
}

func model(name, flex string) state.ModelRecord {
	return state.ModelRecord{Name: name, Temporality: "temporal", Flexibility: flex, Interval: "1h", Timezone: "UTC", Start: t0, Definition: []byte(`{}`), ContentHash: name}
}

// TestOpenCreatesDirectory: the default DSN points into .bollhav/ beside
// the spec, which does not exist on a first run.
func TestOpenCreatesDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "project", ".bollhav", "state.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the store file was not created: %v", err)
	}
	var mode string
	if err := s.r.QueryRowContext(t.Context(), `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

// TestReopenKeepsData: a closed store opens again with everything in it and
// without re-running migrations.
func TestReopenKeepsData(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register(ctx, "", []state.ModelRecord{model("a", "fix")}, nil, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "a", Windows: hours(0, 3), Now: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	st, err := s.Stats(ctx, "", "a")
	if err != nil || st.Counts[state.Pending] != 3 {
		t.Errorf("after reopen: %v pending, %v; want 3", st.Counts[state.Pending], err)
	}
	var applied int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM "schema_version"`).Scan(&applied); err != nil || applied != latestVersion() {
		t.Errorf("schema_version has %d rows, %v; want %d (one per migration, none repeated)", applied, err, latestVersion())
	}
}

// TestNewerSchemaRefused: a file written by a newer bollhav is refused with
// ErrNewerSchema, and the refusal changes nothing in it.
func TestNewerSchemaRefused(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO "schema_version" ("version", "name", "applied_at") VALUES (?, 'from_the_future.sql', 0)`, latestVersion()+1); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before := fileHash(t, path)

	_, err = Open(ctx, path)
	if !errors.Is(err, state.ErrNewerSchema) {
		t.Fatalf("Open of a newer store: err = %v, want ErrNewerSchema", err)
	}
	if want := fmt.Sprintf("schema version %d", latestVersion()+1); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if after := fileHash(t, path); !bytes.Equal(before, after) {
		t.Errorf("the refused Open changed the file")
	}
}

func fileHash(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return sum[:]
}

// TestReadersDuringWrites: the UI reads (scans, stats, coverage, the feed)
// while a run writes from this process and another one writes too; nobody
// sees "database is locked".
func TestReadersDuringWrites(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	other, err := Open(ctx, s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := s.Register(ctx, "", []state.ModelRecord{model("a", "fix"), model("b", "flex")}, nil, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "a", Windows: hours(0, 2000), Now: t0}); err != nil {
		t.Fatal(err)
	}

	deadline := time.Now().Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	report := func(who string, err error) {
		if err != nil {
			select {
			case errs <- fmt.Errorf("%s: %w", who, err):
			default:
			}
		}
	}
	for i, st := range []*Store{s, other} {
		wg.Go(func() { // writers: prefill, claim and complete in small transactions
			for h := 0; time.Now().Before(deadline); h++ {
				_, err := st.Prefill(ctx, state.PrefillRequest{Model: "b", Windows: hours(10000*i+h, 10000*i+h+1), Now: t0})
				report("prefill", err)
				cs, err := st.Claim(ctx, state.ClaimRequest{Models: []string{"a", "b"}, Worker: "w", Lease: time.Hour, Limit: 2, Now: t0})
				report("claim", err)
				for _, c := range cs {
					report("complete", st.Complete(ctx, c, state.Outcome{Status: state.Applied, At: t0}))
				}
			}
		})
	}
	wg.Go(func() { // a slow streaming reader holding its cursor across commits
		for time.Now().Before(deadline) {
			n := 0
			report("scan", s.ScanUnits(ctx, state.UnitQuery{Model: "a"}, func(state.Unit) error {
				if n++; n%500 == 0 {
					time.Sleep(20 * time.Millisecond)
				}
				return nil
			}))
		}
	})
	wg.Go(func() { // the UI's quick reads
		for time.Now().Before(deadline) {
			_, err := s.Stats(ctx, "", "a")
			report("stats", err)
			_, err = other.Coverage(ctx, "", "b", state.Window{})
			report("coverage", err)
			_, err = s.Changes(ctx, 0, 100)
			report("changes", err)
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st, err := s.Stats(ctx, "", "a")
	if err != nil || st.Counts[state.Applied] == 0 {
		t.Errorf("after the race: %d applied, %v; want the writers to have made progress", st.Counts[state.Applied], err)
	}
}

// TestCloseEndsWake: closing the store closes its subscribers' channels, so
// a feed follower notices instead of waiting forever.
func TestCloseEndsWake(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := s.Wake(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	select {
	case _, ok := <-ch:
		for ok {
			_, ok = <-ch
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wake channel still open 5s after Close")
	}
	if _, err := s.Wake(t.Context()); err == nil {
		t.Error("Wake on a closed store succeeded")
	}
}

// TestQueryPlansAreIndexed: the gate's queries, coverage, scans and claims
// seek an index; none scans the units or coverage table.
func TestQueryPlansAreIndexed(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	if _, err := s.Register(ctx, "", []state.ModelRecord{model("a", "fix")}, nil, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "a", Windows: hours(0, 5000), Now: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	m, err := lookup(ctx, s.r, "", "a")
	if err != nil {
		t.Fatal(err)
	}
	w := state.MustWindow(t0.Add(100*time.Hour), t0.Add(124*time.Hour))
	type plan struct {
		name, sql string
		args      []any
	}
	var plans []plan
	add := func(name, sql string, args []any) { plans = append(plans, plan{name, sql, args}) }
	q, a := appliedQuery(m, w)
	add("applied rows touching a window", q, a)
	q, a = unitsQuery(m, state.UnitQuery{Window: w})
	add("units in a window", q, a)
	q, a = unitsQuery(m, state.UnitQuery{Window: w, Statuses: []state.UnitStatus{state.Blocked}})
	add("blocked units in a window", q, a)
	first, fa, rest, ra := islandQueries(m.id, w, false)
	add("coverage: the island reaching a window", `SELECT "since", "until" FROM "coverage" WHERE `+first, fa)
	add("coverage: islands inside a window", `SELECT "since", "until" FROM "coverage" WHERE `+rest, ra)
	q, a = candidatesQuery(`"status" = 'pending' AND "model_id" IN (?)`, []any{m.id}, -1<<63, 0)
	add("claim candidates", q, a)
	add("stats", `SELECT "status", count(*) FROM "units" WHERE "model_id" = ? GROUP BY "status"`, []any{m.id})
	add("newest applied_at", `SELECT max("applied_at") FROM "units" WHERE "model_id" = ? AND "status" = 'applied'`, []any{m.id})
	add("summaries: models and newest applied_at", summaryModelsSQL, []any{"", "", ""})
	add("summaries: counts by status", summaryCountsSQL, []any{"", "", ""})
	add("summaries: coverage", summaryCoverageSQL, []any{"", "", ""})
	add("expired leases", `SELECT "model_id" FROM "units" WHERE "status" = 'running' AND "lease_until" < ?`, []any{int64(0)})

	for _, p := range plans {
		rows, err := s.r.QueryContext(ctx, `EXPLAIN QUERY PLAN `+p.sql, p.args...)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		var lines []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, detail)
		}
		rows.Close()
		joined := strings.Join(lines, "; ")
		t.Logf("%s: %s", p.name, joined)
		if strings.Contains(joined, "SCAN units") || strings.Contains(joined, "SCAN coverage") || !strings.Contains(joined, "SEARCH") {
			t.Errorf("%s is not an index seek: %s", p.name, joined)
		}
	}
}

// TestCoverageIslandsStayMerged: units applied one by one, out of order,
// leave one island row per gap-free stretch, so coverage reads stay a seek
// or two however many units a model has.
func TestCoverageIslandsStayMerged(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	if _, err := s.Register(ctx, "", []state.ModelRecord{model("a", "fix")}, nil, t0); err != nil {
		t.Fatal(err)
	}
	ws := hours(0, 40)
	if _, err := s.Prefill(ctx, state.PrefillRequest{Model: "a", Windows: ws, Now: t0}); err != nil {
		t.Fatal(err)
	}
	mark := func(w state.Window, to state.UnitStatus, from state.UnitStatus) {
		t.Helper()
		if _, err := s.SetStatus(ctx, state.StatusChange{Model: "a", Window: w, From: []state.UnitStatus{from}, To: to, Now: t0}); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range []int{5, 3, 4, 0, 2, 1, 39, 38, 20} { // [0h,6h) [20h,21h) [38h,40h)
		mark(ws[h], state.Applied, state.Pending)
	}
	islands := func() string {
		t.Helper()
		got, err := islandsWhere(ctx, s.r, `"model_id" = (SELECT "id" FROM "models" WHERE "name" = 'a') ORDER BY "since"`)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, w := range got {
			parts = append(parts, fmt.Sprintf("[%v,%v)", w.Since.Sub(t0).Hours(), w.Until.Sub(t0).Hours()))
		}
		return strings.Join(parts, " ")
	}
	if got, want := islands(), "[0,6) [20,21) [38,40)"; got != want {
		t.Errorf("islands = %s, want %s", got, want)
	}
	mark(ws[3], state.Pending, state.Applied)
	if got, want := islands(), "[0,3) [4,6) [20,21) [38,40)"; got != want {
		t.Errorf("islands after re-pending [3h,4h) = %s, want %s", got, want)
	}
	if _, err := s.Delete(ctx, state.RemoveRequest{Model: "a", Now: t0}); err != nil {
		t.Fatal(err)
	}
	if got := islands(); got != "" {
		t.Errorf("islands after deleting every unit = %s, want none", got)
	}
}

// Current says whether Open would open a file without writing to it, and
// asking writes nothing: a store Open made is current; a missing file is
// not, and is not made; an empty file (a new database to SQLite) is not,
// and stays empty.
func TestCurrentAsksWithoutWriting(t *testing.T) {
	dir := t.TempDir()
	made := filepath.Join(dir, "state.db")
	s, err := Open(t.Context(), made)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	empty, missing := filepath.Join(dir, "empty.db"), filepath.Join(dir, "missing.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want bool
	}{{made, true}, {empty, false}, {missing, false}, {dir, false}} {
		if got, err := Current(t.Context(), c.path); got != c.want || err != nil {
			t.Errorf("Current(%s) = %v, %v; want %v", filepath.Base(c.path), got, err, c.want)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("asking made %s: %v", missing, err)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("asking wrote to the empty file: %v, %v", fi, err)
	}
}
