package state

import (
	"strings"
	"testing"
	"time"
)

// utc parses an RFC 3339 literal, for hand-worked expectations.
func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// win is the window [since, until) from two RFC 3339 literals.
func win(since, until string) Window { return Window{Since: utc(since), Until: utc(until)} }

func TestNewWindow(t *testing.T) {
	stockholm := mustLoad(t, "Europe/Stockholm")
	w, err := NewWindow(time.Date(2026, 1, 1, 1, 0, 0, 0, stockholm), time.Date(2026, 1, 2, 1, 0, 0, 0, stockholm))
	if err != nil {
		t.Fatal(err)
	}
	if want := win("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"); w != want {
		t.Errorf("NewWindow = %v (%v), want %v in UTC", w, w.Since.Location(), want)
	}
	for _, c := range []struct{ since, until string }{
		{"2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"},
		{"2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z"},
	} {
		_, err := NewWindow(utc(c.since), utc(c.until))
		if err == nil || !strings.Contains(err.Error(), "is empty") {
			t.Errorf("NewWindow(%s, %s) error = %v, want an empty-window error", c.since, c.until, err)
		}
	}
}

func TestWindowRelations(t *testing.T) {
	day := win("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")
	cases := []struct {
		o                Window
		covers, overlaps bool
		containsSince    bool // whether day contains o.Since
	}{
		{win("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"), true, true, true},
		{win("2026-01-01T06:00:00Z", "2026-01-01T07:00:00Z"), true, true, true},
		{win("2025-12-31T23:00:00Z", "2026-01-01T01:00:00Z"), false, true, false},
		{win("2026-01-01T23:00:00Z", "2026-01-02T01:00:00Z"), false, true, true},
		{win("2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"), false, false, false}, // touches after
		{win("2025-12-31T00:00:00Z", "2026-01-01T00:00:00Z"), false, false, false}, // touches before
		{win("2025-12-31T00:00:00Z", "2026-01-03T00:00:00Z"), false, true, false},
	}
	for _, c := range cases {
		if got := day.Covers(c.o); got != c.covers {
			t.Errorf("%v.Covers(%v) = %v, want %v", day, c.o, got, c.covers)
		}
		if got := day.Overlaps(c.o); got != c.overlaps {
			t.Errorf("%v.Overlaps(%v) = %v, want %v", day, c.o, got, c.overlaps)
		}
		if got := c.o.Overlaps(day); got != c.overlaps {
			t.Errorf("Overlaps is not symmetric for %v, %v", c.o, day)
		}
		if got := day.Contains(c.o.Since); got != c.containsSince {
			t.Errorf("%v.Contains(%s) = %v, want %v", day, FormatTime(c.o.Since), got, c.containsSince)
		}
	}
	if day.Contains(day.Until) {
		t.Error("a window contains its until; windows are half-open")
	}
	if got, want := day.String(), "[2026-01-01T00:00:00Z, 2026-01-02T00:00:00Z)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestParseTime(t *testing.T) {
	valid := []struct{ in, want string }{
		{"2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"},
		{"  2026-01-01T00:00:00Z\n", "2026-01-01T00:00:00Z"},
		{"2026-01-01T01:00:00+01:00", "2026-01-01T00:00:00Z"},
		{"2026-03-29T03:00:00+02:00", "2026-03-29T01:00:00Z"},
		{"2026-01-01T00:00:00.5Z", "2026-01-01T00:00:00.5Z"},
		{"2026-01-01", "2026-01-01T00:00:00Z"},
		{"2026-01-01T06:00", "2026-01-01T06:00:00Z"},
		{"2026-01-01T06:00:30", "2026-01-01T06:00:30Z"},
		{"2026-01-01 06:00", "2026-01-01T06:00:00Z"},
		{"2026-01-01 06:00:30", "2026-01-01T06:00:30Z"},
		{"2028-02-29", "2028-02-29T00:00:00Z"},
		{"0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z"},
		{"9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"},
	}
	for _, c := range valid {
		got, err := ParseTime(c.in)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", c.in, err)
			continue
		}
		if !got.Equal(utc(c.want)) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, want %s in UTC", c.in, got, c.want)
		}
	}
	invalid := []struct{ in, why string }{
		{"", "want RFC 3339"},
		{"yesterday", "want RFC 3339"},
		{"2026-13-01", "want RFC 3339"},
		{"2027-02-29", "want RFC 3339"},
		{"2026-01-01T24:00:00Z", "want RFC 3339"},
		{"2026-01-01T00:00:00+25:00", "want RFC 3339"},
		{"26-01-01", "want RFC 3339"},
		{"2026/01/01", "want RFC 3339"},
		{"0000-01-01T00:00:00+01:00", "year -1"},
		{"9999-12-31T23:00:00-05:00", "year 10000"},
	}
	for _, c := range invalid {
		_, err := ParseTime(c.in)
		if err == nil || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), c.in) {
			t.Errorf("ParseTime(%q) error = %v, want one naming the input and %q", c.in, err, c.why)
		}
	}
}

