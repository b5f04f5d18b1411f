package spec

import (
	"time"
)

// Retry is a model's retry policy inside one run: a failed unit with
// attempts left goes back to pending with a not-before time, and only when
// none are left is the failure final for the run (docs/design.md, The task
// graph). Attempts counts tries including the first, so 1 — the default —
// means no retry.
type Retry struct {
	Attempts int
	// Delay is the wait before the second attempt; each later wait doubles,
	// up to MaxDelay.
	Delay    time.Duration
	MaxDelay time.Duration
	// Pos is where the model's retry block is, zero when the policy is the
	// default or comes from defaults: alone.
	Pos Position
}

// The policy a model gets when neither it nor defaults: say otherwise, and
// the delays a retry block that gives only attempts gets.
const (
	DefaultRetryDelay    = 30 * time.Second
	DefaultRetryMaxDelay = 10 * time.Minute
)

// NoRetry is the default policy: one attempt per run.
var NoRetry = Retry{Attempts: 1, Delay: DefaultRetryDelay, MaxDelay: DefaultRetryMaxDelay}

// Retries reports whether the policy allows more than one attempt.
func (r Retry) Retries() bool { return r.Attempts > 1 }

// Backoff is the wait after the failed-th failed attempt (1 for the first),
// before the next one: Delay doubled for each earlier failure, capped at
// MaxDelay, then scaled into [1/2, 1] of itself by jitter (a number in
// [0, 1), drawn by the caller) so that units failed together by one outage
// do not all come back in the same instant.
func (r Retry) Backoff(failed int, jitter float64) time.Duration {
	d := r.Delay
	for i := 1; i < failed && d < r.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, r.MaxDelay)
	jitter = min(max(jitter, 0), 1)
	return d/2 + time.Duration(float64(d/2)*jitter)
}

// Defaults are the spec-wide settings under the top-level defaults: key,
// which a model's own keys override field by field.
type Defaults struct {
	// Retry is the default retry policy; nil when defaults: sets none.
	Retry *RetryDefaults
	// Connection is the connection of every model that names none of its
	// own; nil when defaults: sets none (they live in the state store's
	// database).
	Connection *Connection
}

// RetryDefaults is defaults: retry:, each field zero when not given.
type RetryDefaults struct {
	Attempts        int
	Delay, MaxDelay time.Duration
	Pos             Position
}
