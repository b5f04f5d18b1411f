// Package gate owns the contract gate: whether a unit's gated upstreams
// satisfy their contracts (EXISTS, EXACT, ENCAPSULATE, THROUGH, WHOLE) and
// freshness, and the reason a unit is blocked when they do not. It judges
// one unit (Judge, Reader.Unit), every outstanding unit of an environment
// from one read of the store (Reader.Sweep, with a per-upstream index of
// applied intervals), keeps that sweep in memory and current from the
// change feed for a long-lived process (Live: a batch of changes re-judges
// only what it can alter, the clock only what it flips), lists blocked
// units by downstream impact (Reader.Blocked) and explains one unit's wait
// down to its root cause (Reader.Why).
//
// It only reads the store. It must not claim, run, mark or otherwise change
// a unit: the engine's run loop acts on its verdicts, so the UI and the CLI
// can ask the same questions of a read-only store and get the same answers.
package gate
