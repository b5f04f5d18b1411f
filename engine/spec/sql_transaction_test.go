package spec

import "testing"

// TestTransactionStatementsAreFound: every way PostgreSQL and SQLite spell a
// statement that begins, ends or splits a transaction is found; the same
// words inside literals, comments, identifiers, function bodies and trigger
// bodies are not.
func TestTransactionStatementsAreFound(t *testing.T) {
	for _, tc := range []struct {
		sql, want string
	}{
		{"COMMIT", "COMMIT"},
		{"insert into t values (1); commit; insert into u values (2)", "COMMIT"},
		{"INSERT INTO t VALUES (1);\n  COMMIT TRANSACTION", "COMMIT"},
		{"BEGIN; INSERT INTO t VALUES (1)", "BEGIN"},
		{"begin transaction", "BEGIN"},
		{"BEGIN IMMEDIATE", "BEGIN"},
		{"START TRANSACTION ISOLATION LEVEL SERIALIZABLE", "START TRANSACTION"},
		{"END", "END"},
		{"end transaction;", "END"},
		{"ROLLBACK", "ROLLBACK"},
		{"ROLLBACK TO SAVEPOINT a", "ROLLBACK"},
		{"ABORT", "ABORT"},
		{"SAVEPOINT before_load", "SAVEPOINT"},
		{"RELEASE SAVEPOINT before_load", "RELEASE"},
		{"RELEASE before_load", "RELEASE"},
		{"PREPARE TRANSACTION 'x'", "PREPARE TRANSACTION"},
		{"/* load */ COMMIT", "COMMIT"},
		{"-- load\nCOMMIT", "COMMIT"},
		{"SELECT 1; /* a; b */ COMMIT", "COMMIT"},
		// Not transaction control:
		{"INSERT INTO t VALUES ('COMMIT; BEGIN')", ""},
		{`INSERT INTO "commit" VALUES (1)`, ""},
		{"SELECT 1 -- ; COMMIT", ""},
		{"SELECT 1 /* ; COMMIT */", ""},
		{"SELECT E'it\\'s; COMMIT'", ""},
		{"CREATE FUNCTION f() RETURNS void AS $$ BEGIN PERFORM 1; END; $$ LANGUAGE plpgsql", ""},
		{"DO $body$ BEGIN RAISE NOTICE 'x'; END $body$", ""},
		{"CREATE TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO b VALUES (CASE WHEN 1 THEN 2 END); END; SELECT 1", ""},
		{"CREATE TRIGGER t AFTER INSERT ON a BEGIN INSERT INTO b VALUES (1); END; COMMIT", "COMMIT"},
		{"SELECT CASE WHEN x THEN 1 END FROM t", ""},
		{"SELECT arr[1] FROM t; SELECT [end] FROM t", ""},
		{"PREPARE q AS SELECT 1", ""},
		{"SELECT $1::int; SELECT 'end'", ""},
		{"UPDATE t SET started = 1 WHERE since >= :since", ""},
	} {
		got, _ := transactionStatement(tc.sql)
		if got != tc.want {
			t.Errorf("transactionStatement(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
}

// TestTransactionStatementIsASpecError: a COMMIT in sql: or query: is
// refused at load, at the statement, naming it.
func TestTransactionStatementIsASpecError(t *testing.T) {
	sp := func(run ...string) []byte {
		return yamlLines(append([]string{
			"models:",
			"  - name: core.orders",
			"    chunking: {interval: 1d, start: \"2026-01-01T00:00:00Z\"}",
		}, run...)...)
	}
	wantOneError(t, sp("    run:", "      sql:", "        - CREATE TABLE IF NOT EXISTS {{ this }} (id int)",
		"        - INSERT INTO {{ this }} VALUES (1)", "        - COMMIT", "        - INSERT INTO nonexistent_table VALUES (2)"),
		"8:11", "model core.orders: sql statement 3 contains COMMIT: bollhav runs a unit's SQL in one transaction")
	wantOneError(t, sp("    run:", "      sql: \"INSERT INTO {{ this }} VALUES (1); END\""),
		"5:12", "model core.orders: sql contains END:")
	wantOneError(t, sp("    run:", "      query: \"SELECT 1 AS id; ROLLBACK\"", "      write: {mode: append}"),
		"5:14", "model core.orders: query contains ROLLBACK:")
}
