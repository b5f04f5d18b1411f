package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// Definition states of an applied unit, beside its status: whether the
// definition it was built under is the model's current one.
const (
	// DefinitionCurrent: built under the current definition.
	DefinitionCurrent = "current"
	// DefinitionOutdated: built under another definition; the gate still
	// counts the unit applied.
	DefinitionOutdated = "outdated"
	// DefinitionUnknown: no fingerprint recorded (an operator's mark, or
	// applied before the store recorded fingerprints): never outdated.
	DefinitionUnknown = "unknown"
	// DefinitionBuiltOnOutdated is how units and the UI name a current or
	// unknown unit built on outdated windows upstream (TraceOutdated).
	DefinitionBuiltOnOutdated = "built-on-outdated"
)

// CurrentFingerprint is model's current definition fingerprint: the
// spec's when the engine has a spec that defines the model (what a run
// would apply now, registered or not), the registration's otherwise (an
// engine opened from the store alone). "" when neither knows the model.
func (e *Engine) CurrentFingerprint(ctx context.Context, model string) (string, error) {
	if m := e.spec.Model(model); m != nil {
		return spec.Fingerprint(m), nil
	}
	rec, err := e.store.Model(ctx, e.opts.Env.Suffix, model)
	if errors.Is(err, state.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the registration of %s: %w", model, err)
	}
	return spec.RecordFingerprint(rec)
}

// currentFingerprints is CurrentFingerprint for every registered model of
// the environment and every model of the spec.
func (e *Engine) currentFingerprints(recs []state.ModelRecord) (map[string]string, error) {
	out := make(map[string]string, len(recs))
	for _, rec := range recs {
		if e.spec != nil && e.spec.Model(rec.Name) != nil {
			continue // the spec's fingerprint wins below
		}
		fp, err := spec.RecordFingerprint(rec)
		if err != nil {
			return nil, err
		}
		out[rec.Name] = fp
	}
	if e.spec != nil {
		for _, m := range e.spec.Models {
			out[m.Name] = spec.Fingerprint(m)
		}
	}
	return out, nil
}

// UnitDefinition is u's definition state against the model's current
// fingerprint: "" for a unit that is not applied (only applied units were
// built under a definition), else DefinitionCurrent, DefinitionOutdated or
// DefinitionUnknown.
func UnitDefinition(u state.Unit, current string) string {
	switch {
	case u.Status != state.Applied:
		return ""
	case u.Fingerprint == "" || current == "":
		return DefinitionUnknown
	case u.Fingerprint == current:
		return DefinitionCurrent
	default:
		return DefinitionOutdated
	}
}

// outdatedCounts sums, per model, the applied units whose recorded
// fingerprint is known and differs from the model's current one.
func outdatedCounts(counts []state.FingerprintCount, current map[string]string) map[string]int {
	out := map[string]int{}
	for _, c := range counts {
		cur := current[c.Model]
		if c.Fingerprint != "" && cur != "" && c.Fingerprint != cur {
			out[c.Model] += c.Count
		}
	}
	return out
}

// OutdatedCounts is how many applied units of each model of the
// environment were built under another definition than the current one
// (models with none are left out): one grouped read of the store.
func (e *Engine) OutdatedCounts(ctx context.Context) (map[string]int, error) {
	_, outdated, _, err := e.outdatedOf(ctx)
	return outdated, err
}

// outdatedOf is OutdatedCounts with what it is worked out from: recs, the
// registered models, and each model's current fingerprint.
func (e *Engine) outdatedOf(ctx context.Context) (recs []state.ModelRecord, outdated map[string]int, current map[string]string, err error) {
	recs, err = e.store.Models(ctx, e.opts.Env.Suffix)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("reading the registered models of %s: %w", e.opts.Env, err)
	}
	if current, err = e.currentFingerprints(recs); err != nil {
		return nil, nil, nil, err
	}
	counts, err := e.store.FingerprintCounts(ctx, e.opts.Env.Suffix, "")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("counting the applied units of %s by definition: %w", e.opts.Env, err)
	}
	return recs, outdatedCounts(counts, current), current, nil
}

// DefinitionChange is what changed from model's definition old (a
// fingerprint an outdated unit was built under) to current (its current
// fingerprint), read from the store's definition history: nil when the
// store does not keep old (units built before it kept definitions). The
// current definition is the spec's when the spec defines the model, else
// the registration's; ChangedAt is when current was first registered.
func (e *Engine) DefinitionChange(ctx context.Context, model, old, current string) (*gate.DefinitionChange, error) {
	history, err := e.store.Definitions(ctx, e.opts.Env.Suffix, model)
	if err != nil {
		return nil, fmt.Errorf("reading the definitions of %s: %w", model, err)
	}
	var before, now *state.DefinitionRecord
	for i := range history {
		switch history[i].Fingerprint {
		case old:
			before = &history[i]
		case current:
			now = &history[i]
		}
	}
	if before == nil {
		return nil, nil
	}
	var was, is spec.ModelDefinition
	if err := json.Unmarshal(before.Definition, &was); err != nil {
		return nil, fmt.Errorf("model %s: a kept definition is not valid JSON: %w", model, err)
	}
	switch m := e.spec.Model(model); {
	case m != nil:
		is = spec.DefinitionOf(m)
	case now != nil:
		if err := json.Unmarshal(now.Definition, &is); err != nil {
			return nil, fmt.Errorf("model %s: a kept definition is not valid JSON: %w", model, err)
		}
	default:
		rec, err := e.store.Model(ctx, e.opts.Env.Suffix, model)
		if err != nil {
			return nil, fmt.Errorf("reading the registration of %s: %w", model, err)
		}
		if err := json.Unmarshal(rec.Definition, &is); err != nil {
			return nil, fmt.Errorf("model %s: stored definition is not valid JSON: %w", model, err)
		}
	}
	ch := &gate.DefinitionChange{Changes: spec.DiffDefinitions(was, is)}
	if now != nil {
		t := now.FirstSeen
		ch.ChangedAt = &t
	}
	return ch, nil
}
