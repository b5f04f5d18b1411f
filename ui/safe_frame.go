package ui

import "strings"

// safeFrame keeps what a frame may legitimately hold — printable text,
// newlines and SGR styling (ESC [ … m), which is all lipgloss writes — and
// drops every other escape sequence and control byte. The frame carries
// strings from the store (a command's stderr kept as a unit's error, a
// blocked reason, an audit actor or argument) that a hostile or careless
// writer can fill with cursor movement, screen clears, OSC titles or
// clipboard writes; drawn raw, they would repaint or take over the
// viewer's terminal, locally and over SSH.
func safeFrame(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 }) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			if j < len(s) && s[j] == 'm' && sgrParams(s[i+2:j]) {
				b.WriteString(s[i : j+1])
			}
			i = j + 1
		case c == 0x1b && i+1 < len(s) && (s[i+1] == ']' || s[i+1] == 'P' || s[i+1] == '_' || s[i+1] == '^'):
			// OSC, DCS, APC, PM: up to BEL or ST.
			j := i + 2
			for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			if j < len(s) && s[j] == 0x1b {
				j++
			}
			i = j + 1
		case c == 0x1b:
			i += 2 // a two-byte escape
		case c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] < 0xa0:
			i += 2 // a C1 control, UTF-8 encoded
		case c < 0x20 && c != '\n' || c == 0x7f:
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// sgrParams reports whether p is an SGR parameter list: digits, ; and :.
func sgrParams(p string) bool {
	for i := 0; i < len(p); i++ {
		if (p[i] < '0' || p[i] > '9') && p[i] != ';' && p[i] != ':' {
			return false
		}
	}
	return true
}
