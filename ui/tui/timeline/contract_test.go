package timeline

import (
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

// upstreamFixture is an hourly upstream in UTC with the range
// [03-01, 03-08): every hour applied except 03-03 06:00–12:00 (six hours
// with no unit) and 03-05 10:00 (failed). Under a daily downstream axis
// from 03-01 its strip reads, per day:
//
//	03-01 █, 03-02 █, 03-03 · (the hole), 03-04 █, 03-05 ✗, 03-06 █,
//	03-07 █, then blank: "██·█✗██" and blanks.
func upstreamFixture(t *testing.T) (down state.Grid, up Track) {
	t.Helper()
	h := grid(t, "2026-03-01T00:00:00Z", "1h", "UTC")
	st := repeat(Applied, 7*24)
	for i := 2*24 + 6; i < 2*24+12; i++ {
		st[i] = ""
	}
	st[4*24+10] = Failed
	up = NewTrack(units(h, 0, st...), win("2026-03-01T00:00:00Z", "2026-03-08T00:00:00Z"))
	return grid(t, "2026-03-01T00:00:00Z", "1d", "UTC"), up
}

func TestUpstreamStripOnDownstreamAxis(t *testing.T) {
	down, up := upstreamFixture(t)
	a := NewAxis(down, ZoomGrain, down.Start, 60)
	if got, want := Strip(a, up, state.Window{}, Styles{}), "██·█✗██"+strings.Repeat(" ", 53); got != want {
		t.Errorf("upstream strip = %q, want %q", got, want)
	}
}

// The verdict line of each level for the cursor's daily window, at 60
// columns (one per day from 03-01). Marks: ▔ under a needed day whose part
// is applied, ╳ under one with a hole (a missing hour, a failed one); the
// summary one blank right of the marks.
func TestMarks(t *testing.T) {
	down, up := upstreamFixture(t)
	day := func(d int) state.Window { return down.WindowAt(d - 1) } // day(4) is 03-04
	pad := func(s string) string { return s + strings.Repeat(" ", 60-len([]rune(s))) }
	for _, c := range []struct {
		name string
		c    Contract
		want string
	}{
		// 03-04 is covered by 24 hourly rows, but EXACT wants one row of
		// exactly [03-04, 03-05): unmet (EXACT across grains blocks).
		{"exact finer rows", Contract{Level: LevelExact, Window: day(4)},
			pad("   ▔ EXACT unmet · no exact row (100% covered)")},
		// 03-03 misses 06:00–12:00: 18 of 24 hours.
		{"encapsulate hole", Contract{Level: LevelEncapsulate, Window: day(3)},
			pad("  ╳ ENCAPSULATE unmet · 18h/24h covered (75%)")},
		// 03-05's failed hour is not applied: 23 of 24, 95.83% rounded down.
		{"encapsulate failed hour", Contract{Level: LevelEncapsulate, Window: day(5)},
			pad("    ╳ ENCAPSULATE unmet · 23h/24h covered (95.8%)")},
		{"encapsulate ok", Contract{Level: LevelEncapsulate, Window: day(4)},
			pad("   ▔ ENCAPSULATE ok · 24h/24h covered (100%)")},
		// THROUGH for 03-06 needs [03-01, 03-07): days 1–6 marked, the
		// holes on 03-03 and 03-05 crossed; the frontier is 03-03 06:00.
		{"through unmet", Contract{Level: LevelThrough, Window: day(6)},
			pad("▔▔╳▔╳▔ THROUGH unmet · first gap 2026-03-03T06:00Z")},
		// THROUGH for 03-02 needs [03-01, 03-03), all applied.
		{"through ok", Contract{Level: LevelThrough, Window: day(2)},
			pad("▔▔ THROUGH ok · gap-free to 2026-03-03T06:00Z")},
		// ENCAPSULATE complete but the newest row is 26h old, limit 24h.
		// The summary (71 cells) does not fit the 55 right of the mark,
		// so the line shortens it to "LEVEL verdict"; Summary has it all.
		{"stale", Contract{Level: LevelEncapsulate, Window: day(4), Age: 26 * time.Hour, Within: 24 * time.Hour},
			pad("   ▔ ENCAPSULATE stale")},
		{"fresh, scope ALL", Contract{Level: LevelEncapsulate, Window: day(4), Age: 3 * time.Hour, Within: 24 * time.Hour, Scope: "ALL"},
			pad("   ▔ ENCAPSULATE ok")},
		// The gate's verdict wins over the track's.
		{"engine verdict", Contract{Level: LevelEncapsulate, Window: day(3), Verdict: VerdictOK},
			pad("  ╳ ENCAPSULATE ok · 18h/24h covered (75%)")},
		{"hard error", Contract{Level: LevelExact, Window: day(4), Verdict: VerdictError, Err: "on a flexible upstream (Guard A)"},
			pad("   ▔ EXACT error · on a flexible upstream (Guard A)")},
		{"exists", Contract{Level: LevelExists, Window: day(4)},
			pad("EXISTS ok · registered")},
	} {
		a := NewAxis(down, ZoomGrain, down.Start, 60)
		if got := Marks(a, up, c.c, Styles{}); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// Freshness joins the summary: the age of the rows the level selects
// (newest for LATEST, oldest for ALL) against the limit.
func TestSummaryFreshness(t *testing.T) {
	down, up := upstreamFixture(t)
	for _, c := range []struct {
		c    Contract
		want string
	}{
		{Contract{Level: LevelEncapsulate, Window: down.WindowAt(3), Age: 26 * time.Hour, Within: 24 * time.Hour},
			"ENCAPSULATE stale · 24h/24h covered (100%) · newest 26h old, limit 24h"},
		{Contract{Level: LevelEncapsulate, Window: down.WindowAt(3), Age: 3 * time.Hour, Within: 24 * time.Hour, Scope: "ALL"},
			"ENCAPSULATE ok · 24h/24h covered (100%) · oldest 3h old, limit 24h"},
		// Freshness is checked after completeness: an incomplete window
		// is unmet, not stale, but its age is still shown.
		{Contract{Level: LevelEncapsulate, Window: down.WindowAt(2), Age: 50 * time.Hour, Within: 24 * time.Hour},
			"ENCAPSULATE unmet · 18h/24h covered (75%) · newest 2d2h old, limit 24h"},
	} {
		if got := Summary(c.c, up); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

// WHOLE needs the upstream's range [03-01, 03-08): 7 days, 161 of 168
// hours applied (95.83% → "95.8%"), the first gap at 03-03 06:00. At 80
// columns the summary fits right of the marks.
func TestMarksWhole(t *testing.T) {
	down, up := upstreamFixture(t)
	a := NewAxis(down, ZoomGrain, down.Start, 80)
	want := "▔▔╳▔╳▔▔ WHOLE unmet · 95.8% applied, first gap 2026-03-03T06:00Z"
	want += strings.Repeat(" ", 80-len([]rune(want)))
	if got := Marks(a, up, Contract{Level: LevelWhole, Window: down.WindowAt(9)}, Styles{}); got != want {
		t.Errorf("WHOLE:\n got %q\nwant %q", got, want)
	}
	as := Assess(Contract{Level: LevelWhole}, up)
	if as.Covered != 161*time.Hour || !as.Frontier.Equal(ts("2026-03-03T06:00:00Z")) || as.Verdict != VerdictUnmet {
		t.Errorf("Assess(WHOLE) = %+v", as)
	}
	// An upstream with every hour applied is complete.
	h := grid(t, "2026-03-01T00:00:00Z", "1h", "UTC")
	full := NewTrack(units(h, 0, repeat(Applied, 48)...), state.Window{})
	if got := Summary(Contract{Level: LevelWhole}, full); got != "WHOLE ok · complete" {
		t.Errorf("complete WHOLE = %q", got)
	}
	if got := Summary(Contract{Level: LevelWhole}, Track{}); got != "WHOLE unmet · no complete window yet" {
		t.Errorf("empty WHOLE = %q", got)
	}
}

// EXACT is met by a row of exactly the window, whatever covers it else.
func TestExactRow(t *testing.T) {
	d := grid(t, "2026-03-01T00:00:00Z", "1d", "UTC")
	up := NewTrack(units(d, 0, Applied, Applied, Pending, Applied), state.Window{})
	for day, want := range map[int]string{
		1: "EXACT ok · row applied",
		2: "EXACT unmet · row pending",
		9: "EXACT unmet · no exact row (0% covered)",
	} {
		if got := Summary(Contract{Level: LevelExact, Window: d.WindowAt(day)}, up); got != want {
			t.Errorf("day %d: %q, want %q", day, got, want)
		}
	}
}

// When the needed range starts before the axis, ◂ stands at column 0
// (over 03-03's mark); when room is short the summary shrinks to
// "LEVEL verdict", and with no room at all "unmet" overwrites the end.
func TestMarksEdges(t *testing.T) {
	down, up := upstreamFixture(t)
	through := Contract{Level: LevelThrough, Window: down.WindowAt(5)} // 03-06
	a := NewAxis(down, ZoomGrain, ts("2026-03-03T00:00:00Z"), 60)
	want := "◂▔╳▔ THROUGH unmet · first gap 2026-03-03T06:00Z"
	if got := Marks(a, up, through, Styles{}); got != want+strings.Repeat(" ", 60-len([]rune(want))) {
		t.Errorf("off-screen start: %q", got)
	}
	a = NewAxis(down, ZoomGrain, down.Start, 40)
	want = "▔▔╳▔╳▔ THROUGH unmet"
	if got := Marks(a, up, through, Styles{}); got != want+strings.Repeat(" ", 40-len([]rune(want))) {
		t.Errorf("short room: %q", got)
	}
	h := grid(t, "2026-03-01T00:00:00Z", "1h", "UTC")
	a = NewAxis(h, ZoomGrain, ts("2026-03-02T00:00:00Z"), 40)
	got := Marks(a, up, Contract{Level: LevelWhole}, Styles{})
	// The hourly axis shows 03-02 00:00 to 03-03 16:00, all inside the
	// range: ◂, applied hours, the hole at columns 30–35, and "unmet"
	// written over the last six columns.
	if want := "◂" + strings.Repeat("▔", 29) + "╳╳╳╳ unmet"; got != want {
		t.Errorf("no room:\n got %q\nwant %q", got, want)
	}
}

// A daily model in Europe/Stockholm: its 2026-03-29 window is 23 hours
// long (DST starts), and an hourly UTC upstream covers it with 23 rows.
func TestEncapsulateDSTDay(t *testing.T) {
	d := grid(t, "2026-03-28T00:00:00+01:00", "1d", "Europe/Stockholm")
	h := grid(t, "2026-03-27T23:00:00Z", "1h", "UTC")
	up := NewTrack(units(h, 0, repeat(Applied, 24+23+24)...), state.Window{})
	w := d.WindowAt(1)
	if !w.Equal(win("2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z")) {
		t.Fatalf("the DST day is %s", w)
	}
	if got, want := Summary(Contract{Level: LevelEncapsulate, Window: w}, up), "ENCAPSULATE ok · 23h/23h covered (100%)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestParseLevel(t *testing.T) {
	for l := LevelExists; l <= LevelWhole; l++ {
		if got, err := ParseLevel(strings.ToLower(l.String())); err != nil || got != l {
			t.Errorf("ParseLevel(%s) = %v, %v", l, got, err)
		}
	}
	if _, err := ParseLevel("WINDOW"); err == nil {
		t.Error("ParseLevel(WINDOW) succeeded")
	}
}
