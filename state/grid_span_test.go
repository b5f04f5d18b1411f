package state

import (
	"slices"
	"testing"
	"time"
)

func TestGridWindows(t *testing.T) {
	day := mustGrid(t, "2026-01-01T00:00:00Z", "1d", "UTC")
	cases := []struct {
		g        Grid
		r        Window
		want     []Window
		from, to int
	}{
		{day, win("2026-01-01T05:00:00Z", "2026-01-04T00:00:00Z"),
			[]Window{win("2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"), win("2026-01-03T00:00:00Z", "2026-01-04T00:00:00Z")}, 1, 3},
		{day, win("2026-01-01T00:00:00Z", "2026-01-01T23:59:59Z"), nil, 0, 0},
		{day, win("2026-01-01T05:00:00Z", "2026-01-01T06:00:00Z"), nil, 1, 1},
		// Windows before Start are not the model's.
		{day, win("2025-12-20T00:00:00Z", "2026-01-02T00:00:00Z"), []Window{win("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")}, 0, 1},
		{day, win("2025-12-20T00:00:00Z", "2025-12-25T00:00:00Z"), nil, 0, 0},
		{mustGrid(t, "2026-03-27T23:00:00Z", "1d", "Europe/Stockholm"), win("2026-03-28T23:00:00Z", "2026-03-30T22:00:00Z"),
			[]Window{win("2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"), win("2026-03-29T22:00:00Z", "2026-03-30T22:00:00Z")}, 1, 3},
		{mustGrid(t, "2026-01-01T00:00:00Z", "1mo", "UTC"), win("2026-01-15T00:00:00Z", "2026-04-01T00:00:00Z"),
			[]Window{win("2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"), win("2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z")}, 1, 3},
	}
	for _, c := range cases {
		got := c.g.Windows(c.r)
		if !windowsEqual(got, c.want) {
			t.Errorf("%v: Windows(%v) = %v, want %v", c.g, c.r, got, c.want)
		}
		if from, to := c.g.Span(c.r); from != c.from || to != c.to {
			t.Errorf("%v: Span(%v) = %d, %d; want %d, %d", c.g, c.r, from, to, c.from, c.to)
		}
	}
	if got := day.Windows(Window{}); got != nil {
		t.Errorf("Windows(empty) = %v", got)
	}
	if from, to := (Grid{}).Span(win("2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z")); from != to {
		t.Errorf("zero Grid Span = %d, %d; want empty", from, to)
	}
}

// TestGridWindowsMillion cuts 30 years into 15-minute windows: the scale a
// fixed model's prefill and the TUI's coverage strip must handle.
func TestGridWindowsMillion(t *testing.T) {
	g := mustGrid(t, "2000-01-01T00:00:00Z", "15m", "Europe/Stockholm")
	r := win("2000-01-01T00:00:00Z", "2030-01-01T00:00:00Z")
	from, to := g.Span(r)
	if from != 0 || to != 1051968 {
		t.Fatalf("Span = %d, %d; want 0, 1051968", from, to)
	}
	if testing.Short() {
		return
	}
	ws := g.Windows(r)
	if len(ws) != 1051968 || !ws[0].Since.Equal(r.Since) || !ws[len(ws)-1].Until.Equal(r.Until) {
		t.Fatalf("Windows: %d windows from %v to %v", len(ws), ws[0], ws[len(ws)-1])
	}
	for i := 1; i < len(ws); i++ {
		if !ws[i].Since.Equal(ws[i-1].Until) || ws[i].Duration() != 15*time.Minute {
			t.Fatalf("window %d = %v after %v", i, ws[i], ws[i-1])
		}
	}
	n := 0
	for k, w := range g.WindowsSeq(r) {
		if k != n || !w.Equal(ws[k]) {
			t.Fatalf("WindowsSeq yielded %d, %v; want %d, %v", k, w, n, ws[n])
		}
		if n++; n == 1000 {
			break // stopping early must be allowed
		}
	}
}

