package state

import (
	"testing"
	"time"
)

// TestRetryLine: the words every view prints for a unit waiting for its
// retry — the next try, of the model's budget when known, and the time as
// the caller formats it.
func TestRetryLine(t *testing.T) {
	at := time.Date(2026, 1, 3, 14, 5, 0, 0, time.UTC)
	for _, c := range []struct {
		try, of int
		want    string
	}{
		{2, 5, "retry 2/5 at 2026-01-03T14:05:00Z"},
		{3, 3, "retry 3/3 at 2026-01-03T14:05:00Z"},
		{2, 0, "retry 2 at 2026-01-03T14:05:00Z"},
	} {
		if got := RetryLine(c.try, c.of, FormatTime(at)); got != c.want {
			t.Errorf("RetryLine(%d, %d) = %q, want %q", c.try, c.of, got, c.want)
		}
	}
	w := RetryWait{Try: 2, Of: 5, At: at}
	if got := w.Line(func(t time.Time) string { return t.Format("15:04") }); got != "retry 2/5 at 14:05" {
		t.Errorf("Line with a short format = %q", got)
	}
}

// TestRetryWaitOf: the next try is one more than the newest logged try; a
// unit that does not wait for a retry has no wait.
func TestRetryWaitOf(t *testing.T) {
	at := time.Date(2026, 1, 3, 14, 5, 0, 0, time.UTC)
	history := []Attempt{{Number: 1, Try: 1, Error: "a"}, {Number: 2, Try: 2, Error: "b"}}
	w := RetryWaitOf(Unit{Status: Pending, NotBefore: &at, Error: "b"}, history, 5)
	if w == nil || *w != (RetryWait{Try: 3, Of: 5, At: at}) {
		t.Errorf("wait = %+v, want try 3 of 5 at %s", w, at)
	}
	if w := RetryWaitOf(Unit{Status: Pending, NotBefore: &at}, nil, 5); w == nil || w.Try != 1 {
		t.Errorf("wait with no history = %+v, want try 1", w)
	}
	if w := RetryWaitOf(Unit{Status: Failed, Error: "b"}, history, 5); w != nil {
		t.Errorf("a failed unit waits for %+v", w)
	}
}

// TestEarlierFailures: newest first, without the failure whose error the
// unit carries now; a unit released by an expired lease carries none, so
// every failure is earlier.
func TestEarlierFailures(t *testing.T) {
	history := []Attempt{{Number: 1, Try: 1, Error: "a"}, {Number: 2, Try: 0, Error: "lease"}, {Number: 4, Try: 1, Error: "c"}}
	labels := func(as []Attempt) []string {
		var out []string
		for _, a := range as {
			out = append(out, a.Label()+" "+a.Error)
		}
		return out
	}
	got := labels(EarlierFailures(Unit{Status: Failed, Error: "c"}, NewestFirst(history)))
	if want := []string{"attempt 2 lease", "try 1 a"}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("earlier failures of a failed unit = %q, want %q", got, want)
	}
	got = labels(EarlierFailures(Unit{Status: Pending, Attempts: 4}, NewestFirst(history)))
	if len(got) != 3 || got[0] != "try 1 c" {
		t.Errorf("earlier failures of a released unit = %q, want all three, newest first", got)
	}
}
