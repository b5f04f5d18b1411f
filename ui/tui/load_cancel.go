package tui

import "context"

// A view's load runs under a context of its own, cancelled when the view
// leaves the stack: a load that grows with the platform (the Blocked
// queue: 40 s and 840 MB at ten million units) would otherwise run on
// after the user went back, and opening the view again would start a
// second one beside it. A view that comes back (- returns to an earlier
// stack) loads again; the cancelled answer is dropped like any answer to a
// view off the stack.

// viewLoad is the context of one view's newest load.
type viewLoad struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// beginLoad gives view id's next load a fresh context under the app's,
// ending the previous one's.
func (c *common) beginLoad(id int) {
	if c.loads == nil {
		c.loads = map[int]viewLoad{}
	}
	if l, ok := c.loads[id]; ok {
		l.cancel()
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.loads[id] = viewLoad{ctx: ctx, cancel: cancel}
}

// loadContext is the context view id's load runs under: the app's when
// no load was begun for it.
func (c *common) loadContext(id int) context.Context {
	if l, ok := c.loads[id]; ok {
		return l.ctx
	}
	return c.ctx
}

// cancelOffStack cancels the loads of the views no longer on the stack.
func (a *App) cancelOffStack() {
	if len(a.loads) == 0 {
		return
	}
	on := make(map[int]bool, len(a.stack))
	for _, v := range a.stack {
		on[v.base().id] = true
	}
	for id, l := range a.loads {
		if !on[id] {
			l.cancel()
			delete(a.loads, id)
		}
	}
}
