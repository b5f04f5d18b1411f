package storetest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

var dataTests = []test{
	{"StatementsBindWindowAndCommitWithTheUnit", testDataStatements},
	{"FailedJobWritesNothingAndLeavesTheUnitRunning", testDataFailedJob},
	{"LostLeaseWritesNothing", testDataLostLease},
	{"QueryAppend", testDataAppend},
	{"QueryUpsert", testDataUpsert},
	{"QueryRecreatePartition", testDataRecreatePartition},
	{"View", testDataView},
	{"TableLoadReappliedOnlyWhenTheVersionChanges", testDataTableLoad},
	{"UnknownWriteModeRefused", testDataUnknownWrite},
	{"InvalidJobsRefusedInOneWording", testDataJobRefusals},
	{"LoadedDatetimesCompareWithTheWindow", testDataLoadedDatetimes},
	{"OnlyOneWindowBound", testDataOneBound},
	{"StatementThatEndsTheTransactionFailsTheUnit", testDataTransactionEnded},
}

// testDataTransactionEnded: a statement that commits (or rolls back) the
// unit's transaction in the middle of its statements is caught: RunData
// fails naming it, and the unit is not recorded applied — it stays running
// under the claim, for the caller to record the failure.
func testDataTransactionEnded(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	setupSource(t, ds, schema, s)
	exec(t, ds, schema, `CREATE TABLE {t:dst} (n INTEGER)`)
	for _, end := range []string{"COMMIT", "ROLLBACK"} {
		c := runningUnit(t, s, 0, 1)
		job := state.DataJob{Kind: state.DataStatements, Window: c.Unit.Window, Statements: tables(t, ds, schema,
			`INSERT INTO {t:dst} VALUES (1)`, end, `INSERT INTO {t:dst} VALUES (2)`)}
		_, err := ds.RunData(t.Context(), job, &c, clock(2))
		if err == nil || !strings.Contains(err.Error(), "ended the unit's transaction") {
			t.Fatalf("%s among the statements: RunData = %v, want the ended transaction named", end, err)
		}
		if u := unit(t, s, "", "m", c.Unit.Window); u.Status != state.Running {
			t.Errorf("%s among the statements: the unit is %s, want it still running (not applied)", end, u.Status)
		}
		// Clean up for the next case: the unit goes back to pending.
		must(t, "Complete", s.Complete(t.Context(), c, state.Outcome{Status: state.Pending, At: clock(3)}))
	}
}

