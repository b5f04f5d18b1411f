package tui

import (
	"strings"

	"github.com/bollhav/bollhav/ui/untrusted"
	"github.com/charmbracelet/x/ansi"
)

// wrapBreaks are where an error may break besides spaces: a URL or a path
// reads better cut after a separator than in the middle of a word.
const wrapBreaks = " /&?=:,"

// wrapLines wraps s, plain text such as a unit's error, to lines of at
// most w cells, each line of s (an error's own newlines) wrapped on its own,
// so an error is read whole, never cut to one line with "…". Empty lines of
// s are kept out: they would only push the rest off screen. s is made safe
// to show first (untrusted.Text): an escape sequence in it reads as text
// and cannot style the lines it is drawn in, so s must not be styled.
func wrapLines(s string, w int) []string {
	w = max(w, 8)
	var out []string
	for _, para := range strings.Split(strings.TrimRight(untrusted.Text(s), "\n"), "\n") {
		para = strings.TrimRight(para, " \t\r")
		if strings.TrimSpace(para) == "" {
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(para, w, wrapBreaks), "\n")...)
	}
	return out
}
