package tui

import "testing"

// TestSafeFrameKeepsStylingAndDropsTerminalControl: a unit error that holds
// a screen clear, a cursor move, an OSC title and clipboard write, a bell
// and a C1 control reaches the terminal as its text only; the frame's own
// SGR styling and newlines survive.
func TestSafeFrameKeepsStylingAndDropsTerminalControl(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\x1b[1;31mred\x1b[0m\nnext", "\x1b[1;31mred\x1b[0m\nnext"},
		{"\x1b[38:2::255:0:0mtrue\x1b[m", "\x1b[38:2::255:0:0mtrue\x1b[m"},
		{"exit 1: \x1b[2J\x1b[Hgone", "exit 1: gone"},
		{"a\x1b]0;pwned\x07b", "ab"},
		{"a\x1b]52;c;ZXZpbA==\x1b\\b", "ab"},
		{"bell\x07 tab\t cr\r", "bell tab  cr"},
		{"c1\u009bX", "c1X"},
		{"\x1b[?1049lleave alt screen", "leave alt screen"},
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		// Malformed or raw sequences never pass, and never eat the layout.
		{"a\x9b2Jb", "a2Jb"},                             // a raw 8-bit CSI (invalid UTF-8)
		{"a\x1b\xc2\x9b2Jb", "a2Jb"},                     // ESC before a C1 in UTF-8
		{"\x1bé", "é"},                                   // ESC before a multibyte rune
		{"err\x1b]0;title\nnext line", "err\nnext line"}, // unterminated OSC stops at the newline
		{"err\x1b[\nnext", "err\nnext"},                  // unterminated CSI keeps the newline
		{"row\x1b\nrow", "row\nrow"},                     // a lone ESC before a newline
	} {
		if got := safeFrame(tc.in); got != tc.want {
			t.Errorf("safeFrame(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
