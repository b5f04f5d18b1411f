// Package state owns the state of bollhav's models: windows, calendar-aware
// chunking, interval sets and coverage, the records the engine keeps per unit,
// and the Store interface that the embedded SQLite and the PostgreSQL backends
// implement.
package state

import (
	"fmt"
	"strings"
	"time"
)

// Window is a half-open time range [Since, Until). Both bounds are kept in UTC
// so that two windows built from different time zones compare equal when they
// denote the same instants.
type Window struct {
	Since time.Time
	Until time.Time
}

// NewWindow returns the window [since, until) in UTC, or an error when it is
// empty or reversed: an empty window would slip past every overlap test.
func NewWindow(since, until time.Time) (Window, error) {
	if !until.After(since) {
		return Window{}, fmt.Errorf("window [%s, %s) is empty: until must be after since", FormatTime(since), FormatTime(until))
	}
	return Window{Since: since.UTC(), Until: until.UTC()}, nil
}

// MustWindow is NewWindow for literals known to be valid; it panics otherwise.
func MustWindow(since, until time.Time) Window {
	w, err := NewWindow(since, until)
	if err != nil {
		panic(err)
	}
	return w
}

// Empty reports whether the window holds no instant.
func (w Window) Empty() bool { return !w.Until.After(w.Since) }

// IsZero reports whether w is the zero Window: no window at all, which is
// how a timeless model's one existence row and "no window given" are
// spelled — not an empty range, which has bounds.
func (w Window) IsZero() bool { return w.Since.IsZero() && w.Until.IsZero() }

// Duration is the window's length in absolute time.
func (w Window) Duration() time.Duration { return w.Until.Sub(w.Since) }

// Contains reports whether t lies in [Since, Until).
func (w Window) Contains(t time.Time) bool { return !t.Before(w.Since) && t.Before(w.Until) }

// Covers reports whether o lies entirely inside w.
func (w Window) Covers(o Window) bool { return !o.Since.Before(w.Since) && !o.Until.After(w.Until) }

// Overlaps reports whether w and o share at least one instant; windows that
// only touch ([a,b) and [b,c)) do not overlap.
func (w Window) Overlaps(o Window) bool { return w.Since.Before(o.Until) && o.Since.Before(w.Until) }

// Equal reports whether both bounds denote the same instants.
func (w Window) Equal(o Window) bool { return w.Since.Equal(o.Since) && w.Until.Equal(o.Until) }

// Hull is the smallest window covering a and b: the span a change, a plan
// or an incident reports for a set of units. The zero Window is no window
// (a timeless model's existence row, or nothing yet) and adds nothing on
// either side, so folding Hull over windows from the zero Window gives their
// hull. On a tie a's bound is kept.
func Hull(a, b Window) Window {
	if a.IsZero() {
		return b
	}
	if b.IsZero() {
		return a
	}
	if b.Since.Before(a.Since) {
		a.Since = b.Since
	}
	if b.Until.After(a.Until) {
		a.Until = b.Until
	}
	return a
}

// String prints the window as "[since, until)" in RFC 3339 UTC.
func (w Window) String() string {
	return "[" + FormatTime(w.Since) + ", " + FormatTime(w.Until) + ")"
}

// FormatTime prints t as RFC 3339 in UTC with a trailing Z, the one form
// bollhav uses for timestamps in text, JSON and the store.
func FormatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ParseTime reads a timestamp as RFC 3339 ("2026-01-01T00:00:00Z",
// "2026-01-01T01:00:00+01:00"), as a date ("2026-01-01", midnight UTC), or as a
// date and time without zone ("2026-01-01T06:00", UTC). It refuses instants
// whose UTC year falls outside 0000..9999, because FormatTime could not print
// them back in a form ParseTime reads.
func ParseTime(s string) (time.Time, error) {
	in := strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		t, err := time.Parse(layout, in)
		if err != nil {
			continue
		}
		t = t.UTC()
		if y := t.Year(); y < 0 || y > 9999 {
			return time.Time{}, fmt.Errorf("invalid time %q: in UTC it falls in year %d, outside 0000..9999", s, y)
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("invalid time %q: want RFC 3339 (2026-01-01T00:00:00Z) or a date (2026-01-01)", s)
}
