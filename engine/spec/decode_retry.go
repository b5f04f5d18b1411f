package spec

import (
	"time"

	"github.com/bollhav/bollhav/state"
)

// retryKeys are the keys of a retry: block, in a model or in defaults:.
var retryKeys = []string{"attempts", "delay", "max_delay"}

// decodeRetry reads a retry: block's fields as given; zero fields were not
// given. max_delay shorter than delay is refused here when both are in the
// same block, and again by mergeRetry when they come from two.
func (d *decoder) decodeRetry(f *field) (RetryDefaults, bool) {
	fs := d.mapping(f.val, "retry", retryKeys...)
	if fs == nil {
		return RetryDefaults{}, false
	}
	r := RetryDefaults{Pos: f.keyPos}
	ok := true
	if v := fs.present("attempts"); v != nil {
		n, good := d.count(v, 1)
		ok = ok && good
		r.Attempts = n
	}
	duration := func(key string) time.Duration {
		v := fs.present(key)
		if v == nil {
			return 0
		}
		s, good := d.str(v)
		if !good {
			ok = false
			return 0
		}
		t, err := state.ParseDuration(s)
		if err != nil {
			d.errAt(v.valPos, "retry %s: %v", key, err)
			ok = false
			return 0
		}
		return t
	}
	r.Delay, r.MaxDelay = duration("delay"), duration("max_delay")
	if r.Delay > 0 && r.MaxDelay > 0 && r.MaxDelay < r.Delay {
		d.errAt(fs.present("max_delay").valPos, "retry max_delay %s is shorter than delay %s: the backoff starts at delay and grows up to max_delay", r.MaxDelay, r.Delay)
		ok = false
	}
	return r, ok
}

// mergeRetry is the policy of a model with its own retry block own (nil when
// it has none) over the spec's defaults (nil when none): each field the
// model gives wins, then defaults:, then NoRetry's. A max_delay not given
// anywhere grows to delay when delay is longer than its default.
func (d *decoder) mergeRetry(own, defaults *RetryDefaults) Retry {
	r := NoRetry
	explicitMax := false
	for _, src := range []*RetryDefaults{defaults, own} {
		if src == nil {
			continue
		}
		if src.Attempts > 0 {
			r.Attempts = src.Attempts
		}
		if src.Delay > 0 {
			r.Delay = src.Delay
		}
		if src.MaxDelay > 0 {
			r.MaxDelay, explicitMax = src.MaxDelay, true
		}
	}
	if own != nil {
		r.Pos = own.Pos
	}
	if r.MaxDelay < r.Delay {
		if !explicitMax {
			r.MaxDelay = r.Delay
		} else if own != nil {
			d.errAt(own.Pos, "retry max_delay %s is shorter than delay %s (one of them from defaults:): the backoff starts at delay and grows up to max_delay", r.MaxDelay, r.Delay)
		} else if defaults != nil {
			d.errAt(defaults.Pos, "retry max_delay %s is shorter than delay %s", r.MaxDelay, r.Delay)
		}
	}
	return r
}
