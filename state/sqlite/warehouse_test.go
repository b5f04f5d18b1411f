package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/storetest"
)

// TestSQLiteWarehouseLedgerFences: a unit's data transaction on a SQLite
// warehouse writes its ledger row under the claim's fence. The same claim
// again (its acknowledgement lost) replays the commit without running the
// job; an older claim (a zombie whose lease was taken over) is refused
// with ErrLeaseLost and writes nothing; the ledger's own table cannot be a
// model's target.
func TestSQLiteWarehouseLedgerFences(t *testing.T) {
	ctx := t.Context()
	w, err := OpenWarehouse(ctx, filepath.Join(t.TempDir(), "wh.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	at := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	if _, err := w.RunData(ctx, state.DataJob{Kind: state.DataStatements, Statements: []string{`CREATE TABLE "t" (n INTEGER)`}}, at); err != nil {
		t.Fatal(err)
	}
	job := state.DataJob{Kind: state.DataStatements, Statements: []string{`INSERT INTO "t" VALUES (1), (2)`}}
	never := func(context.Context, state.LedgerEntry) (bool, error) { return false, nil }
	count := func() int64 {
		var n int64
		if err := w.ReadData(ctx, `SELECT count(*) FROM "t"`, state.Window{}, func(r []any) error { n = r[0].(int64); return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	u := state.LedgerUnit{Key: "|m|#1", Model: "m", Store: "s1", Fence: 5, Attempts: 0, At: at}
	res, err := w.RunUnit(ctx, job, u, never)
	if err != nil || res.Rows != 2 || res.Replayed {
		t.Fatalf("the first claim: %+v, %v", res, err)
	}
	res, err = w.RunUnit(ctx, job, u, never)
	if err != nil || !res.Replayed || res.Rows != 2 || count() != 2 {
		t.Errorf("the same claim again: %+v, %v, %d rows; want its commit replayed, 2 rows", res, err, count())
	}
	zombie := u
	zombie.Fence = 3
	if _, err := w.RunUnit(ctx, job, zombie, never); !errors.Is(err, state.ErrLeaseLost) {
		t.Errorf("an older claim: %v, want ErrLeaseLost", err)
	}
	if n := count(); n != 2 {
		t.Errorf("%d rows after the zombie, want 2", n)
	}
	l, ok, err := w.Ledger(ctx, u.Key)
	if err != nil || !ok || l.Fence != 5 || l.DoneFence != 5 || l.Rows != 2 || !l.DoneAt.Equal(at) {
		t.Errorf("ledger %+v %v %v, want fence 5 done with 2 rows at %s", l, ok, err, at)
	}
	if _, err := w.QuoteTable(ledgerTable); !errors.Is(err, state.ErrDataJob) {
		t.Errorf("the ledger as a target: %v, want refused", err)
	}
}

// TestSQLiteWarehouseLedgerFromBeforeStoreIdentities: a ledger written by
// a bollhav before store identities (no store, definition or window
// columns) is upgraded when the warehouse opens, and its rows are then
// other stores' (the checks are storetest.UpgradedLedger's).
func TestSQLiteWarehouseLedgerFromBeforeStoreIdentities(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "wh.db")
	old, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	err = old.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE "bollhav_ledger" ("unit_key" TEXT PRIMARY KEY, "fence" INTEGER NOT NULL,
			"done_fence" INTEGER NOT NULL DEFAULT 0, "done_attempts" INTEGER NOT NULL DEFAULT 0, "rows" INTEGER NOT NULL DEFAULT 0, "done_at" INTEGER);
			INSERT INTO "bollhav_ledger" VALUES (?, 1, 1, 0, 2, 0), ('|ref|#2', 3, 3, 0, 5, 0);
			CREATE TABLE "t" (n INTEGER); INSERT INTO "t" VALUES (1), (1)`, storetest.OldLedgerKey)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	w, err := OpenWarehouse(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	storetest.UpgradedLedger(t, w, []string{"t"}, "bollhav_ledger")
}

// A warehouse file in a folder that does not exist is refused with the
// path, and the folder is not made: a typo in a connection's DSN must not
// load a model's data into a new, empty database nobody reads.
func TestSQLiteWarehouseInAMissingFolderIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nonexistent", "dir")
	path := filepath.Join(dir, "x.db")
	w, err := OpenWarehouse(t.Context(), path)
	if err == nil {
		w.Close()
		t.Fatal("a warehouse in a missing folder was opened")
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("the error %q does not name the file and say its folder is missing", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the folder was made: %v", err)
	}
}
