package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bollhav/bollhav/state"
)

// maxTracked bounds the claims the observer remembers while their units
// run, so a unit duration can be measured when the outcome arrives. A unit
// claimed while the table is full is still counted as a claim; only its
// duration goes unmeasured.
const maxTracked = 100_000

// unitKey names one unit in memory (never as a label): its model and its
// window's bounds.
type unitKey struct {
	model        string
	since, until int64
}

func keyOf(c state.Change) unitKey {
	return unitKey{model: c.Model, since: c.Window.Since.UnixMicro(), until: c.Window.Until.UnixMicro()}
}

// observer turns the change feed of one environment into counters: every
// transition any process makes is in the feed, so these count the work of
// every worker and run on the store, not only this process's. It runs on
// the Monitor's goroutine only.
type observer struct {
	env string
	// pipeline names a model's pipeline, for every family's pipeline label.
	pipeline func(model string) string

	claims, retries, expiries *prometheus.CounterVec
	unitDuration              *prometheus.HistogramVec

	// started holds when each unit being run was claimed.
	started map[unitKey]time.Time
	// returned are single units seen going from running back to pending,
	// to be told apart (retry or lease expiry) by reading the unit.
	returned []state.Change
	// dirty are the models whose units changed since the last refresh.
	dirty map[string]bool
}

func newObserver(env string, pipeline func(string) string, claims, retries, expiries *prometheus.CounterVec, unitDuration *prometheus.HistogramVec) *observer {
	return &observer{env: env, pipeline: pipeline, claims: claims, retries: retries, expiries: expiries,
		unitDuration: unitDuration, started: map[unitKey]time.Time{}, dirty: map[string]bool{}}
}

// zero makes model's counters exist at 0 before its first event, so an
// alert on increase() sees the first one.
func (o *observer) zero(model, pipeline string) {
	o.claims.WithLabelValues(model, pipeline)
	o.retries.WithLabelValues(model, pipeline)
	o.expiries.WithLabelValues(model, pipeline)
}

// see takes one change of the feed.
func (o *observer) see(c state.Change) {
	if c.Env != o.env {
		return
	}
	o.dirty[c.Model] = true
	switch {
	case c.From == state.Pending && c.To == state.Running:
		o.claims.WithLabelValues(c.Model, o.pipeline(c.Model)).Add(float64(c.Count))
		if c.Count == 1 && len(o.started) < maxTracked {
			o.started[keyOf(c)] = c.At
		}
	case c.From == state.Running && c.To == state.Pending && c.Count == 1:
		// A retry (a failed try with tries left), a lease that expired,
		// or a unit handed back unrun: the change alone does not say.
		o.returned = append(o.returned, c)
	case c.From == state.Running && c.To == state.Pending:
		// Only ReleaseExpired moves many running units back at once.
		o.expiries.WithLabelValues(c.Model, o.pipeline(c.Model)).Add(float64(c.Count))
		o.forget(c)
	case c.From == state.Running && c.Count == 1 && (c.To == state.Applied || c.To == state.Failed || c.To == state.Blocked):
		o.finish(c, string(c.To))
	case c.From == state.Running:
		o.forget(c)
	}
}

// finish observes the duration of the attempt c ended, when its claim was
// seen.
func (o *observer) finish(c state.Change, outcome string) {
	k := keyOf(c)
	if start, ok := o.started[k]; ok {
		delete(o.started, k)
		if d := c.At.Sub(start); d >= 0 {
			o.unitDuration.WithLabelValues(c.Model, o.pipeline(c.Model), outcome).Observe(d.Seconds())
		}
	}
}

// forget drops the claims inside c's window: their units left running
// without an outcome of their own.
func (o *observer) forget(c state.Change) {
	if c.Window.IsZero() {
		delete(o.started, keyOf(c))
		return
	}
	lo, hi := c.Window.Since.UnixMicro(), c.Window.Until.UnixMicro()
	for k := range o.started {
		if k.model == c.Model && k.since >= lo && k.until <= hi {
			delete(o.started, k)
		}
	}
}

// unitScan streams a model's units overlapping a window, with one of the
// statuses (any when none), as Engine.ScanStoredUnits does.
type unitScan func(ctx context.Context, model string, w state.Window, statuses []state.UnitStatus, fn func(state.Unit) error) error

// classify tells the returned units apart by reading each once: a unit a
// retry sent back holds a not-before time, which only a retry sets (a
// claim clears it), so it counts as a retry; any other is counted as a
// lease expiry. Read failures are returned, joined, after the rest were
// classified; the unit that could not be read is not counted. scan reads
// the units of the observer's environment (Engine.ScanStoredUnits), the
// only one whose changes it keeps.
func (o *observer) classify(ctx context.Context, scan unitScan) error {
	var errs []error
	for _, c := range o.returned {
		retry, err := heldForRetry(ctx, scan, c)
		if err != nil {
			errs = append(errs, err)
			o.forget(c)
			continue
		}
		if retry {
			o.retries.WithLabelValues(c.Model, o.pipeline(c.Model)).Inc()
			o.finish(c, "retry")
		} else {
			o.expiries.WithLabelValues(c.Model, o.pipeline(c.Model)).Inc()
			o.forget(c)
		}
	}
	o.returned = o.returned[:0]
	return errors.Join(errs...)
}

// heldForRetry reports whether the unit c moved is pending with a
// not-before time. It reads the units overlapping c's window (one, on a
// fixed grid) from the store's index, through scan.
func heldForRetry(ctx context.Context, scan unitScan, c state.Change) (bool, error) {
	retry := false
	err := scan(ctx, c.Model, c.Window, nil, func(u state.Unit) error {
		if u.Window.Since.Equal(c.Window.Since) && u.Window.Until.Equal(c.Window.Until) {
			retry = u.Status == state.Pending && u.NotBefore != nil
		}
		return nil
	})
	if errors.Is(err, state.ErrNotFound) {
		return false, nil
	}
	return retry, err
}
