// Package tick holds the one loop that the engine's heartbeats, the metrics
// monitor and the SSH keepalive share: do a step every interval until the
// context ends or the step says to stop. One copy keeps the ticker stopped
// and the context checked the same way everywhere.
package tick

import (
	"context"
	"time"
)

// Every calls step every interval until ctx ends or step returns false. The
// first call comes one interval after Every starts, as time.Ticker's first
// tick does; a step that runs longer than interval delays the next one
// rather than queueing ticks behind it.
func Every(ctx context.Context, interval time.Duration, step func() bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if !step() {
				return
			}
		}
	}
}
