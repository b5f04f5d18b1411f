package executor

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestTailBufferKeepsTheLastBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var tb tailBuffer
		var all []byte
		for range rng.IntN(20) {
			p := bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, rng.IntN(3*tailBytes))
			tb.Write(p)
			all = append(all, p...)
		}
		want := all
		if len(want) > tailBytes {
			want = want[len(want)-tailBytes:]
		}
		if !bytes.Equal(tb.buf, want) || tb.cut != (len(all) > tailBytes) {
			t.Fatalf("after %d bytes: kept %d bytes (cut %v), want the last %d", len(all), len(tb.buf), tb.cut, len(want))
		}
	}
}

func TestTailText(t *testing.T) {
	var tb tailBuffer
	tb.Write([]byte("  \nonly line  \n\n"))
	if got := tb.tail(); got != "only line" {
		t.Errorf("tail = %q", got)
	}

	tb = tailBuffer{}
	for i := range 50 {
		tb.Write([]byte(strings.Repeat("x", i%7) + "\n"))
	}
	if got := tb.tail(); !strings.HasPrefix(got, "…\n") || strings.Count(got, "\n") != tailLines {
		t.Errorf("50 short lines: %q", got)
	}

	// A cut through a multi-byte rune leaves valid UTF-8.
	tb = tailBuffer{}
	tb.Write([]byte(strings.Repeat("å", tailBytes)))
	if got := tb.tail(); !strings.HasPrefix(got, "…\nå") || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("rune cut: %.20q", got)
	}
}

func TestEachLineBoundsLongLines(t *testing.T) {
	in := "short\r\n" + strings.Repeat("y", 3*maxLineLen) + "\nrows_written=3\nlast"
	var lines []string
	var cut []bool
	eachLine(strings.NewReader(in), func(l []byte, truncated bool) {
		lines = append(lines, string(l))
		cut = append(cut, truncated)
	})
	if len(lines) != 4 || lines[0] != "short" || len(lines[1]) != maxLineLen || !cut[1] || lines[2] != "rows_written=3" || lines[3] != "last" {
		t.Errorf("lines: %d, %q… cut %v", len(lines), lines[0], cut)
	}
}

func TestRedactor(t *testing.T) {
	r := newRedactor([]string{"API_TOKEN=abcdef123", "HOME=/root", "SHORT_SECRET=abc", "ODD=opaque-value", "PWD=/work"}, []string{"ODD"})
	got := r.apply("token abcdef123 home /root short abc odd opaque-value dir /work; postgres://u:p4ss@h/db PASSWORD='x y'")
	want := "token [redacted API_TOKEN] home /root short abc odd [redacted ODD] dir /work; postgres://u:[redacted]@h/db PASSWORD=[redacted]"
	if got != want {
		t.Errorf("apply =\n%s\nwant\n%s", got, want)
	}
}
