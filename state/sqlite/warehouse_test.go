package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
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
