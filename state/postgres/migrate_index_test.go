package postgres

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// indexes describes the indexes in schema, name to definition (the schema
// written {schema}), an INVALID one marked so.
func indexes(t *testing.T, pool *pgxpool.Pool, schema string) map[string]string {
	t.Helper()
	rows, err := pool.Query(t.Context(), `SELECT c.relname, pg_get_indexdef(i.indexrelid), i.indisvalid
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1`, schema)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rows.Next() {
		var name, def string
		var valid bool
		if err := rows.Scan(&name, &def, &valid); err != nil {
			t.Fatal(err)
		}
		def = strings.ReplaceAll(def, quoteIdent(schema)+".", "{schema}.")
		def = strings.ReplaceAll(def, schema+".", "{schema}.")
		if !valid {
			def += " INVALID"
		}
		out[name] = def
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFailedIndexBuildIsNotRecorded: a migration whose concurrent build
// fails (a unique index over duplicates) is not recorded and runs none of
// the rest of its SQL; the store stays at the version before it, with the
// index INVALID. Once the duplicates are gone the next migrate drops that
// index, builds it, runs the rest and records the migration.
func TestFailedIndexBuildIsNotRecorded(t *testing.T) {
	ctx := t.Context()
	ms, err := embeddedMigrations()
	if err != nil {
		t.Fatal(err)
	}
	_, pool, schema := oldSchema(t, len(ms), func(exec func(string, ...any)) {
		oldHourlyModel(exec, "", "a", 1)
		oldUnits(exec, []oldUnit{{"", "a", 0, "pending", nil}, {"", "a", 1, "pending", nil}}, func(int) time.Time { return t0 })
	})
	next := migration{version: len(ms) + 1, name: "next", sql: `
		CREATE UNIQUE INDEX CONCURRENTLY units_one_per_model ON {schema}.units (env, model);
		ALTER TABLE {schema}.units ADD COLUMN note text;`}
	describe := func() string {
		t.Helper()
		var note bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'units' AND column_name = 'note')`,
			schema).Scan(&note); err != nil {
			t.Fatal(err)
		}
		var version int
		if err := pool.QueryRow(ctx, sqlFor(schema, `SELECT max(version) FROM {schema}.schema_version`)).Scan(&version); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("version %d, note %v, index %q", version, note, indexes(t, pool, schema)["units_one_per_model"])
	}
	const def = "CREATE UNIQUE INDEX units_one_per_model ON {schema}.units USING btree (env, model)"

	v, err := migrate(ctx, pool, schema, append(ms, next))
	if pgCode(err) != codeUniqueViolation || v != 0 {
		t.Fatalf("migrate with a failing build = %d, %v; want a unique violation", v, err)
	}
	if got, want := describe(), fmt.Sprintf("version %d, note false, index %q", len(ms), def+" INVALID"); got != want {
		t.Fatalf("after the failed build: %s; want %s", got, want)
	}

	if _, err := pool.Exec(ctx, sqlFor(schema, `DELETE FROM {schema}.units WHERE since = $1`), at(1)); err != nil {
		t.Fatal(err)
	}
	if v, err := migrate(ctx, pool, schema, append(ms, next)); err != nil || v != next.version {
		t.Fatalf("migrate once the duplicate is gone = %d, %v; want %d", v, err, next.version)
	}
	if got, want := describe(), fmt.Sprintf("version %d, note true, index %q", next.version, def); got != want {
		t.Errorf("after the second migrate: %s; want %s", got, want)
	}
}