// dataStore returns s as a DataStore and a schema name of its own, dropped
// when the test ends: PostgreSQL tests share one database.
func dataStore(t *testing.T, s state.Store) (state.DataStore, string) {
	t.Helper()
	ds, ok := s.(state.DataStore)
	if !ok {
		t.Fatalf("%s store is not a state.DataStore", s.Backend())
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	schema := "data_" + hex.EncodeToString(b)
	if s.Backend() == "postgres" {
		t.Cleanup(func() {
			_, _ = ds.RunData(t.Context(), state.DataJob{Kind: state.DataStatements,
				Statements: []string{`DROP SCHEMA IF EXISTS "` + schema + `" CASCADE`}}, nil, clock(0))
		})
	}
	return ds, schema
}

// exec runs statements with no unit, quoting tables with {t:name}.
func exec(t *testing.T, ds state.DataStore, schema string, stmts ...string) {
	t.Helper()
	if _, err := ds.RunData(t.Context(), state.DataJob{Kind: state.DataStatements, Statements: tables(t, ds, schema, stmts...)}, nil, clock(0)); err != nil {
		t.Fatalf("RunData(%q): %v", stmts, err)
	}
}

// tables replaces {t:name} with the quoted table schema.name.
func tables(t *testing.T, ds state.DataStore, schema string, stmts ...string) []string {
	t.Helper()
	out := make([]string, len(stmts))
	for i, s := range stmts {
		for {
			a := strings.Index(s, "{t:")
			if a < 0 {
				break
			}
			b := strings.Index(s[a:], "}")
			q, err := ds.QuoteTable(schema, s[a+3:a+b])
			must(t, "QuoteTable", err)
			s = s[:a] + q + s[a+b+1:]
		}
		out[i] = s
	}
	return out
}

// rows reads a query's rows as "a|b" strings.
func rows(t *testing.T, ds state.DataStore, schema, query string) []string {
	t.Helper()
	var out []string
	err := ds.ReadData(t.Context(), tables(t, ds, schema, query)[0], state.Window{}, func(r []any) error {
		parts := make([]string, len(r))
		for i, v := range r {
			parts[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(parts, "|"))
		return nil
	})
	must(t, "ReadData", err)
	return out
}

// setupSource creates schema.src with one row per hour 0..5 (n = hour).
func setupSource(t *testing.T, ds state.DataStore, schema string, s state.Store) {
	t.Helper()
	stmts := []string{}
	if s.Backend() == "postgres" {
		stmts = append(stmts, `CREATE SCHEMA "`+schema+`"`)
	}
	stmts = append(stmts, `CREATE TABLE {t:src} (ts TIMESTAMP, n INTEGER)`)
	for h := range 6 {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO {t:src} VALUES ('2026-01-01 %02d:00:00', %d)`, h, h))
	}
	exec(t, ds, schema, stmts...)
}

// runningUnit registers a fixed model, prefills hours [from, to) and claims
// the first.
func runningUnit(t *testing.T, s state.Store, from, to int) state.Claim {
	t.Helper()
	modelM(t, s, from, to)
	return claimExactly(t, s, "", "m", 1, clock(1))[0]
}

// testDataStatements: :since/:until bind the unit's window, the last
// statement's count is the rows written, and the unit is applied with them
// in the same transaction.
func testDataStatements(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	setupSource(t, ds, schema, s)
	exec(t, ds, schema, `CREATE TABLE {t:dst} (ts TIMESTAMP, n INTEGER)`)
	c := runningUnit(t, s, 2, 4) // claims [02:00, 03:00)
	c2 := claim(t, s, "", "m", 1, clock(1))
	job := state.DataJob{Kind: state.DataStatements, Window: c.Unit.Window, Statements: tables(t, ds, schema,
		`DELETE FROM {t:dst} WHERE ts >= :since AND ts < :until`,
		`INSERT INTO {t:dst} SELECT ts, n FROM {t:src} WHERE ts >= :since AND ts < :until`)}
	res, err := ds.RunData(t.Context(), job, &c, clock(2))
	must(t, "RunData", err)
	eq(t, "rows written", res.Rows, int64(1))
	eq(t, "dst", rows(t, ds, schema, `SELECT n FROM {t:dst} ORDER BY n`), []string{"2"})
	u := unit(t, s, "", "m", c.Unit.Window)
	eq(t, "status", u.Status, state.Applied)
	eq(t, "unit rows_written", fmtPtr(u.RowsWritten), "1")
	// The second window: the same statements load hour 3 only.
	job.Window = c2[0].Unit.Window
	_, err = ds.RunData(t.Context(), job, &c2[0], clock(3))
	must(t, "RunData second window", err)
	eq(t, "dst", rows(t, ds, schema, `SELECT n FROM {t:dst} ORDER BY n`), []string{"2", "3"})
}

// testDataFailedJob: a statement that fails rolls back the statements before
// it and leaves the unit running, for the caller to record the failure.
func testDataFailedJob(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	setupSource(t, ds, schema, s)
	c := runningUnit(t, s, 0, 1)
	job := state.DataJob{Kind: state.DataStatements, Window: c.Unit.Window, Statements: tables(t, ds, schema,
		`DELETE FROM {t:src}`, `INSERT INTO {t:no_such_table} VALUES (1)`)}
	_, err := ds.RunData(t.Context(), job, &c, clock(2))
	if err == nil || !strings.HasPrefix(err.Error(), "statement 2: ") {
		t.Fatalf("RunData = %v, want an error naming statement 2", err)
	}
	eq(t, "src rows after rollback", len(rows(t, ds, schema, `SELECT n FROM {t:src}`)), 6)
	eq(t, "status", unit(t, s, "", "m", c.Unit.Window).Status, state.Running)
}

// testDataLostLease: a claim whose fence is stale writes no data.
func testDataLostLease(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	setupSource(t, ds, schema, s)
	c := runningUnit(t, s, 0, 1)
	stale := c
	stale.Fence--
	job := state.DataJob{Kind: state.DataStatements, Window: c.Unit.Window, Statements: tables(t, ds, schema, `DELETE FROM {t:src}`)}
	_, err := ds.RunData(t.Context(), job, &stale, clock(2))
	wantLeaseLost(t, "RunData with a stale fence", err)
	eq(t, "src rows", len(rows(t, ds, schema, `SELECT n FROM {t:src}`)), 6)
}

func queryJob(t *testing.T, ds state.DataStore, schema string, w state.Window, mode state.WriteMode, query string) state.DataJob {
	return state.DataJob{Kind: state.DataQuery, Target: []string{schema, "dst"}, Window: w, Write: mode,
		Query: tables(t, ds, schema, query)[0]}
}

// testDataAppend: append creates the target from the query's columns and
// adds the window's rows each time.
func testDataAppend(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	setupSource(t, ds, schema, s)
	q := `SELECT n, n * 10 AS tens FROM {t:src} WHERE ts >= :since AND ts < :until`
	res, err := ds.RunData(t.Context(), queryJob(t, ds, schema, win(0, 2), state.WriteAppend, q), nil, clock(0))
	must(t, "append", err)
	eq(t, "rows", res.Rows, int64(2))
	_, err = ds.RunData(t.Context(), queryJob(t, ds, schema, win(1, 3), state.WriteAppend, q), nil, clock(0))
	must(t, "append again", err)
	eq(t, "dst", rows(t, ds, schema, `SELECT n, tens FROM {t:dst} ORDER BY n, tens`), []string{"0|0", "1|10", "1|10", "2|20"})
}

// testDataUpsert: upsert replaces rows with the same keys and adds new ones.
func testDataUpsert(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	setupSource(t, ds, schema, s)
	job := queryJob(t, ds, schema, win(0, 3), state.WriteUpsert, `SELECT n % 2 AS k, n AS v FROM {t:src} WHERE ts >= :since AND ts < :until AND n < 2`)
	job.Keys = []string{"k"}
	_, err := ds.RunData(t.Context(), job, nil, clock(0))
	must(t, "upsert", err)
	eq(t, "dst", rows(t, ds, schema, `SELECT k, v FROM {t:dst} ORDER BY k`), []string{"0|0", "1|1"})
	job = queryJob(t, ds, schema, win(2, 4), state.WriteUpsert, `SELECT n % 2 AS k, n AS v FROM {t:src} WHERE ts >= :since AND ts < :until`)
	job.Keys = []string{"k"}
	res, err := ds.RunData(t.Context(), job, nil, clock(0))
	must(t, "upsert again", err)
	eq(t, "rows", res.Rows, int64(2))
	eq(t, "dst", rows(t, ds, schema, `SELECT k, v FROM {t:dst} ORDER BY k`), []string{"0|2", "1|3"})
}

// testDataRecreatePartition: the window's partition is deleted and written
// again, so a rerun never duplicates and other windows are kept.
func testDataRecreatePartition(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	setupSource(t, ds, schema, s)
	q := `SELECT ts, n FROM {t:src} WHERE ts >= :since AND ts < :until`
	for _, w := range []state.Window{win(0, 2), win(2, 4), win(0, 2)} {
		job := queryJob(t, ds, schema, w, state.WriteRecreatePartition, q)
		job.Column = "ts"
		res, err := ds.RunData(t.Context(), job, nil, clock(0))
		must(t, "recreate_partition "+hw(w), err)
		eq(t, "rows of "+hw(w), res.Rows, int64(2))
	}
	eq(t, "dst", rows(t, ds, schema, `SELECT n FROM {t:dst} ORDER BY n`), []string{"0", "1", "2", "3"})
}

// testDataView: a view is created, then replaced with a new definition.
func testDataView(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	setupSource(t, ds, schema, s)
	for _, limit := range []string{"2", "4"} {
		job := state.DataJob{Kind: state.DataView, Target: []string{schema, "v"},
			Query: tables(t, ds, schema, `SELECT n FROM {t:src} WHERE n < `+limit)[0]}
		_, err := ds.RunData(t.Context(), job, nil, clock(0))
		must(t, "view", err)
	}
	eq(t, "view rows", rows(t, ds, schema, `SELECT count(*) FROM {t:v}`), []string{"4"})
}

// testDataTableLoad: a table load replaces the target; a load with the
// version already loaded is skipped and changes nothing; a new version
// replaces the content. Each load is recorded at the caller's clock, not the
// machine's: a skipped load reports the time of the load it left in place.
func testDataTableLoad(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	cols := []state.DataColumn{{Name: "code", Type: state.ColumnText}, {Name: "rate", Type: state.ColumnInt}}
	load := func(version string, at time.Time, rs ...[]any) state.DataResult {
		t.Helper()
		res, err := ds.RunData(t.Context(), state.DataJob{Kind: state.DataTable, Target: []string{schema, "consts"},
			Columns: cols, Rows: state.SliceRows(rs), Version: version}, nil, at)
		must(t, "load "+version, err)
		return res
	}
	// Years away from the machine's clock, so a backend stamping its own
	// time.Now() or now() cannot pass by accident.
	v1At := time.Date(2031, 5, 6, 7, 8, 9, 123456000, time.UTC)
	res := load("v1", v1At, []any{"SE", int64(25)}, []any{"NO", nil})
	eq(t, "rows", res.Rows, int64(2))
	eqTime(t, "v1 LoadedAt", res.LoadedAt, v1At)
	eq(t, "consts", rows(t, ds, schema, `SELECT code, rate FROM {t:consts} ORDER BY code`), []string{"NO|<nil>", "SE|25"})
	res = load("v1", clock(5), []any{"DK", int64(25)})
	eq(t, "skipped", res.Skipped, true)
	eqTime(t, "skipped load's LoadedAt (v1's)", res.LoadedAt, v1At)
	eq(t, "consts unchanged", rows(t, ds, schema, `SELECT code FROM {t:consts} ORDER BY code`), []string{"NO", "SE"})
	res = load("v2", clock(9), []any{"DK", int64(25)})
	eqTime(t, "v2 LoadedAt", res.LoadedAt, clock(9))
	eq(t, "consts replaced", rows(t, ds, schema, `SELECT code, rate FROM {t:consts}`), []string{"DK|25"})
	res = load("v2", clock(12), []any{"FI", int64(24)})
	eqTime(t, "v2 again: LoadedAt stays v2's", res.LoadedAt, clock(9))
	// A row with the wrong width fails the load and keeps v2.
	_, err := ds.RunData(t.Context(), state.DataJob{Kind: state.DataTable, Target: []string{schema, "consts"},
		Columns: cols, Rows: state.SliceRows([][]any{{"FI"}}), Version: "v3"}, nil, clock(0))
	if err == nil {
		t.Fatal("a row with one value for two columns loaded")
	}
	eq(t, "consts after failed load", rows(t, ds, schema, `SELECT code FROM {t:consts}`), []string{"DK"})
}

// testDataUnknownWrite: an unknown write mode is refused and writes nothing.
func testDataUnknownWrite(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	setupSource(t, ds, schema, s)
	_, err := ds.RunData(t.Context(), queryJob(t, ds, schema, win(0, 2), "merge", `SELECT n FROM {t:src}`), nil, clock(0))
	wantError(t, "RunData with write mode merge", err, state.ErrDataJob,
		`invalid data job: unknown write mode "merge"; use append, upsert or recreate_partition`)
	eq(t, "tables of the schema", rows(t, ds, schema, `SELECT count(*) FROM {t:src}`), []string{"6"})
	err = ds.ReadData(t.Context(), tables(t, ds, schema, `SELECT 1 FROM {t:out}`)[0], state.Window{}, func([]any) error { return nil })
	if err == nil {
		t.Error("the refused query write created its target")
	}
}

// testDataJobRefusals: a job no backend can run is refused in the same
// words on every backend, before anything is written.
func testDataJobRefusals(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	cols := []state.DataColumn{{Name: "code", Type: state.ColumnText}, {Name: "rate", Type: state.ColumnInt}}
	target := []string{schema, "t"}
	for _, tc := range []struct {
		what string
		job  state.DataJob
		at   time.Time
		want string
	}{
		{"unknown kind", state.DataJob{Kind: 9, Target: target}, clock(0), "invalid data job: unknown kind 9"},
		{"query without target", state.DataJob{Kind: state.DataQuery, Query: "SELECT 1", Write: state.WriteAppend}, clock(0),
			"invalid data job: a query job needs a target table"},
		{"upsert without keys", state.DataJob{Kind: state.DataQuery, Target: target, Query: "SELECT 1 AS n", Write: state.WriteUpsert}, clock(0),
			"invalid data job: write mode upsert needs keys"},
		{"recreate_partition without a column", state.DataJob{Kind: state.DataQuery, Target: target, Query: "SELECT 1 AS n",
			Write: state.WriteRecreatePartition, Window: win(0, 1)}, clock(0),
			"invalid data job: write mode recreate_partition needs the column its window partitions"},
		{"table load without columns", state.DataJob{Kind: state.DataTable, Target: target}, clock(0),
			"invalid data job: a table load needs at least one column"},
		{"table load without the caller's clock", state.DataJob{Kind: state.DataTable, Target: target, Columns: cols,
			Rows: state.SliceRows([][]any{{"SE", int64(25)}})}, time.Time{},
			"invalid data job: a table load records when it was loaded; pass the caller's clock, not the zero time"},
	} {
		_, err := ds.RunData(t.Context(), tc.job, nil, tc.at)
		wantError(t, tc.what, err, state.ErrDataJob, tc.want)
	}
	_, err := ds.RunData(t.Context(), state.DataJob{Kind: state.DataTable, Target: target, Columns: cols,
		Rows: state.SliceRows([][]any{{"SE", int64(25)}, {"FI"}})}, nil, clock(0))
	wantError(t, "a row with one value for two columns", err, nil, "row 2 has 1 values for 2 columns")
	err = ds.ReadData(t.Context(), tables(t, ds, schema, `SELECT 1 FROM {t:t}`)[0], state.Window{}, func([]any) error { return nil })
	if err == nil {
		t.Error("a refused job created its target")
	}
}

// testDataLoadedDatetimes: a datetime column of a table load (ISO 8601 with
// a T, as the file reader gives it) compares with :since and :until.
func testDataLoadedDatetimes(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	cols := []state.DataColumn{{Name: "ts", Type: state.ColumnDatetime}}
	_, err := ds.RunData(t.Context(), state.DataJob{Kind: state.DataTable, Target: []string{schema, "ev"}, Columns: cols,
		Rows: state.SliceRows([][]any{{"2026-01-01T00:30:00"}, {"2026-01-01T01:00:00"}, {"2026-01-01T02:00:00"}})}, nil, clock(0))
	must(t, "load", err)
	var got []string
	err = ds.ReadData(t.Context(), tables(t, ds, schema, `SELECT count(*) FROM {t:ev} WHERE ts >= :since AND ts < :until`)[0], win(1, 2),
		func(r []any) error { got = append(got, fmt.Sprint(r[0])); return nil })
	must(t, "ReadData", err)
	eq(t, "rows in [01:00, 02:00)", strings.Join(got, ","), "1")
}

// testDataOneBound: a statement may use only :until (or only :since).
func testDataOneBound(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	setupSource(t, ds, schema, s)
	var got []string
	err := ds.ReadData(t.Context(), tables(t, ds, schema, `SELECT count(*) FROM {t:src} WHERE ts < :until`)[0], win(0, 2),
		func(r []any) error { got = append(got, fmt.Sprint(r[0])); return nil })
	must(t, "ReadData with only :until", err)
	eq(t, "rows before 02:00", strings.Join(got, ","), "2")
}
