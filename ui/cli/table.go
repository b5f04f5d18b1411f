package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/bollhav/bollhav/themes"
	"github.com/charmbracelet/colorprofile"
)

// headerStyle is the text output's table headers. Styles are always
// applied; colorWriter strips them when the output is not a terminal or
// NO_COLOR is set, so piped output and golden files stay plain text.
var headerStyle = lipgloss.NewStyle().Bold(true)

// statusRoles are the status words the command line prints, each with the
// theme status it is drawn as: a task's SUCCESS and a run's succeeded read
// as applied, a task skipped or waiting as pending.
var statusRoles = map[string]themes.Status{
	"applied":   themes.Applied,
	"succeeded": themes.Applied,
	"success":   themes.Applied,
	"failed":    themes.Failed,
	"abandoned": themes.Failed,
	"blocked":   themes.Blocked,
	"running":   themes.Running,
	"pending":   themes.Pending,
	"skipped":   themes.Pending,
	"waiting":   themes.Pending,
}

// palette colours status words with a theme's status styles, the UI's
// palette, so a status reads in the same colour in the terminal UI and at
// the command line. The zero palette draws nothing.
type palette struct{ theme themes.Theme }

// palette is the theme --theme names (NO_COLOR without it: none; neither:
// the default). An unknown name never gets here: checkGlobals refuses it.
func (c *cmdContext) palette() palette {
	th, err := themes.Select(c.Theme, os.Getenv)
	if err != nil {
		th, _ = themes.Get(themes.Default)
	}
	return palette{th}
}

// statusStyle is the style of a status word, case-insensitive; false for
// any other text.
func (p palette) statusStyle(s string) (lipgloss.Style, bool) {
	role, ok := statusRoles[strings.ToLower(s)]
	if !ok || p.theme.Name == "" {
		return lipgloss.Style{}, false
	}
	return p.theme.Status(role), true
}

// colorWriter wraps w so that ANSI styles reach a colour terminal and are
// removed (or downsampled) everywhere else: a pipe, a file, NO_COLOR.
func colorWriter(w io.Writer) io.Writer {
	return colorprofile.NewWriter(w, os.Environ())
}

// status colours a unit, task or run status word; other text is
// returned unchanged.
func (p palette) status(s string) string {
	if st, ok := p.statusStyle(s); ok {
		return st.Render(s)
	}
	return s
}

// printTable writes header and rows as left-aligned columns two spaces
// apart, the header in bold. Widths are measured without ANSI codes, so a
// styled cell aligns like a plain one; the last column is not padded.
func printTable(w io.Writer, header []string, rows [][]string) {
	widths := make([]int, len(header))
	measure := func(r []string) {
		for i, cell := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], lipgloss.Width(cell))
			}
		}
	}
	measure(header)
	for _, r := range rows {
		measure(r)
	}
	printTableRows(w, widths, header, rows)
}

// printTableRows is printTable with the column widths given: what a
// listing printed a page at a time lays out once, before its first page.
// A nil header prints the rows alone.
func printTableRows(w io.Writer, widths []int, header []string, rows [][]string) {
	out := colorWriter(w)
	line := func(r []string, style func(string) string) {
		var b strings.Builder
		for i, cell := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(style(cell))
			if i < len(r)-1 && i < len(widths) {
				b.WriteString(strings.Repeat(" ", max(widths[i]-lipgloss.Width(cell), 0)))
			}
		}
		fmt.Fprintln(out, strings.TrimRight(b.String(), " "))
	}
	if header != nil {
		line(header, func(s string) string { return headerStyle.Render(s) })
	}
	for _, r := range rows {
		line(r, func(s string) string { return s })
	}
}
