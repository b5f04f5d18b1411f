package cli

import (
	"strconv"
	"strings"

	"github.com/bollhav/bollhav/state"
)

// retryJSON is a unit's retry wait in units, why and incidents JSON:
// {"try":2,"of":5,"at":"…","ended_run":null} — the next try, the model's
// retry.attempts (0 when not known), the not-before time, and the run that
// set the retry when it has ended since (then no try comes from it, and the
// next run starts a fresh budget).
type retryJSON struct {
	Try      int    `json:"try"`
	Of       int    `json:"of"`
	At       string `json:"at"`
	EndedRun *int64 `json:"ended_run"`
}

// attemptJSON is one failed attempt in units and why JSON.
type attemptJSON struct {
	Number int    `json:"number"`
	Try    int    `json:"try"`
	Error  string `json:"error"`
	At     string `json:"at"`
	// RunID is null for a worker's attempt.
	RunID *int64 `json:"run_id"`
}

func retryToJSON(w *state.RetryWait) *retryJSON {
	if w == nil {
		return nil
	}
	j := &retryJSON{Try: w.Try, Of: w.Of, At: state.FormatTime(w.At)}
	if w.EndedRun != 0 {
		j.EndedRun = &w.EndedRun
	}
	return j
}

// attemptsToJSON lists failures (newest first) as JSON, [] when there are
// none.
func attemptsToJSON(failures []state.Attempt) []attemptJSON {
	out := make([]attemptJSON, 0, len(failures))
	for _, a := range failures {
		j := attemptJSON{Number: a.Number, Try: a.Try, Error: a.Error, At: state.FormatTime(a.At)}
		if a.RunID != 0 {
			j.RunID = &a.RunID
		}
		out = append(out, j)
	}
	return out
}

// earlierInLine is how many earlier failures a units line names before it
// points at why for the rest: a line per unit stays readable.
const earlierInLine = 3

// failureDetail is the units DETAIL text of a failed or retrying unit: the
// retry line, the failure that left it here, then earlier failures newest
// first with their times — "retry 3/5 at T; try 2 failed: B; earlier: try
// 1 at T1: A". failures is newest first.
func failureDetail(u state.Unit, retry *state.RetryWait, failures []state.Attempt) []string {
	var parts []string
	earlier := state.EarlierFailures(u, failures)
	if retry != nil {
		parts = append(parts, retry.Line(state.FormatTime))
		if u.Error != "" {
			label := "failed"
			if len(earlier) < len(failures) {
				label = failures[0].Label() + " failed"
			}
			parts = append(parts, label+": "+oneLine(u.Error))
		}
	} else if u.Error != "" {
		parts = append(parts, oneLine(u.Error))
	}
	if len(earlier) == 0 {
		return parts
	}
	var b strings.Builder
	b.WriteString("earlier: ")
	for i, a := range earlier {
		if i == earlierInLine {
			b.WriteString("; +" + strconv.Itoa(len(earlier)-i) + " more (bollhav why)")
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(a.Label() + " at " + state.FormatTime(a.At) + ": " + oneLine(a.Error))
	}
	return append(parts, b.String())
}
