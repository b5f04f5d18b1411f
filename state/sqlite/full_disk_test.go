package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// A write SQLite refuses for want of room says that the disk holding the
// store is full, and where, with SQLite's own words after it — not a bare
// "database or disk is full (13)" or "disk I/O error (778)" — and keeps
// nothing of the write. (The file is capped with max_page_count: SQLite
// then answers exactly as it does on a full disk, SQLITE_FULL.)
func TestAFullDiskIsSaidSo(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := s.Register(ctx, "", []state.ModelRecord{model("a", "fix")}, nil, t0); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := s.w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(ctx, fmt.Sprintf(`PRAGMA max_page_count = %d`, pages+2)); err != nil {
		t.Fatal(err)
	}
	var ws []state.Window
	for h := range 50_000 {
		ws = append(ws, state.MustWindow(t0.Add(time.Duration(h)*time.Hour), t0.Add(time.Duration(h+1)*time.Hour)))
	}
	_, err := s.Prefill(ctx, state.PrefillRequest{Model: "a", Windows: ws, Now: t0})
	if err == nil {
		t.Fatal("50,000 units fit in two more pages")
	}
	if !strings.Contains(err.Error(), "the disk holding "+s.path+" is full") || !strings.Contains(err.Error(), "free space in") {
		t.Errorf("the error does not say the disk is full, and where: %v", err)
	}
	var e interface{ Code() int }
	if !errors.As(err, &e) {
		t.Errorf("SQLite's own error is not kept: %v", err)
	}
	st, serr := s.Stats(ctx, "", "a")
	if serr != nil || len(st.Counts) != 0 && st.Counts[state.Pending] != 0 {
		t.Errorf("the refused write kept units: %v, %v", st.Counts, serr)
	}
}