// TestGridSkippedDay: Samoa skipped 30 December 2011, so a daily grid in
// Pacific/Apia has an empty window there; Windows and Index skip it.
func TestGridSkippedDay(t *testing.T) {
	g := mustGrid(t, "2011-12-28T16:00:00Z", "1d", "Pacific/Apia") // 06:00 local, UTC-10
	if w := g.WindowAt(1); !w.Empty() {
		t.Fatalf("WindowAt(1) = %v, want the empty window of the skipped day", w)
	}
	r := win("2011-12-28T16:00:00Z", "2012-01-01T16:00:00Z")
	want := []Window{
		win("2011-12-28T16:00:00Z", "2011-12-29T16:00:00Z"),
		win("2011-12-29T16:00:00Z", "2011-12-30T16:00:00Z"), // 29 Dec 06:00 (UTC-10) to 31 Dec 06:00 (UTC+14)
		win("2011-12-30T16:00:00Z", "2011-12-31T16:00:00Z"),
		win("2011-12-31T16:00:00Z", "2012-01-01T16:00:00Z"),
	}
	if got := g.Windows(r); !windowsEqual(got, want) {
		t.Errorf("Windows = %v, want %v", got, want)
	}
	at := utc("2011-12-29T16:00:00Z")
	if k := g.Index(at); k != 2 || !g.WindowContaining(at).Equal(want[1]) {
		t.Errorf("Index(%v) = %d, window %v", at, k, g.WindowContaining(at))
	}
}

func TestGridLastCompleteUntilAndContractRange(t *testing.T) {
	day := mustGrid(t, "2026-01-01T00:00:00Z", "1d", "UTC")
	sthlm := mustGrid(t, "2025-12-31T23:00:00Z", "1mo", "Europe/Stockholm")
	cases := []struct {
		g         Grid
		now, want string
	}{
		{day, "2026-01-03T12:00:00Z", "2026-01-03T00:00:00Z"},
		{day, "2026-01-03T00:00:00Z", "2026-01-03T00:00:00Z"}, // a window ending exactly now is complete
		{day, "2026-01-02T23:59:59Z", "2026-01-02T00:00:00Z"},
		{day, "2026-01-01T12:00:00Z", "2026-01-01T00:00:00Z"}, // none complete: Start
		{day, "2025-06-01T00:00:00Z", "2026-01-01T00:00:00Z"},
		{sthlm, "2026-04-15T00:00:00Z", "2026-03-31T22:00:00Z"}, // 1 April, CEST
	}
	for _, c := range cases {
		if got := c.g.LastCompleteUntil(utc(c.now)); !got.Equal(utc(c.want)) {
			t.Errorf("%v: LastCompleteUntil(%s) = %v, want %s", c.g, c.now, got, c.want)
		}
	}
	r, ok := day.ContractRange(utc("2026-01-03T12:00:00Z"), nil)
	if !ok || !r.Equal(win("2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z")) {
		t.Errorf("ContractRange = %v, %v", r, ok)
	}
	end := utc("2026-02-01T00:00:00Z")
	r, ok = day.ContractRange(utc("2026-01-03T12:00:00Z"), &end)
	if !ok || !r.Equal(win("2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z")) {
		t.Errorf("ContractRange with a future end = %v, %v; windows that have not happened are never in it", r, ok)
	}
	r, ok = day.ContractRange(utc("2026-03-01T00:00:00Z"), &end)
	if !ok || !r.Equal(win("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z")) {
		t.Errorf("ContractRange with a past end = %v, %v; the fixed end caps the range", r, ok)
	}
	if r, ok := day.ContractRange(utc("2026-01-01T23:00:00Z"), nil); ok {
		t.Errorf("ContractRange before the first window completes = %v, want none", r)
	}
	if r, ok := day.ContractRange(utc("2027-01-01T00:00:00Z"), &day.Start); ok {
		t.Errorf("ContractRange with end = Start = %v, want none", r)
	}
}

func windowsEqual(a, b []Window) bool { return slices.EqualFunc(a, b, Window.Equal) }

func BenchmarkGridIndex15mThirtyYears(b *testing.B) {
	g := mustGrid(b, "2000-01-01T00:00:00Z", "15m", "Europe/Stockholm")
	at := utc("2029-07-01T12:34:56Z")
	for b.Loop() {
		g.Index(at)
	}
}

func BenchmarkGridIndex1moStockholm(b *testing.B) {
	g := mustGrid(b, "1990-01-01T00:00:00Z", "1mo", "Europe/Stockholm")
	at := utc("2029-07-01T12:34:56Z")
	for b.Loop() {
		g.Index(at)
	}
}
