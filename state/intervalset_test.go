package state

import (
	"testing"
	"time"
)

// h is 2026-01-01 plus n hours, for compact set literals.
func h(n float64) time.Time {
	return utc("2026-01-01T00:00:00Z").Add(time.Duration(n * float64(time.Hour)))
}

// hw is the window [h(a), h(b)).
func hw(a, b float64) Window { return Window{Since: h(a), Until: h(b)} }

func set(ws ...Window) IntervalSet { return NewIntervalSet(ws...) }

func TestNewIntervalSetNormalizes(t *testing.T) {
	stockholm := mustLoad(t, "Europe/Stockholm")
	cases := []struct {
		in   []Window
		want []Window
	}{
		{nil, nil},
		{[]Window{{}}, nil},
		{[]Window{hw(3, 2)}, nil}, // reversed counts as empty
		{[]Window{hw(0, 1), hw(1, 2)}, []Window{hw(0, 2)}}, // touching merge
		{[]Window{hw(4, 5), hw(0, 1), hw(2, 3)}, []Window{hw(0, 1), hw(2, 3), hw(4, 5)}},
		{[]Window{hw(0, 10), hw(2, 3), hw(9, 12)}, []Window{hw(0, 12)}},
		{[]Window{hw(0, 1), hw(0, 1)}, []Window{hw(0, 1)}},
		{[]Window{{Since: h(0).In(stockholm), Until: h(1).In(stockholm)}, hw(1, 2)}, []Window{hw(0, 2)}},
	}
	for _, c := range cases {
		got := NewIntervalSet(c.in...)
		if !windowsEqual(got.Windows(), c.want) {
			t.Errorf("NewIntervalSet(%v) = %v, want %v", c.in, got, c.want)
		}
		for _, w := range got.Windows() {
			if w.Since.Location() != time.UTC || w.Until.Location() != time.UTC {
				t.Errorf("NewIntervalSet kept %v outside UTC", w)
			}
		}
	}
}

func TestIntervalSetOps(t *testing.T) {
	base := set(hw(0, 2), hw(4, 6), hw(8, 10))
	add := []struct {
		w    Window
		want []Window
	}{
		{hw(2, 4), []Window{hw(0, 6), hw(8, 10)}}, // fills a hole exactly: touching both sides
		{hw(2.5, 3.5), []Window{hw(0, 2), hw(2.5, 3.5), hw(4, 6), hw(8, 10)}},
		{hw(-1, 11), []Window{hw(-1, 11)}},
		{hw(1, 9), []Window{hw(0, 10)}},
		{hw(10, 11), []Window{hw(0, 2), hw(4, 6), hw(8, 11)}},
		{hw(-2, -1), []Window{hw(-2, -1), hw(0, 2), hw(4, 6), hw(8, 10)}},
		{Window{}, []Window{hw(0, 2), hw(4, 6), hw(8, 10)}},
	}
	for _, c := range add {
		if got := base.Add(c.w); !windowsEqual(got.Windows(), c.want) {
			t.Errorf("%v.Add(%v) = %v, want %v", base, c.w, got, c.want)
		}
	}
	if got, want := base.Union(set(hw(1, 4.5), hw(6, 8), hw(20, 21))), []Window{hw(0, 10), hw(20, 21)}; !windowsEqual(got.Windows(), want) {
		t.Errorf("Union = %v, want %v", got, want)
	}
	if got := base.Union(IntervalSet{}); !got.Equal(base) {
		t.Errorf("Union with empty = %v", got)
	}
	sub := []struct {
		o    IntervalSet
		want []Window
	}{
		{set(hw(1, 5)), []Window{hw(0, 1), hw(5, 6), hw(8, 10)}},
		{set(hw(0, 2), hw(4, 6), hw(8, 10)), nil},
		{set(hw(8.5, 9), hw(9.5, 20)), []Window{hw(0, 2), hw(4, 6), hw(8, 8.5), hw(9, 9.5)}},
		{set(hw(2, 4), hw(6, 8)), []Window{hw(0, 2), hw(4, 6), hw(8, 10)}}, // touching removes nothing
		{set(hw(-5, 0.5), hw(5.5, 8.5)), []Window{hw(0.5, 2), hw(4, 5.5), hw(8.5, 10)}},
		{IntervalSet{}, []Window{hw(0, 2), hw(4, 6), hw(8, 10)}},
	}
	for _, c := range sub {
		if got := base.Subtract(c.o); !windowsEqual(got.Windows(), c.want) {
			t.Errorf("%v.Subtract(%v) = %v, want %v", base, c.o, got, c.want)
		}
	}
	if got, want := base.SubtractWindow(hw(5, 9)), []Window{hw(0, 2), hw(4, 5), hw(9, 10)}; !windowsEqual(got.Windows(), want) {
		t.Errorf("SubtractWindow = %v, want %v", got, want)
	}
	inter := []struct {
		w    Window
		want []Window
	}{
		{hw(1, 9), []Window{hw(1, 2), hw(4, 6), hw(8, 9)}},
		{hw(2, 4), nil},
		{hw(4.5, 5), []Window{hw(4.5, 5)}},
		{hw(-3, 30), []Window{hw(0, 2), hw(4, 6), hw(8, 10)}},
		{Window{}, nil},
	}
	for _, c := range inter {
		if got := base.Intersect(c.w); !windowsEqual(got.Windows(), c.want) {
			t.Errorf("%v.Intersect(%v) = %v, want %v", base, c.w, got, c.want)
		}
	}
}

