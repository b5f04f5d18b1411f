package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bollhav/bollhav/state"
)

// runsRead is how many of the newest runs each refresh reads. More runs
// than this finishing between two refreshes (5 s by default) would leave
// the oldest of them unobserved.
const runsRead = 100

// runObserver observes the duration of each run that finishes after the
// Monitor started, once, from the runs table: a run's start and end are
// recorded there by whichever process ran it.
type runObserver struct {
	since    time.Time
	seen     map[int64]bool
	duration *prometheus.HistogramVec
}

func newRunObserver(since time.Time, duration *prometheus.HistogramVec) *runObserver {
	return &runObserver{since: since, seen: map[int64]bool{}, duration: duration}
}

// observe takes the newest runs, newest first.
func (r *runObserver) observe(runs []state.Run) {
	seen := make(map[int64]bool, len(runs))
	for _, run := range runs {
		if run.FinishedAt == nil || run.FinishedAt.Before(r.since) {
			continue
		}
		seen[run.ID] = true
		if r.seen[run.ID] {
			continue
		}
		if d := run.FinishedAt.Sub(run.StartedAt); d >= 0 {
			r.duration.WithLabelValues(run.Pipeline, string(run.Status)).Observe(d.Seconds())
		}
	}
	// Only the runs still among the newest can come back; the rest are
	// forgotten, so the set stays as small as one read.
	r.seen = seen
}
