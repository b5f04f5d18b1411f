package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// OldLedgerWindow is the window of the ledger row a backend's test seeds
// before calling UpgradedLedger: model m's hour 0 of 2026-01-01.
var OldLedgerWindow = state.MustWindow(t0, t0.Add(time.Hour))

// OldLedgerKey is that row's unit key (unit id 1, environment "").
var OldLedgerKey = state.LedgerKey("", "m", OldLedgerWindow, 1)

// UpgradedLedger checks a warehouse just upgraded from a ledger written
// by a bollhav before store identities, seeded with the row OldLedgerKey
// (fence 1 done with 2 rows), the row "|ref|#2" (fence 3 done with 5
// rows) and the table target holding n = 1 twice. ledger is the ledger's
// table as the conflict's DELETE names it.
//
// Each row keeps its fences and gets its window from its key and the
// store "". Such a row is another store's: an append over its window
// fails with the ledger's conflict and writes nothing, under the row's own
// unit key and fence or another unit id's; a rewriting job runs and takes
// the row over.
func UpgradedLedger(t *testing.T, w state.Warehouse, target []string, ledger string) {
	t.Helper()
	ctx := t.Context()
	w0, key := OldLedgerWindow, OldLedgerKey
	for _, want := range []state.LedgerEntry{{Key: key, Model: "m", Window: w0, Fence: 1, DoneFence: 1, Rows: 2}, {Key: "|ref|#2", Model: "ref", Fence: 3, DoneFence: 3, Rows: 5}} {
		l, ok, err := w.Ledger(ctx, want.Key)
		l.DoneAt = time.Time{}
		if err != nil || !ok || l != want {
			t.Errorf("upgraded ledger row %+v, %v, %v; want %+v", l, ok, err, want)
		}
	}
	never := func(context.Context, state.LedgerEntry) (bool, error) { return false, nil }
	always := func(context.Context, state.LedgerEntry) (bool, error) { return true, nil }
	lu := state.LedgerUnit{Key: key, Model: "m", Window: w0, Store: "s1", Fence: 1, At: t0.Add(24 * time.Hour)}
	appendJob := state.DataJob{Kind: state.DataQuery, Target: target, Query: "SELECT 2 AS n", Write: state.WriteAppend, Window: w0}
	_, err := w.RunUnit(ctx, appendJob, lu, always)
	var conflict *state.LedgerConflict
	if !errors.As(err, &conflict) || !strings.Contains(err.Error(), "a bollhav from before store identities") ||
		!strings.Contains(err.Error(), `DELETE FROM `+ledger+` WHERE unit_key = '`+key+`'`) {
		t.Errorf("an append over a row from before store identities: %v, want the ledger's conflict", err)
	}
	other := lu
	other.Key = state.LedgerKey("", "m", w0, 7)
	if _, err := w.RunUnit(ctx, appendJob, other, never); !errors.As(err, &conflict) {
		t.Errorf("an append of another unit id over that window: %v, want the ledger's conflict", err)
	}
	table, err := w.QuoteTable(target...)
	if err != nil {
		t.Fatal(err)
	}
	// "value count" of each n, in order: "1 2" is the seeded rows alone.
	count := func() string {
		var out []string
		if err := w.ReadData(ctx, `SELECT n, count(*) FROM `+table+` GROUP BY n ORDER BY n`, state.Window{}, func(r []any) error { out = append(out, fmt.Sprint(r...)); return nil }); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out, " ")
	}
	if got := count(); got != "1 2" {
		t.Errorf("after the refused appends t = %s, want the old rows alone", got)
	}
	rewrite := appendJob
	rewrite.Write, rewrite.Column, rewrite.Window = state.WriteRecreatePartition, "n", state.Window{}
	rewrite.Query = "SELECT 2 AS n UNION ALL SELECT 2"
	other.Rewrites = true
	res, err := w.RunUnit(ctx, rewrite, other, always)
	if err != nil || res.Replayed || res.Rows != 2 || count() != "2 2" {
		t.Errorf("a rewrite over that window: %+v, %v, t = %s; want it run", res, err, count())
	}
	if _, ok, _ := w.Ledger(ctx, key); ok {
		t.Errorf("the old row inside the rewritten window is still there")
	}
	if l, ok, _ := w.Ledger(ctx, other.Key); !ok || l.Store != "s1" || l.DoneFence != 1 {
		t.Errorf("the rewrite's ledger row %+v, want store s1's commit", l)
	}
}
