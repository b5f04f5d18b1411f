package gate

import (
	"cmp"

	"github.com/bollhav/bollhav/graph"
)

// A batch of changes used to look at every model for one whose verdicts
// the clock may have flipped since the last batch (m.flip passed): ten
// thousand models a batch at 10M units, for the handful a freshness limit
// or a growing WHOLE range touches. The flips are kept in a min-heap
// instead, so a batch pops only the models whose moment has come, and
// NextChange reads the earliest from its top.
//
// The heap is lazy: a model's flip moves (judgeRange lowers it, a whole
// re-judgement recomputes it) without the old entry being found and
// removed. queueFlip pushes the model's flip whenever it differs from the
// one last pushed (m.queued), so the current flip of every model with
// outstanding units is always in the heap; an entry whose time is not the
// model's queued one is stale and is dropped when it reaches the top.

// flipEntry is one model's flip as it was pushed.
type flipEntry struct {
	at int64
	m  *liveModel
}

func earlierFlip(a, b flipEntry) int { return cmp.Compare(a.at, b.at) }

// current reports whether e is its model's flip as last queued.
func (e flipEntry) current() bool { return e.m.queued == e.at }

// queueFlip puts m's flip in the heap when it is not there yet; call it
// whenever m was judged again. A model with nothing outstanding has no
// verdict for the clock to flip: its entry, if any, goes stale, and the
// change that makes one of its units outstanding again re-judges it and
// queues it then.
func (st *liveState) queueFlip(m *liveModel) {
	want := m.flip
	if !m.judged || m.counts.Outstanding == 0 {
		want = noFlip
	}
	if want == m.queued {
		return
	}
	m.queued = want
	if want == noFlip {
		return
	}
	st.flips.Push(flipEntry{at: want, m: m})
	if st.flips.Len() > 2*len(st.models)+64 {
		st.requeueFlips()
	}
}

// requeueFlips builds the heap again from every model's flip, dropping
// the stale entries a long run of batches left.
func (st *liveState) requeueFlips() {
	var entries []flipEntry
	for _, m := range st.models {
		m.queued = noFlip
		if m.judged && m.flip != noFlip && m.counts.Outstanding > 0 {
			m.queued = m.flip
			entries = append(entries, flipEntry{at: m.flip, m: m})
		}
	}
	if st.flips == nil {
		st.flips = graph.NewHeap(earlierFlip)
	}
	st.flips.Reset(entries...)
}

// dueFlips takes out of the heap, and returns, the models whose flip is
// before nowNS: the clock alone may have changed one of their verdicts.
func (st *liveState) dueFlips(nowNS int64) []*liveModel {
	var due []*liveModel
	for st.flips.Len() > 0 && st.flips.Peek().at < nowNS {
		e := st.flips.Pop()
		if e.current() {
			e.m.queued = noFlip
			due = append(due, e.m)
		}
	}
	st.dropStaleFlips()
	return due
}

// dropStaleFlips pops stale entries off the top, so that the top, when
// there is one, is the earliest current flip.
func (st *liveState) dropStaleFlips() {
	for st.flips.Len() > 0 && !st.flips.Peek().current() {
		st.flips.Pop()
	}
}