func TestIntervalSetCoversAndGaps(t *testing.T) {
	// Hourly units applied for a day with 05:00 and 13:00-15:00 missing.
	var s IntervalSet
	for i := 0; i < 24; i++ {
		if i != 5 && i != 13 && i != 14 {
			s = s.Add(hw(float64(i), float64(i+1)))
		}
	}
	if got, want := s.Windows(), []Window{hw(0, 5), hw(6, 13), hw(15, 24)}; !windowsEqual(got, want) {
		t.Fatalf("hourly adds = %v, want %v", got, want)
	}
	cases := []struct {
		w      Window
		covers bool
		gaps   []Window
	}{
		{hw(0, 5), true, nil},
		{hw(1, 2), true, nil},
		{hw(4, 6), false, []Window{hw(5, 6)}},
		{hw(0, 24), false, []Window{hw(5, 6), hw(13, 15)}},
		{hw(-2, 26), false, []Window{hw(-2, 0), hw(5, 6), hw(13, 15), hw(24, 26)}},
		{hw(13.5, 14), false, []Window{hw(13.5, 14)}},
		{hw(24, 25), false, []Window{hw(24, 25)}},
		{hw(15, 24), true, nil},
		{Window{Since: h(3), Until: h(3)}, true, nil},
	}
	for _, c := range cases {
		if got := s.Covers(c.w); got != c.covers {
			t.Errorf("%v.Covers(%v) = %v, want %v", s, c.w, got, c.covers)
		}
		if got := s.Gaps(c.w); !windowsEqual(got, c.gaps) {
			t.Errorf("%v.Gaps(%v) = %v, want %v", s, c.w, got, c.gaps)
		}
	}
	var empty IntervalSet
	if empty.Covers(hw(0, 1)) || !windowsEqual(empty.Gaps(hw(0, 1)), []Window{hw(0, 1)}) || !empty.Empty() || empty.Len() != 0 {
		t.Error("the zero IntervalSet must be empty and cover nothing")
	}
}

