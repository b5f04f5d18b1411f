package postgres

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// TestWarehouseLedgerFromBeforeStoreIdentities: a warehouse whose ledger a
// bollhav before store identities wrote (warehouse schema version 1) is
// upgraded when it opens: each row keeps its fences and gets its window
// from its key and the store "". Such a row is another store's: an
// append over its window fails with the ledger's conflict and writes
// nothing, under the row's own unit key and fence or another unit id's; a
// rewriting job runs and takes the row over.
func TestWarehouseLedgerFromBeforeStoreIdentities(t *testing.T) {
	ctx := t.Context()
	base := pgtest.DSN(t)
	name := strings.ReplaceAll(strings.ToLower(pgtest.ApplicationName("bollhav_whold_")), "-", "_")
	if err := pgtest.Exec(base, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pgtest.Exec(base, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	dsn := u.String()
	ms, err := loadMigrations(warehouseMigrationFiles, "warehouse_migrations")
	if err != nil {
		t.Fatal(err)
	}
	pool := testPool(t, dsn)
	if v, err := migrate(ctx, pool, WarehouseSchema, ms[:1]); err != nil || v != 1 {
		t.Fatalf("a version 1 ledger: %d, %v", v, err)
	}
	w0 := state.MustWindow(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC))
	key := state.LedgerKey("", "m", w0, 1)
	for _, q := range []string{
		`INSERT INTO bollhav_warehouse.ledger VALUES ('` + key + `', 1, 1, 0, 2, now()), ('|ref|#2', 3, 3, 0, 5, now())`,
		`CREATE TABLE public.t (n integer); INSERT INTO public.t VALUES (1), (1)`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	w, err := OpenWarehouse(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, want := range []state.LedgerEntry{{Key: key, Model: "m", Window: w0, Fence: 1, DoneFence: 1, Rows: 2}, {Key: "|ref|#2", Model: "ref", Fence: 3, DoneFence: 3, Rows: 5}} {
		l, ok, err := w.Ledger(ctx, want.Key)
		l.DoneAt = time.Time{}
		if err != nil || !ok || l != want {
			t.Errorf("upgraded ledger row %+v, %v, %v; want %+v", l, ok, err, want)
		}
	}
	never := func(context.Context, state.LedgerEntry) (bool, error) { return false, nil }
	always := func(context.Context, state.LedgerEntry) (bool, error) { return true, nil }
	at := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	lu := state.LedgerUnit{Key: key, Model: "m", Window: w0, Store: "s1", Fence: 1, At: at}
	appendJob := state.DataJob{Kind: state.DataQuery, Target: []string{"public", "t"}, Query: "SELECT 2 AS n", Write: state.WriteAppend, Window: w0}
	_, err = w.RunUnit(ctx, appendJob, lu, always)
	var conflict *state.LedgerConflict
	if !errors.As(err, &conflict) || !strings.Contains(err.Error(), "a bollhav from before store identities") ||
		!strings.Contains(err.Error(), `DELETE FROM bollhav_warehouse.ledger WHERE unit_key = '`+key+`'`) {
		t.Errorf("an append over a row from before store identities: %v, want the ledger's conflict", err)
	}
	other := lu
	other.Key = state.LedgerKey("", "m", w0, 7)
	if _, err := w.RunUnit(ctx, appendJob, other, never); !errors.As(err, &conflict) {
		t.Errorf("an append of another unit id over that window: %v, want the ledger's conflict", err)
	}
	count := func() string {
		var n int64
		if err := w.ReadData(ctx, `SELECT count(*) FILTER (WHERE n = 2) * 10 + count(*) FILTER (WHERE n = 1) FROM public.t`, state.Window{}, func(r []any) error { n = r[0].(int64); return nil }); err != nil {
			t.Fatal(err)
		}
		return map[int64]string{2: "two of n = 1", 20: "two of n = 2"}[n]
	}
	if got := count(); got != "two of n = 1" {
		t.Errorf("after the refused appends t holds %q, want the old rows alone", got)
	}
	rewrite := appendJob
	rewrite.Write, rewrite.Column, rewrite.Window = state.WriteRecreatePartition, "n", state.Window{}
	rewrite.Query = "SELECT 2 AS n UNION ALL SELECT 2"
	other.Rewrites = true
	res, err := w.RunUnit(ctx, rewrite, other, always)
	if err != nil || res.Replayed || res.Rows != 2 || count() != "two of n = 2" {
		t.Errorf("a rewrite over that window: %+v, %v, t holds %q; want it run", res, err, count())
	}
	if _, ok, _ := w.Ledger(ctx, key); ok {
		t.Errorf("the old row inside the rewritten window is still there")
	}
	if l, ok, _ := w.Ledger(ctx, other.Key); !ok || l.Store != "s1" || l.DoneFence != 1 {
		t.Errorf("the rewrite's ledger row %+v, want store s1's commit", l)
	}
}
