package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bollhav/bollhav/state"
)

// runsRead is how many of the newest runs each refresh reads, besides the
// runs not finished yet (however old); a run seen going is followed by its
// id until it ends. Only more than this many runs both starting and
// finishing between two refreshes (5 s by default) would leave some
// unobserved.
const runsRead = 100

// runObserver observes the duration of each run that finishes after the
// Monitor started, once, from the runs table: a run's start and end are
// recorded there by whichever process ran it.
type runObserver struct {
	since time.Time
	seen  map[int64]bool
	// going are the runs seen unfinished, until they are seen finished.
	going    map[int64]bool
	duration *prometheus.HistogramVec
}

func newRunObserver(since time.Time, duration *prometheus.HistogramVec) *runObserver {
	return &runObserver{since: since, seen: map[int64]bool{}, going: map[int64]bool{}, duration: duration}
}

// observe takes the newest runs and the unfinished ones, and reads with
// get each run it saw going that is no longer among them (it finished
// since, and fell out of the newest).
func (r *runObserver) observe(ctx context.Context, runs []state.Run, get func(context.Context, int64) (state.Run, error)) error {
	seen := make(map[int64]bool, len(runs))
	in := make(map[int64]bool, len(runs))
	for _, run := range runs {
		in[run.ID] = true
		r.one(run, seen)
	}
	for id := range r.going {
		if in[id] {
			continue
		}
		run, err := get(ctx, id)
		if errors.Is(err, state.ErrNotFound) {
			delete(r.going, id)
			continue
		}
		if err != nil {
			return err
		}
		r.one(run, nil)
	}
	// Only the runs still among the newest can come back; the rest are
	// forgotten, so the set stays as small as one read.
	r.seen = seen
	return nil
}

// one observes run if it finished and was not observed yet, and follows it
// while it goes on; seen, when not nil, collects the finished runs of this
// read.
func (r *runObserver) one(run state.Run, seen map[int64]bool) {
	if run.FinishedAt == nil {
		r.going[run.ID] = true
		return
	}
	wasGoing := r.going[run.ID]
	delete(r.going, run.ID)
	if run.FinishedAt.Before(r.since) {
		return
	}
	if seen != nil {
		seen[run.ID] = true
	}
	if r.seen[run.ID] && !wasGoing {
		return
	}
	if d := run.FinishedAt.Sub(run.StartedAt); d >= 0 {
		r.duration.WithLabelValues(run.Pipeline, string(run.Status)).Observe(d.Seconds())
	}
}
