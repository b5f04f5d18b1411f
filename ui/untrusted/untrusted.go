package untrusted

import (
	"strings"
	"unicode/utf8"
)

// Line is s made safe to show on one line of a terminal. Every byte or
// character a terminal could act on is written as a Go-style escape, so it
// reads as text:
//
//   - C0 controls (newline and carriage return among them), ESC and DEL as
//     \xNN: ESC [ 2 J reads "\x1b[2J", a newline "\x0a"; a tab is a space;
//   - C1 controls (U+0080–U+009F, which some terminals take as CSI and OSC)
//     and the bidirectional overrides and isolates (U+202A–U+202E,
//     U+2066–U+2069, which reorder what is drawn after them) as \uNNNN;
//   - each byte that is not valid UTF-8 as \xNN.
//
// The escapes are for reading, not for decoding: a backslash in s is kept as
// it is, so "\x1b" in s and an ESC both read "\x1b". A string with nothing
// to escape is returned as it is, without copying.
func Line(s string) string { return clean(s, false) }

// Text is Line for text shown on several lines: a newline stays a newline
// (a CR LF line ending too, as a newline); every other control is escaped
// as Line escapes it.
func Text(s string) string { return clean(s, true) }

func clean(s string, multiline bool) string {
	i := firstUnsafe(s, multiline)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\t':
			b.WriteByte(' ')
			i++
		case multiline && c == '\n':
			b.WriteByte(c)
			i++
		case multiline && c == '\r' && i+1 < len(s) && s[i+1] == '\n':
			b.WriteByte('\n')
			i += 2
		case c < 0x20 || c == 0x7f:
			writeByteEscape(&b, c)
			i++
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				writeByteEscape(&b, c)
			case unsafeRune(r):
				writeRuneEscape(&b, r)
			default:
				b.WriteString(s[i : i+size])
			}
			i += size
		}
	}
	return b.String()
}

// firstUnsafe is the index of the first byte of s that Line (or Text, when
// multiline) changes, or len(s): the common clean string costs one pass and
// no allocation.
func firstUnsafe(s string, multiline bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && !(multiline && c == '\n') || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeRune(r) {
			return i
		}
		i += size
	}
	return len(s)
}

// unsafeRune reports whether r, a valid non-ASCII rune, is one a terminal
// acts on rather than draws: a C1 control or a bidirectional override or
// isolate.
func unsafeRune(r rune) bool {
	return r >= 0x80 && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

const hexDigits = "0123456789abcdef"

func writeByteEscape(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}

func writeRuneEscape(b *strings.Builder, r rune) {
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[r>>shift&0xf])
	}
}
