package timeline

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/bollhav/bollhav/state"
)

// Level is a contract level of the design (docs/design.md, Contracts).
type Level int

// The five levels.
const (
	LevelExists Level = iota + 1
	LevelExact
	LevelEncapsulate
	LevelThrough
	LevelWhole
)

var levelNames = [...]string{"", "EXISTS", "EXACT", "ENCAPSULATE", "THROUGH", "WHOLE"}

// String prints the level in upper case, as the engine's blocked reasons do.
func (l Level) String() string {
	if l > 0 && int(l) < len(levelNames) {
		return levelNames[l]
	}
	return "LEVEL(" + strconv.Itoa(int(l)) + ")"
}

// ParseLevel reads a level in any case ("EXACT", "encapsulate"), so the UI
// converts the engine's ContractLevel through its String.
func ParseLevel(s string) (Level, error) {
	for l := LevelExists; l <= LevelWhole; l++ {
		if strings.EqualFold(s, levelNames[l]) {
			return l, nil
		}
	}
	return 0, fmt.Errorf("unknown contract level %q: want EXISTS, EXACT, ENCAPSULATE, THROUGH or WHOLE", s)
}

// Verdict is a contract's answer for one downstream window.
type Verdict int

// The verdicts. VerdictUnknown asks Assess to derive one from the track.
const (
	VerdictUnknown Verdict = iota
	VerdictOK
	VerdictUnmet
	VerdictStale
	VerdictError
)

var verdictNames = [...]string{"?", "ok", "unmet", "stale", "error"}

// String is the verdict's word in labels: "ok", "unmet", "stale", "error".
func (v Verdict) String() string {
	if v >= 0 && int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return "?"
}

// Contract is one gated upstream's contract checked for one downstream
// window (the cursor's), with the gate's verdict when the caller has it.
type Contract struct {
	Level Level
	// Window is the downstream unit's window.
	Window state.Window
	// Verdict is the gate's own answer (gate.Evaluate: Satisfied,
	// Stale, Err). VerdictUnknown derives completeness from the upstream's
	// track and freshness from Age and Within — a display aid that agrees
	// with the gate when the track holds the rows the gate read.
	Verdict Verdict
	// Age is how old the rows the level selects are: now minus their newest
	// applied_at (LATEST) or oldest (ALL); zero when unknown.
	Age time.Duration
	// Within is the freshness limit; zero means the contract has none.
	Within time.Duration
	// Scope is the freshness scope, "LATEST" (the default) or "ALL".
	Scope string
	// Err is the hard error's message when Verdict is VerdictError.
	Err string
}

// Assessment is what a contract needs of an upstream's coverage and how
// much of it is there.
type Assessment struct {
	Verdict Verdict
	// Need is the part of the upstream the level reads: the downstream
	// window (EXACT, ENCAPSULATE), from the upstream's start through the
	// window's until (THROUGH), the upstream's whole range (WHOLE); zero for
	// EXISTS.
	Need state.Window
	// Covered is how much of Need the applied units cover.
	Covered time.Duration
	// Frontier is where the gap-free applied run from Need.Since ends;
	// THROUGH and WHOLE are complete when it reaches Need.Until.
	Frontier time.Time
	// Row is the status of the upstream unit at exactly the window (EXACT),
	// empty when there is none.
	Row Status
}

// Assess works out a contract's needed range against an upstream's track
// (whose Extent must be the upstream's range: its start and contract range
// end) and, when c.Verdict is unknown, its verdict. It costs O(log units).
func Assess(c Contract, up Track) Assessment {
	var as Assessment
	w, ext := c.Window, up.Extent()
	switch c.Level {
	case LevelExact, LevelEncapsulate:
		as.Need = w
	case LevelThrough:
		since := ext.Since
		if since.IsZero() || w.Since.Before(since) {
			// Before the upstream's start nothing is ever applied; a
			// track without a range knows no start, so the window's own
			// since is all it can check.
			since = w.Since
		}
		as.Need = state.Window{Since: since, Until: w.Until}
	case LevelWhole:
		as.Need = ext
	}
	if !as.Need.Empty() {
		as.Covered = up.Covered(as.Need)
		as.Frontier = up.Frontier(as.Need.Since)
	}
	complete := false
	switch c.Level {
	case LevelExists:
		complete = true
	case LevelExact:
		if s, ok := up.exact(w); ok {
			as.Row = s
			complete = s == Applied || s == Stale || s == Outdated
		}
	case LevelEncapsulate, LevelThrough, LevelWhole:
		complete = !as.Need.Empty() && !as.Frontier.Before(as.Need.Until)
	}
	switch {
	case c.Verdict != VerdictUnknown:
		as.Verdict = c.Verdict
	case c.Err != "":
		as.Verdict = VerdictError
	case !complete:
		as.Verdict = VerdictUnmet
	case c.Within > 0 && c.Age > c.Within:
		as.Verdict = VerdictStale
	default:
		as.Verdict = VerdictOK
	}
	return as
}

