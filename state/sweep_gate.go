package state

import "context"

// GateSweepReader is a Store that reads only what a gate sweep can use,
// where SweepReader reads every unit: the units that are not applied (the
// ones a sweep judges) and, of each model some gate reads, its applied rows
// reduced as far as that gate allows (SweepNeed). Most of an environment
// is applied history; most of that history belongs to models no gate reads
// row by row, so the read shrinks by several times. Both backends
// implement it; the engine falls back to SweepReader (and ReduceSweep) for
// a Store that does not.
type GateSweepReader interface {
	// SweepGate calls fn once for each model of env that has units q
	// selects, in no particular order of models, with those units in
	// window order: every unit that is not applied (of every model when
	// q.Outstanding is nil, else of the models it names), and the applied
	// rows of q.Applied's models reduced by their need. The result equals
	// ReduceSweep over SweepUnits' units, model by model. fn may keep the
	// slice.
	SweepGate(ctx context.Context, env string, q SweepQuery, fn func(model string, units []SweepUnit) error) error
}

// SweepQuery is what a gate sweep reads.
type SweepQuery struct {
	// Outstanding names the models whose units that are not applied are
	// read; nil reads them for every model.
	Outstanding []string
	// Applied is, by model, how much of its applied rows is read; a model
	// not in it has none read.
	Applied map[string]SweepNeed
}

// SweepNeed is how much of a model's applied rows a gate reads: each level
// keeps everything the levels below it keep.
type SweepNeed uint8

const (
	// NeedNone: no applied row (only EXISTS or no gate reads the model).
	NeedNone SweepNeed = iota
	// NeedCoverage: the coverage only — the windowed rows merged into
	// islands (overlapping or touching rows join) with AppliedAt 0, as no
	// freshness limit reads them, and the existence row as it is. Enough
	// for ENCAPSULATE, THROUGH and WHOLE without a freshness limit.
	NeedCoverage
	// NeedFreshness: the coverage, and for every window the newest and
	// oldest applied_at of the rows it overlaps: touching rows with the
	// same applied_at merge (a window overlaps the merged row exactly when
	// it overlaps one of its parts, so no answer changes), others stay
	// apart. What a freshness limit on ENCAPSULATE, THROUGH or WHOLE reads.
	NeedFreshness
	// NeedRows: every applied row as stored, for EXACT, which asks for a
	// row at exactly a window.
	NeedRows
)

// ReduceSweep is the reduction SweepGate applies to one model's units
// (all of them, in window order, as SweepUnits gives them): the units that
// are not applied when outstanding, the applied rows as need keeps them.
// It reuses us's array. It is the definition the stores' own reductions
// are tested against, and the engine's fallback.
func ReduceSweep(us []SweepUnit, outstanding bool, need SweepNeed) []SweepUnit {
	out := us[:0]
	island := -1 // index in out of the last merged applied row
	for _, u := range us {
		if u.Status != CodeApplied {
			if outstanding {
				out = append(out, u)
			}
			continue
		}
		if need == NeedNone {
			continue
		}
		if u.Since == u.Until || need == NeedRows {
			out = append(out, u)
			continue
		}
		if island >= 0 {
			last := &out[island]
			switch {
			case need == NeedCoverage && u.Since <= last.Until:
				last.Until = max(last.Until, u.Until)
				continue
			case need == NeedFreshness && u.Since == last.Until && u.AppliedAt == last.AppliedAt:
				last.Until = u.Until
				continue
			}
		}
		if need == NeedCoverage {
			u.AppliedAt = 0
		}
		out = append(out, u)
		island = len(out) - 1
	}
	return out
}
