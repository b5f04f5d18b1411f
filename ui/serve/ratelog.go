package serve

import (
	"sync"
	"time"
)

// rateLog lets one message per key through per interval and counts the
// ones it held back, so a client hammering the port with bad keys, or a
// broken keys file read on every login, cannot flood the log.
type rateLog struct {
	mu       sync.Mutex
	interval time.Duration
	last     map[string]time.Time
	held     map[string]int
}

func newRateLog(interval time.Duration) *rateLog {
	return &rateLog{interval: interval, last: map[string]time.Time{}, held: map[string]int{}}
}

// allow reports whether a message under key may be logged at now, and how
// many were held back since the last one that was.
func (r *rateLog) allow(key string, now time.Time) (ok bool, held int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if last, seen := r.last[key]; seen && now.Sub(last) < r.interval {
		r.held[key]++
		return false, 0
	}
	if len(r.last) >= 4096 { // bounded: forget everyone rather than grow
		r.last, r.held = map[string]time.Time{}, map[string]int{}
	}
	held = r.held[key]
	r.last[key] = now
	delete(r.held, key)
	return true, held
}
