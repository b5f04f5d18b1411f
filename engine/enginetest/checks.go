package enginetest

import (
	"strings"
	"testing"
)

// The checks below are the ones tests of several packages make the same
// way; each reports with t.Errorf and goes on, so one failure shows all.

// ContainsAll checks that text, what a command printed or a screen showed,
// holds every one of wants. Each piece missing is its own error naming
// what the text is and showing it whole, so one failure lists them all.
func ContainsAll(t testing.TB, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, text)
		}
	}
}

// Eq checks one value, named what.
func Eq[T comparable](t testing.TB, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// EqRows checks rows read back as text (Rows), in order.
func EqRows(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

// FirstLineDiff is where texts a and b first differ: the line (from 1)
// and that line of each, "" past a text's end; 0 when they are the same.
// Tests that compare whole dumps of a store show it rather than both.
func FirstLineDiff(a, b string) (line int, x, y string) {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < max(len(al), len(bl)); i++ {
		x, y = "", ""
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return i + 1, x, y
		}
	}
	return 0, "", ""
}
