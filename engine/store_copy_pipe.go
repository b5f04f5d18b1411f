package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/bollhav/bollhav/state"
)

// pipeWriter hands each row to the target's writer on a goroutine of its
// own, so that reading the source and writing the target overlap: on two
// cores a copy into PostgreSQL otherwise waits for the server on every
// batch while the source's read waits for the batch. Rows keep their
// order. The target's first error is returned by the next call (or by
// Commit), after which the rows still queued are dropped, so the source
// stops and rolls the copy back.
type pipeWriter struct {
	inner state.CopyWriter
	ops   chan func() error
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	err   error
}

// pipeDepth is how many rows may wait for the target: enough to cover a
// batch's round trip, little enough to hold only a few megabytes.
const pipeDepth = 4096

func newPipeWriter(inner state.CopyWriter) *pipeWriter {
	p := &pipeWriter{inner: inner, ops: make(chan func() error, pipeDepth), done: make(chan struct{})}
	go p.loop()
	return p
}

func (p *pipeWriter) loop() {
	defer close(p.done)
	for op := range p.ops {
		if p.failed() != nil {
			continue
		}
		if err := op(); err != nil {
			p.mu.Lock()
			p.err = err
			p.mu.Unlock()
		}
	}
}

func (p *pipeWriter) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *pipeWriter) send(op func() error) error {
	if err := p.failed(); err != nil {
		return err
	}
	p.ops <- op
	return nil
}

// wait lets the queued rows through and ends the goroutine; safe to call
// more than once.
func (p *pipeWriter) wait() error {
	p.once.Do(func() { close(p.ops) })
	<-p.done
	return p.failed()
}

func (p *pipeWriter) Identity(id string, at time.Time) error {
	return p.send(func() error { return p.inner.Identity(id, at) })
}
func (p *pipeWriter) Model(m state.ModelRecord) error {
	return p.send(func() error { return p.inner.Model(m) })
}
func (p *pipeWriter) Edge(e state.EdgeRecord) error {
	return p.send(func() error { return p.inner.Edge(e) })
}
func (p *pipeWriter) Definition(d state.DefinitionRecord) error {
	return p.send(func() error { return p.inner.Definition(d) })
}
func (p *pipeWriter) Run(r state.Run) error { return p.send(func() error { return p.inner.Run(r) }) }
func (p *pipeWriter) TaskRun(t state.TaskRunEntry) error {
	return p.send(func() error { return p.inner.TaskRun(t) })
}
func (p *pipeWriter) Unit(u state.Unit) error { return p.send(func() error { return p.inner.Unit(u) }) }
func (p *pipeWriter) Attempt(id int64, a state.Attempt) error {
	return p.send(func() error { return p.inner.Attempt(id, a) })
}
func (p *pipeWriter) Audit(a state.AuditEntry) error {
	return p.send(func() error { return p.inner.Audit(a) })
}

// Commit waits for every queued row, then commits the target; a row that
// failed rolls it back instead.
func (p *pipeWriter) Commit(ctx context.Context) error {
	if err := p.wait(); err != nil {
		return errors.Join(err, p.inner.Rollback())
	}
	return p.inner.Commit(ctx)
}

// Rollback drops what is queued and rolls the target back.
func (p *pipeWriter) Rollback() error {
	_ = p.wait()
	return p.inner.Rollback()
}
