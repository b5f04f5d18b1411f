package enginetest

import (
	"strings"
	"testing"
)

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