func summary(c Contract, as Assessment) string {
	head := c.Level.String() + " " + as.Verdict.String()
	if as.Verdict == VerdictError && c.Err != "" {
		return head + " · " + c.Err
	}
	var detail string
	need := as.Need.Duration()
	switch c.Level {
	case LevelExists:
		detail = "registered"
	case LevelExact:
		if as.Row != "" {
			detail = "row " + string(as.Row)
		} else {
			// A union of finer rows or a coarser row may cover the
			// window and still not count: say how much, so a user sees
			// why EXACT blocks where ENCAPSULATE would not.
			detail = "no exact row (" + percent(as.Covered, need) + " covered)"
		}
	case LevelEncapsulate:
		detail = duration(as.Covered) + "/" + duration(need) + " covered (" + percent(as.Covered, need) + ")"
	case LevelThrough:
		if as.Frontier.Before(as.Need.Until) {
			detail = "first gap " + stamp(as.Frontier)
		} else {
			detail = "gap-free to " + stamp(as.Frontier)
		}
	case LevelWhole:
		switch {
		case as.Need.Empty():
			detail = "no complete window yet"
		case !as.Frontier.Before(as.Need.Until):
			detail = "complete"
		default:
			detail = percent(as.Covered, need) + " applied, first gap " + stamp(as.Frontier)
		}
	}
	s := head
	if detail != "" {
		s += " · " + detail
	}
	if c.Within > 0 && c.Age > 0 {
		which := "newest"
		if strings.EqualFold(c.Scope, "ALL") {
			which = "oldest"
		}
		s += " · " + which + " " + duration(c.Age) + " old, limit " + duration(c.Within)
	}
	return s
}

// Marks draws the line under an upstream's strip that shows what the
// contract of the cursor's downstream window needs: the Need glyph under
// each column of the needed range whose part is applied, the Gap glyph
// under each with a hole, Before or After at an edge the range continues
// past, and the Summary beside them (shortened to "LEVEL verdict" or cut
// when room is short). EXACT and ENCAPSULATE mark the window, THROUGH the
// upstream's start through the window's until, WHOLE the upstream's range.
// Exactly a.Width() cells; O(width · log units).
func Marks(a Axis, up Track, c Contract, st Styles) string {
	w := a.Width()
	if w == 0 {
		return ""
	}
	as := Assess(c, up)
	g := st.glyphs()
	l := newLine(w, ' ')
	const (
		plain uint8 = iota
		verdict
		gap
	)
	pal := palette(lipgloss.Style{}, st.Verdict[as.Verdict], st.Verdict[VerdictUnmet])
	labels := []string{summary(c, as), c.Level.String() + " " + as.Verdict.String(), as.Verdict.String()}
	c0, c1, ok := a.columns(as.Need)
	switch {
	case !ok:
		l.text(0, w, fit(labels[0], w), verdict)
		return l.render(pal)
	case c1 < 0:
		l.set(0, g.Before, verdict)
		c0, c1 = 0, 0
	case c0 >= w:
		l.set(w-1, g.After, verdict)
		c0, c1 = w-1, w-1
	default:
		from, to := max(c0, 0), min(c1, w-1)
		for col := from; col <= to; col++ {
			part := a.Part(col)
			part.Since = state.Later(part.Since, as.Need.Since)
			part.Until = state.Earlier(part.Until, as.Need.Until)
			if up.Applied(part) {
				l.set(col, g.Need, verdict)
			} else {
				l.set(col, g.Gap, gap)
			}
		}
		if c0 < 0 {
			l.set(0, g.Before, verdict)
		}
		if c1 >= w {
			l.set(w-1, g.After, verdict)
		}
		c0, c1 = from, to
	}
	place(l, c0, c1, labels, verdict)
	return l.render(pal)
}

// stamp prints an instant in UTC like state.FormatTime but without zero
// seconds ("2026-03-03T06:00Z"), since labels share a line with marks.
func stamp(t time.Time) string {
	t = t.UTC()
	if t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04Z")
	}
	return state.FormatTime(t)
}

// percent prints part/whole rounded down to a tenth, so "100%" means all.
func percent(part, whole time.Duration) string {
	if whole <= 0 {
		return "0%"
	}
	p := math.Floor(float64(part)/float64(whole)*1000) / 10
	return strconv.FormatFloat(p, 'f', -1, 64) + "%"
}

// duration prints a span the way an operator reads it: "45m", "18h",
// "1h30m", "3d", "3d4h".
func duration(d time.Duration) string {
	if d < 0 {
		return "-" + duration(-d)
	}
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		s := strconv.Itoa(int(d/time.Hour)) + "h"
		if m := (d % time.Hour) / time.Minute; m > 0 {
			s += strconv.Itoa(int(m)) + "m"
		}
		return s
	}
	s := strconv.Itoa(int(d/(24*time.Hour))) + "d"
	if h := (d % (24 * time.Hour)) / time.Hour; h > 0 {
		s += strconv.Itoa(int(h)) + "h"
	}
	return s
}
