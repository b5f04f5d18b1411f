package postgres

import (
	"net/url"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/storetest"
)

// TestWarehouseLedgerFromBeforeStoreIdentities: a warehouse whose ledger a
// bollhav before store identities wrote (warehouse schema version 1) is
// upgraded when it opens, and its rows are then other stores' (the checks
// are storetest.UpgradedLedger's).
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
	for _, q := range []string{
		`INSERT INTO bollhav_warehouse.ledger VALUES ('` + storetest.OldLedgerKey + `', 1, 1, 0, 2, now()), ('|ref|#2', 3, 3, 0, 5, now())`,
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
	storetest.UpgradedLedger(t, w, []string{"public", "t"}, "bollhav_warehouse.ledger")
}