func TestFormatTime(t *testing.T) {
	stockholm := mustLoad(t, "Europe/Stockholm")
	if got, want := FormatTime(time.Date(2026, 7, 1, 2, 0, 0, 0, stockholm)), "2026-07-01T00:00:00Z"; got != want {
		t.Errorf("FormatTime = %q, want %q", got, want)
	}
}

// TestWindowIsZero: only the zero Window is zero; an empty range has
// bounds and is not "no window".
func TestWindowIsZero(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		w    Window
		want bool
	}{
		{Window{}, true},
		{Window{Since: at, Until: at}, false},
		{Window{Since: at}, false},
		{Window{Until: at}, false},
		{MustWindow(at, at.Add(time.Hour)), false},
	} {
		if got := tc.w.IsZero(); got != tc.want {
			t.Errorf("%v.IsZero() = %v, want %v", tc.w, got, tc.want)
		}
	}
}

// TestHull: the hull of windows folded from the zero Window is the earliest
// since to the latest until, whatever the order, gaps included; the zero
// Window adds nothing on either side.
func TestHull(t *testing.T) {
	a := win("2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z")
	b := win("2026-01-01T03:00:00Z", "2026-01-01T04:00:00Z")
	inside := win("2026-01-01T00:30:00Z", "2026-01-01T00:45:00Z")
	span := win("2026-01-01T00:00:00Z", "2026-01-01T04:00:00Z")
	for _, tc := range []struct {
		name string
		ws   []Window
		want Window
	}{
		{"none", nil, Window{}},
		{"one", []Window{a}, a},
		{"ordered, a gap between", []Window{a, b}, span},
		{"reversed", []Window{b, a}, span},
		{"one inside the other", []Window{a, inside}, a},
		{"inside first", []Window{inside, b, a}, span},
		{"the same twice", []Window{a, a}, a},
		{"a zero window among them", []Window{a, {}, b}, span},
		{"only zero windows", []Window{{}, {}}, Window{}},
	} {
		var h Window
		for _, w := range tc.ws {
			h = Hull(h, w)
		}
		if !h.Equal(tc.want) {
			t.Errorf("%s: hull of %v = %v, want %v", tc.name, tc.ws, h, tc.want)
		}
	}
	if got := Hull(Window{}, a); got != a {
		t.Errorf("Hull(zero, %v) = %v, want %v: the zero Window is no window", a, got, a)
	}
	if got := Hull(a, Window{}); got != a {
		t.Errorf("Hull(%v, zero) = %v, want %v: the zero Window is no window", a, got, a)
	}
	// On a tie a's bounds are kept, in a's location.
	stockholm := mustLoad(t, "Europe/Stockholm")
	local := Window{Since: a.Since.In(stockholm), Until: a.Until.In(stockholm)}
	if got := Hull(a, local); got != a {
		t.Errorf("Hull(%v, the same instants elsewhere) = %#v, want a's own bounds", a, got)
	}
}
