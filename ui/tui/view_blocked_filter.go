package tui

import (
	tea "charm.land/bubbletea/v2"
)

// The Blocked queue's filter is laid out off the event loop once the queue
// is large: matching and grouping 1.16M units (ten million units, a
// million of them blocked) takes about half a second, and the filter
// changes with every key typed. Until the layout arrives the list shows
// the last filter's and the footer says it is filtering; one layout runs
// at a time, and when it ends the newest filter is laid out next, so fast
// typing costs one layout behind, not one a key.

// syncLayoutUnits is the largest queue laid out in Update itself: under a
// frame (about 10 ms, scaled from half a second for 1.16M units), and the
// list changes with the very key typed.
const syncLayoutUnits = 20_000

// relayout is the bookkeeping of the layout off the loop.
type relayout struct {
	// queue counts the queues the view has taken: a layout of an older
	// queue is dropped.
	queue uint64
	// running is true while a layout is out; syncMax overrides
	// syncLayoutUnits when positive (tests).
	running bool
	syncMax int
}

// laidOut is a filtered layout, worked out off the loop for the view's
// queue number queue.
type laidOut struct {
	view   int
	queue  uint64
	layout queueLayout
}

func (m laidOut) viewID() int { return m.view }

// layOut brings the layout up to the filter: at once for a small queue;
// for a large one it starts the layout off the loop unless one is out
// already (its answer starts the next).
func (v *blockedView) layOut() tea.Cmd {
	if v.queueLayout.query == v.query && v.queueLayout.lines != nil {
		return nil
	}
	limit := syncLayoutUnits
	if v.relayout.syncMax > 0 {
		limit = v.relayout.syncMax
	}
	if len(v.units) <= limit {
		v.refilter(v.selectedRef())
		return nil
	}
	if v.relayout.running {
		return nil
	}
	v.relayout.running = true
	id, queue, units, ready, roots, query := v.id, v.relayout.queue, v.units, v.ready, v.roots, v.query
	return func() tea.Msg {
		return laidOut{view: id, queue: queue, layout: layoutQueue(units, ready, roots, query)}
	}
}

// laidOut takes a layout of the current queue, keeping the cursor on its
// unit, and lays out the newest filter when the user typed on meanwhile.
func (v *blockedView) laidOut(m laidOut) tea.Cmd {
	v.relayout.running = false
	if m.queue == v.relayout.queue {
		sel := v.selectedRef()
		v.queueLayout = m.layout
		v.place(sel)
	}
	return v.layOut()
}