func TestIntervalSetValueSemantics(t *testing.T) {
	base := set(hw(0, 1), hw(2, 3))
	ws := base.Windows()
	ws[0] = hw(100, 200)
	if !base.Equal(set(hw(0, 1), hw(2, 3))) {
		t.Fatalf("mutating Windows() changed the set: %v", base)
	}
	a := base.Add(hw(5, 6))
	b := base.Add(hw(7, 8))
	_ = base.Union(set(hw(1, 2))).Subtract(set(hw(0, 0.5)))
	_ = base.SubtractWindow(hw(0, 3))
	_ = base.Intersect(hw(0, 2.5))
	if !base.Equal(set(hw(0, 1), hw(2, 3))) || !a.Equal(set(hw(0, 1), hw(2, 3), hw(5, 6))) || !b.Equal(set(hw(0, 1), hw(2, 3), hw(7, 8))) {
		t.Errorf("operations aliased: base %v, a %v, b %v", base, a, b)
	}
	in := []Window{hw(0, 1)}
	s := NewIntervalSet(in...)
	in[0] = hw(5, 6)
	if !s.Equal(set(hw(0, 1))) {
		t.Errorf("NewIntervalSet aliased its argument: %v", s)
	}
}

func TestIntervalSetString(t *testing.T) {
	if got := (IntervalSet{}).String(); got != "{}" {
		t.Errorf("empty String = %q", got)
	}
	if got, want := set(hw(0, 1), hw(2, 3)).String(), "{[2026-01-01T00:00:00Z, 2026-01-01T01:00:00Z), [2026-01-01T02:00:00Z, 2026-01-01T03:00:00Z)}"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got := set(hw(0, 1), hw(2, 3.5)).Duration(); got != 150*time.Minute {
		t.Errorf("Duration = %v", got)
	}
}

func TestSliceByChunk(t *testing.T) {
	hourly := mustGrid(t, "2026-01-01T00:00:00Z", "1h", "UTC")
	sthlm := mustGrid(t, "2026-03-27T23:00:00Z", "1d", "Europe/Stockholm")
	cases := []struct {
		gaps []Window
		g    Grid
		want []Window
	}{
		{[]Window{hw(0.25, 2.5)}, hourly, []Window{hw(0.25, 1), hw(1, 2), hw(2, 2.5)}},
		{[]Window{hw(1, 3)}, hourly, []Window{hw(1, 2), hw(2, 3)}},
		{[]Window{hw(1.25, 1.75)}, hourly, []Window{hw(1.25, 1.75)}},
		{[]Window{hw(0, 1), hw(3.5, 4.5)}, hourly, []Window{hw(0, 1), hw(3.5, 4), hw(4, 4.5)}},
		{[]Window{hw(-1.5, 0.5)}, hourly, []Window{hw(-1.5, -1), hw(-1, 0), hw(0, 0.5)}}, // before Start: the extended grid
		{[]Window{{}, hw(1, 1)}, hourly, nil},
		{[]Window{win("2026-03-28T12:00:00Z", "2026-03-30T12:00:00Z")}, sthlm, []Window{
			win("2026-03-28T12:00:00Z", "2026-03-28T23:00:00Z"),
			win("2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"), // the 23-hour day
			win("2026-03-29T22:00:00Z", "2026-03-30T12:00:00Z"),
		}},
	}
	for _, c := range cases {
		if got := SliceByChunk(c.gaps, c.g); !windowsEqual(got, c.want) {
			t.Errorf("SliceByChunk(%v, %v) = %v, want %v", c.gaps, c.g, got, c.want)
		}
	}
}

func BenchmarkIntervalSetCovers(b *testing.B) {
	// A million hourly units applied, every tenth one missing: 100,000 islands.
	ws := make([]Window, 0, 1000000)
	for i := 0; i < 1000000; i++ {
		if i%10 != 9 {
			ws = append(ws, hw(float64(i), float64(i+1)))
		}
	}
	s := NewIntervalSet(ws...)
	for i := 0; b.Loop(); i++ {
		s.Covers(hw(float64(i%1000000), float64(i%1000000+1)))
	}
}
