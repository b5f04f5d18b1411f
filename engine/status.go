package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// ModelStatus is one model of an environment at a glance: its shape, its
// units counted by status, its coverage and its newest applied_at. It is
// the read model behind `bollhav status` and the UI's model list.
type ModelStatus struct {
	Name     string
	Pipeline string
	// Temporality is "temporal" or "timeless".
	Temporality string
	// Flexibility is "fix" or "flex"; empty for a timeless model.
	Flexibility string
	// Interval is the grain as written ("1h", "1mo"); empty for a timeless
	// model.
	Interval string
	// Registered is false for a model of the spec that is not registered in
	// the environment yet (no apply, no run): its counts are zero and its
	// coverage is empty. The shape is then the spec's; otherwise it is the
	// registration's, which is what the units were cut by.
	Registered bool
	// Counts holds every status of state.Statuses, zero included.
	Counts map[state.UnitStatus]int
	// Coverage is the union of the model's applied windows, merged; empty
	// for a timeless model, whose one row has no window.
	Coverage      state.IntervalSet
	LastAppliedAt *time.Time
	// Outdated counts the applied units built under another definition
	// than the model's current one (CurrentFingerprint); they stay in
	// Counts[Applied] too, since gates still count them applied.
	Outdated int
	// Fingerprint is the model's current definition fingerprint.
	Fingerprint string
	// Stateless is true for a model that keeps no state (state: false):
	// no run writes a unit of it, so it has no counts.
	Stateless bool
}

// Timeless reports whether the model has one existence row and no windows.
func (s ModelStatus) Timeless() bool { return s.Temporality == spec.Timeless.String() }

// Shape is how the model is chunked, in spec.ShapeText's words.
func (s ModelStatus) Shape() string {
	t, f := spec.Temporal, spec.Fix
	if s.Timeless() {
		t = spec.Timeless
	}
	if s.Flexibility == spec.Flex.String() {
		f = spec.Flex
	}
	return spec.ShapeText(t, f, s.Interval)
}

// Units is the model's unit count over every status.
func (s ModelStatus) Units() int {
	n := 0
	for _, c := range s.Counts {
		n += c
	}
	return n
}

// ErrUnknownModel is a model neither registered in the environment nor
// defined in the spec; test for it with errors.Is. The error itself names
// the model and, when the spec has near names, suggests them.
var ErrUnknownModel = errors.New("unknown model")

type unknownModel struct{ error }

func (unknownModel) Is(target error) bool { return target == ErrUnknownModel }

