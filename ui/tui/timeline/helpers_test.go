package timeline

import (
	"regexp"
	"testing"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/bollhav/bollhav/state"
)

// ts parses an RFC 3339 instant or panics.
func ts(s string) time.Time {
	t, err := state.ParseTime(s)
	if err != nil {
		panic(err)
	}
	return t
}

func win(since, until string) state.Window { return state.MustWindow(ts(since), ts(until)) }

func seg(since, until string, s Status) Segment { return Segment{Window: win(since, until), Status: s} }

func grid(t *testing.T, start, interval string, zone string) state.Grid {
	t.Helper()
	loc, err := state.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	g, err := state.NewGrid(ts(start), state.MustInterval(interval), loc)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// units builds one segment per window of g from its window k0 on, taking
// each status in turn from statuses; "" leaves a hole.
func units(g state.Grid, k0 int, statuses ...Status) []Segment {
	var out []Segment
	for i, s := range statuses {
		if s != "" {
			out = append(out, Segment{Window: g.WindowAt(k0 + i), Status: s})
		}
	}
	return out
}

// repeat returns s n times.
func repeat(s Status, n int) []Status {
	out := make([]Status, n)
	for i := range out {
		out[i] = s
	}
	return out
}

var ansiRE = regexp.MustCompile("\x1b")

// checkLine fails unless line is exactly width cells on one line, and,
// when plain, holds no escape code.
func checkLine(t *testing.T, what, line string, width int, plain bool) {
	t.Helper()
	if got := lipgloss.Width(line); got != width {
		t.Errorf("%s: %d cells wide, want %d: %q", what, got, width, line)
	}
	if lipgloss.Height(line) != 1 {
		t.Errorf("%s: more than one line: %q", what, line)
	}
	if plain && ansiRE.MatchString(line) {
		t.Errorf("%s: plain output has an escape code: %q", what, line)
	}
}

// colour is a styled Styles: every status, the cursor, the ruler and the
// verdicts carry a colour or attribute, so escape codes appear everywhere
// they can.
func colour(g Glyphs) Styles {
	fg := func(c string) lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Color(c)) }
	return Styles{
		Glyphs: g,
		Status: map[Status]lipgloss.Style{
			Applied: fg("#5FD75F"), Pending: fg("#8A8A8A"), Running: fg("#5FAFFF"), Blocked: fg("#FFD75F").Bold(true),
			Failed: fg("#FF5F5F").Bold(true), Stale: fg("#D787FF"), Missing: fg("#6C6C6C"),
			// A careless theme: padding and width must not widen a cell.
			Outside: lipgloss.NewStyle().Padding(0, 2).Width(9),
		},
		Cursor: lipgloss.NewStyle().Reverse(true),
		Ruler:  fg("#808080"),
		Verdict: map[Verdict]lipgloss.Style{
			VerdictOK: fg("#5FD75F"), VerdictUnmet: fg("#FF5F5F").Underline(true), VerdictStale: fg("#D787FF"), VerdictError: fg("#FF0000").Bold(true),
		},
	}
}

// Center scrolls so that the column holding t is the middle one: for jumps
// (to a blocked unit, to now) rather than steps.
func (a Axis) Center(t time.Time) Axis {
	return a.Scroll(a.Column(t) - a.Width()/2)
}

// Resize changes the width, keeping column 0 where it is.
func (a Axis) Resize(width int) Axis {
	if width == a.Width() {
		return a
	}
	return newAxis(a.zoom, a.model, a.grid, a.scale, a.first, width)
}

// Summary is the contract's one-line verdict with its evidence, e.g.
// "ENCAPSULATE unmet · 18h/24h covered (75%)", "THROUGH unmet · first gap
// 2026-03-03T06:00Z", "WHOLE stale · complete · newest 26h old, limit 24h".
// Instants are UTC. It needs no colour to be read.
func Summary(c Contract, up Track) string { return summary(c, Assess(c, up)) }

// Legend explains the glyphs, "█ applied  ░ pending  …", in the statuses'
// colours, exactly width cells; entries that do not fit are left out.
func Legend(st Styles, width int) string { return LegendFor(st, width, nil) }

// Worse reports whether a comes before b in Order (outside is better than
// every other status; an unknown one counts as pending).
func Worse(a, b Status) bool { return rankOf(a) > rankOf(b) }
