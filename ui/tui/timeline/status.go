package timeline

import (
	"charm.land/lipgloss/v2"

	"github.com/bollhav/bollhav/state"
)

// Status is what one cell of a strip shows: the five unit statuses of the
// store, plus stale (applied, but too old for a freshness contract — the UI
// decides which rows that is), outdated (applied under an earlier
// definition than the model's current one; the UI decides which), missing (time inside the model's range that no
// unit holds) and outside (time before the model starts or after its range
// ends). Its values are the store's own spellings, so a state.UnitStatus
// converts with StatusOf.
type Status string

// The statuses a cell can have.
const (
	Applied  Status = "applied"
	Pending  Status = "pending"
	Running  Status = "running"
	Blocked  Status = "blocked"
	Failed   Status = "failed"
	Stale    Status = "stale"
	Outdated Status = "outdated"
	Missing  Status = "missing"
	Outside  Status = "outside"
)

// Statuses lists the statuses a legend explains, in the order the store
// and the themes package list them; outdated last, so a legend short of
// room drops it first when no cell shows it.
var Statuses = []Status{Applied, Pending, Running, Blocked, Failed, Stale, Missing, Outdated}

// Order is the aggregation order, worst first: a cell that holds several
// units (a day of hourly units, a month of days, a flexible model's chunk
// cut by irregular windows) shows the worst status inside it.
//
//   - failed: a run broke and a human must act; nothing may hide it.
//   - blocked: waiting on an upstream; the triage queue's material, and a
//     zoomed-out view must still point at it.
//   - stale: present but too old, so a consumer reads wrong answers — a
//     problem, unlike the work in flight below it.
//   - outdated: present, built by an earlier definition: a rebuild is
//     owed, but what it holds is what that definition produced, so it
//     ranks under stale and over the work in flight.
//   - running: a worker holds it; shown above pending so a zoomed-out view
//     shows where the work happens now.
//   - pending: queued work the engine knows about.
//   - missing: no unit at all (an uncovered gap, a window never prefilled).
//     Above applied, so a cell reads applied only when every instant of it
//     inside the model's range is applied; below pending, because a pending
//     unit is the stronger statement — work exists for that time.
//   - applied: done.
//
// Outside is not in the order: the part of a cell outside the model's range
// is ignored, and only a cell wholly outside shows it.
var Order = []Status{Failed, Blocked, Stale, Outdated, Running, Pending, Missing, Applied}

// rank numbers statuses so that a larger rank is worse; the strip's range
// maximum runs on these bytes.
type rank uint8

const (
	rOutside rank = iota
	rApplied
	rMissing
	rPending
	rRunning
	rOutdated
	rStale
	rBlocked
	rFailed
	nRanks
)

var rankStatus = [nRanks]Status{Outside, Applied, Missing, Pending, Running, Outdated, Stale, Blocked, Failed}

// rankOf ranks s; a status this package does not know ranks as pending:
// work the engine has not settled, neither hidden nor alarming.
func rankOf(s Status) rank {
	switch s {
	case Applied:
		return rApplied
	case Missing:
		return rMissing
	case Running:
		return rRunning
	case Stale:
		return rStale
	case Outdated:
		return rOutdated
	case Blocked:
		return rBlocked
	case Failed:
		return rFailed
	case Outside:
		return rOutside
	}
	return rPending
}

// StatusOf converts a unit's status; an unknown one becomes pending.
func StatusOf(u state.UnitStatus) Status { return rankStatus[rankOf(Status(u))] }

// Glyphs are the one-cell symbols the renderers draw. Every status has its
// own shape, so a strip reads the same under NO_COLOR, on a monochrome
// terminal and to a colour-blind operator: colour only repeats the glyph.
// Each must be one terminal cell wide.
type Glyphs struct {
	Applied, Pending, Running, Blocked, Failed, Stale, Outdated, Missing, Outside rune
	// Cursor points up at the cursor's columns on the line under a strip.
	Cursor rune
	// Need marks a column whose part of a contract's needed range is
	// applied; Gap one with a hole in it.
	Need, Gap rune
	// Before and After stand at the line's edge when a cursor or a needed
	// range continues off-screen.
	Before, After rune
}

// Unicode is the default glyph set. The block elements and box drawing are
// East Asian "ambiguous" width: a terminal set to draw those wide (some CJK
// setups) should use ASCII.
var Unicode = Glyphs{
	Applied: '█', Pending: '░', Running: '▶', Blocked: '▒', Failed: '✗', Stale: '~', Outdated: '▓', Missing: '·', Outside: ' ',
	Cursor: '▲', Need: '▔', Gap: '╳', Before: '◂', After: '▸',
}

// ASCII is the fallback glyph set for terminals without those symbols.
var ASCII = Glyphs{
	Applied: '#', Pending: '-', Running: '>', Blocked: '=', Failed: 'X', Stale: '~', Outdated: '%', Missing: '.', Outside: ' ',
	Cursor: '^', Need: '^', Gap: 'x', Before: '<', After: '>',
}

// Of returns the glyph of s ('?' for a status it does not know).
func (g Glyphs) Of(s Status) rune {
	switch s {
	case Applied:
		return g.Applied
	case Pending:
		return g.Pending
	case Running:
		return g.Running
	case Blocked:
		return g.Blocked
	case Failed:
		return g.Failed
	case Stale:
		return g.Stale
	case Outdated:
		return g.Outdated
	case Missing:
		return g.Missing
	case Outside:
		return g.Outside
	}
	return '?'
}

// Styles is everything the renderers colour with, supplied by the themes
// package. The zero Styles draws plain text with the Unicode glyphs: no
// escape codes at all. Styles should carry colours and attributes only;
// widths, padding, margins and borders are stripped, since every line must
// stay exactly as wide as the axis.
type Styles struct {
	// Glyphs is the glyph set; the zero value means Unicode.
	Glyphs Glyphs
	// Status colours the cells of each status; a status without an entry
	// is drawn plain.
	Status map[Status]lipgloss.Style
	// Cursor is layered over the style of the cursor's cells (Reverse(true)
	// is the usual choice); its own settings win.
	Cursor lipgloss.Style
	// Ruler styles the time labels and the cursor line's text.
	Ruler lipgloss.Style
	// Verdict colours a contract's marks and label by its verdict.
	Verdict map[Verdict]lipgloss.Style
}

func (st Styles) glyphs() Glyphs {
	if st.Glyphs.Applied == 0 {
		return Unicode
	}
	return st.Glyphs
}

// clean strips what would change a rendered string's width.
func clean(s lipgloss.Style) lipgloss.Style {
	return s.UnsetWidth().UnsetHeight().UnsetMaxWidth().UnsetMaxHeight().
		UnsetPadding().UnsetMargins().UnsetAlign().UnsetInline().
		UnsetBorderStyle().UnsetBorderTop().UnsetBorderRight().UnsetBorderBottom().UnsetBorderLeft().
		UnsetTransform().UnsetString()
}