// Status returns every registered model of the environment and every model
// of the spec not registered yet (with zero counts), ordered by pipeline and
// then name. The counts, coverage and newest applied_at of every model are
// one read of the store's kept summary (Store.Summaries), not reads per
// model; no unit history is loaded into memory.
func (e *Engine) Status(ctx context.Context) ([]ModelStatus, error) {
	recs, outdated, current, err := e.outdatedOf(ctx)
	if err != nil {
		return nil, err
	}
	sums, err := e.store.Summaries(ctx, e.opts.Env.Suffix, "")
	if err != nil {
		return nil, fmt.Errorf("reading the unit summaries of %s: %w", e.opts.Env, err)
	}
	byName := make(map[string]state.ModelSummary, len(sums))
	for _, sum := range sums {
		byName[sum.Model] = sum
	}
	out := make([]ModelStatus, 0, len(recs))
	seen := make(map[string]bool, len(recs))
	for _, rec := range recs {
		seen[rec.Name] = true
		st := registeredStatus(rec, byName[rec.Name])
		st.Outdated, st.Fingerprint = outdated[rec.Name], current[rec.Name]
		st.Stateless = !e.keepsState(rec)
		out = append(out, st)
	}
	if e.spec != nil {
		for _, m := range e.spec.Models {
			if !seen[m.Name] {
				st := specStatus(m)
				st.Fingerprint = current[m.Name]
				out = append(out, st)
			}
		}
	}
	slices.SortFunc(out, func(a, b ModelStatus) int {
		return cmp.Or(cmp.Compare(a.Pipeline, b.Pipeline), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// ModelStatus is Status for one model: its registration's status, or the
// spec's shape with zero counts when it is not registered. A model that is
// neither is an error wrapping ErrUnknownModel.
func (e *Engine) ModelStatus(ctx context.Context, name string) (ModelStatus, error) {
	rec, err := e.store.Model(ctx, e.opts.Env.Suffix, name)
	switch {
	case err == nil:
		sums, err := e.store.Summaries(ctx, e.opts.Env.Suffix, name)
		if err != nil {
			return ModelStatus{}, fmt.Errorf("reading the unit summary of %s: %w", name, err)
		}
		var sum state.ModelSummary
		if len(sums) == 1 {
			sum = sums[0]
		}
		st := registeredStatus(rec, sum)
		st.Stateless = !e.keepsState(rec)
		if st.Fingerprint, err = e.CurrentFingerprint(ctx, name); err != nil {
			return st, err
		}
		counts, err := e.store.FingerprintCounts(ctx, e.opts.Env.Suffix, name)
		if err != nil {
			return st, fmt.Errorf("counting the applied units of %s by definition: %w", name, err)
		}
		st.Outdated = outdatedCounts(counts, map[string]string{name: st.Fingerprint})[name]
		return st, nil
	case errors.Is(err, state.ErrNotFound):
		if m := e.spec.Model(name); m != nil {
			st := specStatus(m)
			st.Fingerprint = spec.Fingerprint(m)
			return st, nil
		}
		return ModelStatus{}, e.unknownModel(name)
	default:
		return ModelStatus{}, fmt.Errorf("reading the registration of %s: %w", name, err)
	}
}

func (e *Engine) unknownModel(name string) error {
	if e.spec != nil {
		return unknownModel{spec.UnknownModelError(e.spec, name)}
	}
	return unknownModel{fmt.Errorf("unknown model %q: not registered in %s", name, e.opts.Env)}
}

// ScanUnits streams a model's units in window order, narrowed to those
// overlapping w (all of them when w is zero) and, when statuses is not
// empty, to those statuses; fn returning an error stops the scan with it. A
// model of the spec that is not registered has no units; one that is
// neither registered nor in the spec is an error wrapping ErrUnknownModel.
// A window on a timeless model is refused: its one row has no window.
func (e *Engine) ScanUnits(ctx context.Context, model string, w state.Window, statuses []state.UnitStatus, fn func(state.Unit) error) error {
	st, err := e.ModelStatus(ctx, model)
	if err != nil {
		return err
	}
	if st.Timeless() && (!w.IsZero()) {
		return fmt.Errorf("model %s is timeless: it has one existence row and no windows; list it without a window", model)
	}
	if !st.Registered {
		return nil
	}
	return e.store.ScanUnits(ctx, state.UnitQuery{Env: e.opts.Env.Suffix, Model: model, Window: w, Statuses: statuses}, fn)
}

// LatestChangeSeq returns the seq of the newest change in the store's feed
// (0 when it is empty); see state.LatestSeq.
func (e *Engine) LatestChangeSeq(ctx context.Context) (int64, error) {
	return state.LatestSeq(ctx, e.store)
}

// keepsState reports whether the registered model keeps state: as the spec
// defines it when it does, else as registered.
func (e *Engine) keepsState(rec state.ModelRecord) bool {
	if m := e.spec.Model(rec.Name); m != nil {
		return m.State
	}
	m, err := spec.ModelFromRecord(rec)
	return err != nil || m.State
}

// registeredStatus is a registered model's status from its record and its
// summary (a zero summary: no units).
func registeredStatus(rec state.ModelRecord, sum state.ModelSummary) ModelStatus {
	st := ModelStatus{Name: rec.Name, Pipeline: rec.Pipeline, Temporality: cmp.Or(rec.Temporality, spec.Temporal.String()), Registered: true}
	if !st.Timeless() {
		st.Flexibility = cmp.Or(rec.Flexibility, spec.Fix.String())
		st.Interval = rec.Interval
		st.Coverage = sum.Coverage
	}
	st.Counts = zeroCounts()
	for s, n := range sum.Counts {
		st.Counts[s] += n
	}
	if sum.LastAppliedAt != nil {
		t := sum.LastAppliedAt.UTC()
		st.LastAppliedAt = &t
	}
	return st
}

func specStatus(m *spec.Model) ModelStatus {
	st := ModelStatus{Name: m.Name, Pipeline: m.Pipeline, Temporality: m.Temporality.String(), Counts: zeroCounts(), Stateless: !m.State}
	if m.Temporality == spec.Temporal && m.Chunking != nil {
		st.Flexibility = m.Chunking.Flexibility.String()
		st.Interval = m.Chunking.Interval.String()
	}
	return st
}

func zeroCounts() map[state.UnitStatus]int {
	c := make(map[state.UnitStatus]int, len(state.Statuses))
	for _, s := range state.Statuses {
		c[s] = 0
	}
	return c
}
