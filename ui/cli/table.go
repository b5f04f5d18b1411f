package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
)

// Styles of the text output. They are always applied; colorWriter strips
// them when the output is not a terminal or NO_COLOR is set, so piped output
// and golden files stay plain text.
var (
	headerStyle = lipgloss.NewStyle().Bold(true)
	statusStyle = map[string]lipgloss.Style{
		"applied":   lipgloss.NewStyle().Foreground(lipgloss.Green),
		"succeeded": lipgloss.NewStyle().Foreground(lipgloss.Green),
		"success":   lipgloss.NewStyle().Foreground(lipgloss.Green),
		"failed":    lipgloss.NewStyle().Foreground(lipgloss.Red),
		"blocked":   lipgloss.NewStyle().Foreground(lipgloss.Yellow),
		"running":   lipgloss.NewStyle().Foreground(lipgloss.Blue),
		"pending":   lipgloss.NewStyle().Faint(true),
		"skipped":   lipgloss.NewStyle().Faint(true),
		"waiting":   lipgloss.NewStyle().Faint(true),
	}
)

// colorWriter wraps w so that ANSI styles reach a colour terminal and are
// removed (or downsampled) everywhere else: a pipe, a file, NO_COLOR.
func colorWriter(w io.Writer) io.Writer {
	return colorprofile.NewWriter(w, os.Environ())
}

// styleStatus colours a unit, task or run status word; other text is
// returned unchanged.
func styleStatus(s string) string {
	if st, ok := statusStyle[strings.ToLower(s)]; ok {
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
	out := colorWriter(w)
	line := func(r []string, style func(string) string) {
		var b strings.Builder
		for i, cell := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(style(cell))
			if i < len(r)-1 && i < len(widths) {
				b.WriteString(strings.Repeat(" ", widths[i]-lipgloss.Width(cell)))
			}
		}
		fmt.Fprintln(out, strings.TrimRight(b.String(), " "))
	}
	line(header, func(s string) string { return headerStyle.Render(s) })
	for _, r := range rows {
		line(r, func(s string) string { return s })
	}
}
