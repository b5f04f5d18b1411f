package gate

import (
	"github.com/bollhav/bollhav/engine/spec"
	"time"
)

// edgeVerdict is what one gated upstream says about one unit in a sweep:
// the Verdict of Evaluate without its reason, ranges and ages, which a
// sweep over a million units does not need and cannot afford to format.
type edgeVerdict uint8

const (
	edgeOK edgeVerdict = iota
	edgeMissing
	edgeStale
	edgeError
)

// sweepEdge is one gated upstream of a model, prepared for judging many
// units: everything Evaluate decides without the unit's window (hard
// errors, EXISTS, WHOLE and timeless upstreams) is decided once, so only
// EXACT, ENCAPSULATE and THROUGH look at each window.
type sweepEdge struct {
	level spec.ContractLevel
	ix    *upstreamIndex
	// constant is true when the verdict does not depend on the window.
	constant bool
	verdict  edgeVerdict
	// fresh is set when the source has a freshness limit: rows applied
	// before cut (Unix µs) are too old; all selects the ALL scope.
	fresh, all bool
	cut        int64
}

// newSweepEdge prepares src of a model (timeless when down is) against its
// upstream's index, following Evaluate's order of checks exactly.
func newSweepEdge(src spec.Source, timelessDown bool, ix *upstreamIndex, now time.Time) sweepEdge {
	e := sweepEdge{level: src.Contract, ix: ix, constant: true}
	if f := src.Freshness; f != nil {
		e.fresh, e.all, e.cut = true, f.Scope == spec.All, cutMicros(now.Add(-f.Within))
	}
	sh := ix.shape
	switch {
	case !sh.registered:
		e.verdict = edgeError
		return e
	case src.Contract == spec.Exists:
		return e
	case src.Contract.WindowScoped() && (sh.temporality == spec.Timeless || src.Contract == spec.Exact && sh.flexibility == spec.Flex || timelessDown):
		e.verdict = edgeError
		return e
	case sh.temporality == spec.Timeless:
		// WHOLE on a timeless upstream: its existence row applied.
		newest, oldest, ok := ix.all()
		e.verdict = e.judge(newest, oldest, ok)
		return e
	case src.Contract == spec.Whole:
		if !ix.hasRange || !ix.covers(ix.start, ix.rangeEnd) {
			e.verdict = edgeMissing
			return e
		}
		newest, oldest, ok := ix.span(ix.start, ix.rangeEnd)
		e.verdict = e.judge(newest, oldest, ok)
		return e
	}
	e.constant = false
	return e
}

// eval judges the unit [a, b) (Unix µs).
func (e *sweepEdge) eval(a, b int64) edgeVerdict {
	if e.constant {
		return e.verdict
	}
	ix := e.ix
	switch e.level {
	case spec.Exact:
		k, ok := ix.exact(a, b)
		if !ok {
			return edgeMissing
		}
		return e.judge(ix.at[k], ix.at[k], true)
	case spec.Encapsulate:
		if !ix.covers(a, b) {
			return edgeMissing
		}
		if !e.fresh {
			return edgeOK
		}
		return e.judge(ix.span(a, b))
	default: // Through: the prefix from the upstream's start, and all of [a, b)
		lo := min(ix.start, a)
		if !ix.covers(lo, b) {
			return edgeMissing
		}
		if !e.fresh {
			return edgeOK
		}
		return e.judge(ix.span(lo, b))
	}
}

// judge applies completeness (ok: the level selected some row) and the
// freshness limit to the selected rows' newest and oldest applied_at.
func (e *sweepEdge) judge(newest, oldest int64, ok bool) edgeVerdict {
	switch {
	case !ok:
		return edgeMissing
	case !e.fresh:
		return edgeOK
	case e.all && oldest < e.cut, !e.all && newest < e.cut:
		return edgeStale
	}
	return edgeOK
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
