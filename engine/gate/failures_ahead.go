package gate

import (
	"context"
	"sync"

	"github.com/bollhav/bollhav/state"
)

// failuresRead is an incidents report's builder with its failed roots
// being read (addFailures) on a goroutine of its own while the caller
// ranks and pages the blocked units. At 10M units each of the two is
// about a third of a report: the first page's window indexes, and the
// failed and retrying units with their histories. They share nothing but
// the store, whose pool gives each a connection of its own, so on two
// cores they take the time of the longer, not of both.
type failuresRead struct {
	done chan struct{}
	stop context.CancelFunc
	b    *incidentBuilder
	err  error
	once sync.Once
}

// failuresAhead starts reading the failed roots of the report over lin,
// from counts (the kept unit counts). Every caller defers abandon, so the
// read never outlives the report (nor the store it reads), whichever way
// the caller returns.
func (g *Reader) failuresAhead(ctx context.Context, lin *gatedLineage, counts []state.ModelCounts) *failuresRead {
	b := &incidentBuilder{g: g, lin: lin, byKey: map[string]*Incident{}, seen: map[string]map[windowKey]bool{}}
	b.an = &analysis{g: g, env: g.Env.Suffix, now: g.now(), shapes: &RegistrationCache{}, models: map[string]analysisModel{}}
	b.an.seed(lin)
	ctx, stop := context.WithCancel(ctx)
	f := &failuresRead{done: make(chan struct{}), stop: stop, b: b}
	go func() {
		defer close(f.done)
		f.err = b.addFailures(ctx, counts)
	}()
	return f
}

// wait returns the builder once its failed roots are read, or their read's
// error. A second call returns the same.
func (f *failuresRead) wait() (*incidentBuilder, error) {
	f.once.Do(func() {
		<-f.done
		f.stop()
	})
	if f.err != nil {
		return nil, f.err
	}
	return f.b, nil
}

// abandon stops the read if it is still going and waits for it: a caller
// that returns early (an error) gives it up; after wait it does nothing.
func (f *failuresRead) abandon() {
	f.stop()
	f.wait()
}
