package untrusted

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile is what a loader echoing an upstream's error body can write to
// stderr: a title change, a screen clear, concealed text and a clipboard
// write.
const hostile = "\x1b]0;TITLE\x07\x1b[2J\x1b[8mhidden\x1b]52;c;cm0gLXJmIH4=\x07"

func TestLineMakesEveryControlVisible(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"exit status 1: 503 Service Unavailable", "exit status 1: 503 Service Unavailable"},
		{"C:\\data\\x1b.csv", "C:\\data\\x1b.csv"}, // a backslash stays
		{"å ä ö — ✗ 日本", "å ä ö — ✗ 日本"},
		{hostile, `\x1b]0;TITLE\x07\x1b[2J\x1b[8mhidden\x1b]52;c;cm0gLXJmIH4=\x07`},
		{"a\tb", "a b"},
		{"a\nb\r\nc\rd", `a\x0ab\x0d\x0ac\x0dd`},
		{"\x00\x7f", `\x00\x7f`},
		{"\u009b2J \u0085", `\u009b2J \u0085`},         // C1: CSI, NEL
		{"\xc2\x9b", `\u009b`},                         // the same CSI, as its UTF-8 bytes
		{"ok\xffbad\xc3", `ok\xffbad\xc3`},             // invalid UTF-8
		{"pay\u202eusd.exe", `pay\u202eusd.exe`},       // a right-to-left override
		{"\u2066x\u2069", `\u2066x\u2069`},             // isolates
		{"\u200dzwj\u00a0nbsp", "\u200dzwj\u00a0nbsp"}, // printable or harmless: kept
	} {
		if got := Line(c.in); got != c.want {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTextKeepsNewlines(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"first\nsecond\n", "first\nsecond\n"},
		{"crlf\r\nline\r\n", "crlf\nline\n"},
		{"over\rwrite", `over\x0dwrite`}, // a lone CR would draw over the line
		{"a\x1b[8mb\nc\x1b]0;t\x07", "a\\x1b[8mb\nc\\x1b]0;t\\x07"},
		{"\t\x0b\x0c", ` \x0b\x0c`},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCleanStringsAreNotCopied: the common case, a string with nothing to
// escape, costs no allocation.
func TestCleanStringsAreNotCopied(t *testing.T) {
	s := strings.Repeat("raw.payments (THROUGH): missing [2026-11-27T16:00:00Z, 2026-11-27T17:00:00Z) ✗\n", 20)
	if n := testing.AllocsPerRun(100, func() { _ = Text(s) }); n != 0 {
		t.Errorf("Text of a clean string allocates %v times", n)
	}
}

func TestUserName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"alice", "alice"},
		{"alice@db-admin-1", "alice@db-admin-1"},
		{"ci job", `"ci job"`},
		{"x\x1b]0;owned\x07y", `"x]0;ownedy"`},
		{"carol SHA256:abc", `"carol SHA256:abc"`},
		{strings.Repeat("a", 40), `"` + strings.Repeat("a", 32) + "…\""},
		{"", `""`},
	} {
		if got := UserName(c.in); got != c.want {
			t.Errorf("UserName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzLine: whatever the input, Line's output holds no control byte (C0,
// DEL), no C1 control, no bidirectional override or isolate, and is valid
// UTF-8; Text's the same but for newlines. Both leave a string with nothing
// to escape as it is, and cleaning twice is cleaning once.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "plain", hostile, "a\r\nb\rc\n", "\xff\xfe", "\u009b\u202e", "é\xc3", "\t\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, multiline := range []bool{false, true} {
			out := clean(s, multiline)
			if !utf8.ValidString(out) {
				t.Fatalf("clean(%q, %v) = %q: not valid UTF-8", s, multiline, out)
			}
			for i, r := range out {
				if r < 0x20 && !(multiline && r == '\n') || r == 0x7f || unsafeRune(r) {
					t.Fatalf("clean(%q, %v) = %q: %U at %d", s, multiline, out, r, i)
				}
			}
			if again := clean(out, multiline); again != out {
				t.Fatalf("clean is not idempotent on %q: %q, then %q", s, out, again)
			}
			if firstUnsafe(s, multiline) == len(s) && out != s {
				t.Fatalf("clean(%q, %v) = %q changed a clean string", s, multiline, out)
			}
		}
	})
}

func TestWriterCleansEachWrite(t *testing.T) {
	var b strings.Builder
	w := NewWriter(&b)
	n, err := w.Write([]byte("bollhav run: raw.leak: " + hostile + "\n"))
	if err != nil || n != len("bollhav run: raw.leak: "+hostile+"\n") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got, want := b.String(), "bollhav run: raw.leak: "+Line(hostile)+"\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}
