package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"charm.land/lipgloss/v2"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/untrusted"
)

// blockedPageSize is how many units `bollhav blocked` ranks before it
// prints anything: its first page, then the rest a page at a time.
const blockedPageSize = 100

// blockedPrinter prints `bollhav blocked` a page at a time, byte for byte
// as the table (printTable) and the JSON (writeJSON) of the whole listing
// would be: the table's widths are laid out before the first page from
// what is known then — every model with blocked units and the span of
// their windows, and the first unit's holds, the most of any — and the
// JSON's array is written an element at a time in MarshalIndent's layout.
// So nothing but a page is held, and a long listing starts at once.
type blockedPrinter struct {
	w      io.Writer
	json   bool
	n      int
	widths []int
}

// page prints one page of the listing; it never fails (an output that
// cannot be written is the caller's to see on close, as with printTable).
func (p *blockedPrinter) page(pg gate.StuckPage) error {
	if p.json {
		for _, u := range pg.Units {
			b, err := json.MarshalIndent(blockedUnitOf(u), "    ", "  ")
			if err != nil {
				return err
			}
			sep := ",\n    "
			if p.n == 0 {
				sep = "{\n  \"units\": [\n    "
			}
			io.WriteString(p.w, sep)
			p.w.Write(b)
			p.n++
		}
		return nil
	}
	rows := make([][]string, 0, len(pg.Units))
	for _, u := range pg.Units {
		rows = append(rows, blockedRow(u))
	}
	var header []string
	if p.n == 0 && len(rows) > 0 {
		header = blockedHeader
		p.widths = blockedWidths(pg)
	}
	printTableRows(p.w, p.widths, header, rows)
	p.n += len(rows)
	return nil
}

// end closes the listing: the JSON's array, or the table's count line.
func (p *blockedPrinter) end() {
	switch {
	case p.json && p.n == 0:
		writeJSON(p.w, blockedJSON{Units: []blockedUnitJSON{}})
	case p.json:
		io.WriteString(p.w, "\n  ]\n}\n")
	case p.n == 0:
		fmt.Fprintln(p.w, "no blocked units")
	default:
		fmt.Fprintf(p.w, "%d blocked unit%s\n", p.n, plural(p.n))
	}
}

// blockedWidths are the table's column widths, from the first page: the
// widest model name of the listing, a window's width when some unit has
// one (state.FormatTime is one width for every time it prints), the
// first unit's holds (the listing's most). The reason, last, is not
// padded.
func blockedWidths(first gate.StuckPage) []int {
	widths := make([]int, len(blockedHeader))
	for i, h := range blockedHeader {
		widths[i] = lipgloss.Width(h)
	}
	widen := func(i int, cell string) { widths[i] = max(widths[i], lipgloss.Width(cell)) }
	for _, m := range first.Models {
		widen(0, untrusted.Line(m.Model))
		since, until := "-", "-"
		if !m.Span.IsZero() {
			since, until = state.FormatTime(m.Span.Since), state.FormatTime(m.Span.Until)
		}
		widen(1, since)
		widen(2, until)
	}
	row := blockedRow(first.Units[0])
	for i, cell := range row[:len(row)-1] {
		widen(i, cell)
	}
	return widths
}
