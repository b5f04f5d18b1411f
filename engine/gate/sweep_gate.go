package gate

import (
	"math"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
)

// edgeVerdict is what one gated upstream says about one unit in a sweep:
// the Verdict of Evaluate without its reason, ranges and ages, which a
// sweep over a million units does not need and cannot afford to format.
// They are ordered by how a unit's verdicts fold (the worst wins): a hard
// error over a missing range over an outdated upstream over freshness — a
// unit that misses a range on one upstream and is stale on another waits
// for the range.
type edgeVerdict uint8

const (
	edgeOK edgeVerdict = iota
	edgeStale
	// edgeOutdated: a require_current edge misses nothing but what rows
	// applied under an earlier definition cover.
	edgeOutdated
	edgeMissing
	edgeError
)

// noFlip is the flip time of a verdict the clock alone cannot change.
const noFlip = math.MaxInt64

// sweepEdge is one gated upstream of a model, prepared for judging many
// units: everything Evaluate decides without the unit's window (hard
// errors, EXISTS, WHOLE and timeless upstreams) is decided once, so only
// EXACT, ENCAPSULATE and THROUGH look at each window.
type sweepEdge struct {
	level spec.ContractLevel
	ix    *upstreamIndex
	// constant is true when the verdict does not depend on the window;
	// flip is then its flip time (see evalAt).
	constant bool
	verdict  edgeVerdict
	flip     int64
	// fresh is set when the source has a freshness limit: rows applied
	// before cut (Unix µs) are too old; all selects the ALL scope; within
	// is the limit in nanoseconds.
	fresh, all bool
	cut        int64
	within     int64
	// whole is, for a require_current edge whose upstream has outdated
	// windows (ix is then its current index), the same edge over the
	// upstream's every applied row: where ix misses a range and whole
	// does not, only outdated rows cover it (edgeOutdated).
	whole *sweepEdge
}

// newCurrentEdge is newSweepEdge for a require_current edge that reads cur,
// the upstream's index without its outdated rows; whole is the upstream's
// index with them (the same index when nothing is outdated). A range that
// only outdated rows cover is then edgeOutdated, not edgeMissing, as
// Evaluate reports it apart (Verdict.Outdated).
func newCurrentEdge(src spec.Source, timelessDown bool, cur, whole *upstreamIndex, now time.Time) sweepEdge {
	e := newSweepEdge(src, timelessDown, cur, now)
	if cur == whole {
		return e
	}
	w := newSweepEdge(src, timelessDown, whole, now)
	if e.constant {
		if e.verdict == edgeMissing && w.verdict != edgeMissing {
			e.verdict, e.flip = edgeOutdated, noFlip
		}
		return e
	}
	e.whole = &w
	return e
}

// newSweepEdge prepares src of a model (timeless when down is) against its
// upstream's index, following Evaluate's order of checks exactly.
func newSweepEdge(src spec.Source, timelessDown bool, ix *upstreamIndex, now time.Time) sweepEdge {
	e := sweepEdge{level: src.Contract, ix: ix, constant: true, flip: noFlip}
	if f := src.Freshness; f != nil {
		e.fresh, e.all, e.cut, e.within = true, f.Scope == spec.All, cutMicros(now.Add(-f.Within)), f.Within.Nanoseconds()
	}
	sh := ix.shape
	switch {
	case hardMsg(!timelessDown, src, sh.state()) != "":
		e.verdict = edgeError
		return e
	case src.Contract == spec.Exists:
		return e
	case sh.temporality == spec.Timeless:
		// WHOLE on a timeless upstream: its existence row applied.
		newest, oldest, ok := ix.all()
		e.verdict, e.flip = e.judge(newest, oldest, ok)
		return e
	case src.Contract == spec.Whole:
		if !ix.hasRange || !ix.covers(ix.start, ix.rangeEnd) {
			e.verdict = edgeMissing
			return e
		}
		newest, oldest, ok := ix.span(ix.start, ix.rangeEnd)
		e.verdict, e.flip = e.judge(newest, oldest, ok)
		return e
	}
	e.constant = false
	return e
}

// evalAt judges the unit [a, b) (Unix µs) and says when the clock alone
// would change an edgeOK: the Unix nanosecond after which the applied_at
// that decides freshness is too old (noFlip without a freshness limit or
// for any other verdict — a stale upstream never gets fresher by waiting).
func (e *sweepEdge) evalAt(a, b int64) (edgeVerdict, int64) {
	if e.constant {
		return e.verdict, e.flip
	}
	v, flip := e.evalWindow(a, b)
	if v == edgeMissing && e.whole != nil {
		if w, _ := e.whole.evalWindow(a, b); w != edgeMissing {
			return edgeOutdated, noFlip
		}
	}
	return v, flip
}

// evalWindow is evalAt for an edge whose verdict depends on the window,
// over e.ix alone.
func (e *sweepEdge) evalWindow(a, b int64) (edgeVerdict, int64) {
	ix := e.ix
	switch e.level {
	case spec.Exact:
		k, ok := ix.exact(a, b)
		if !ok {
			return edgeMissing, noFlip
		}
		return e.judge(ix.at(k), ix.at(k), true)
	case spec.Encapsulate:
		if !ix.covers(a, b) {
			return edgeMissing, noFlip
		}
		if !e.fresh {
			return edgeOK, noFlip
		}
		return e.judge(ix.span(a, b))
	default: // Through: the prefix from the upstream's start, and all of [a, b)
		lo := min(ix.start, a)
		if !ix.covers(lo, b) {
			return edgeMissing, noFlip
		}
		if !e.fresh {
			return edgeOK, noFlip
		}
		return e.judge(ix.span(lo, b))
	}
}

// judge applies completeness (ok: the level selected some row) and the
// freshness limit to the selected rows' newest and oldest applied_at. An
// edgeOK under a limit comes with its flip time: the row that decides (the
// newest, or the oldest under ALL) is too old once now - within passes it,
// that is for every now after its applied_at + within.
func (e *sweepEdge) judge(newest, oldest int64, ok bool) (edgeVerdict, int64) {
	switch {
	case !ok:
		return edgeMissing, noFlip
	case !e.fresh:
		return edgeOK, noFlip
	case e.all && oldest < e.cut, !e.all && newest < e.cut:
		return edgeStale, noFlip
	}
	decide := newest
	if e.all {
		decide = oldest
	}
	if ns := decide * 1000; ns <= noFlip-e.within {
		return edgeOK, ns + e.within
	}
	return edgeOK, noFlip // a limit of centuries: never within reach
}

// cutMicros is the smallest Unix microsecond that is not before t: an
// applied_at (whole microseconds) is before t exactly when it is below it.
func cutMicros(t time.Time) int64 {
	us := t.UnixMicro()
	if t.Nanosecond()%1000 != 0 {
		us++
	}
	return us
}
