package tui

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Loads: each view's file has the function that reads its data (a
// loader) and the type it delivers. loadCmd runs a loader off the event
// loop, so Update never waits on I/O, and wraps its answer in a loaded[T]
// that the app checks (is it the view's newest request? did the store
// answer?) before the view sees it.

// loadTimeout bounds one load: a store that hangs shows up as an error and
// the banner, not as a frozen screen.
const loadTimeout = 30 * time.Second

// wholeLoadTimeout bounds a load whose cost grows with the whole platform
// rather than with what it shows: the incidents' trace (every blocked unit
// and what lies downstream of it: 30–35 s at ten million units with a
// million blocked, on two cores) and the Blocked queue (every failed and
// blocked unit with what it holds, then the live gate index's first build:
// over 30 s there too). Under loadTimeout they never finished at that size
// and retried forever under the store-down banner.
const wholeLoadTimeout = 10 * time.Minute

// errStopScan ends a store scan early.
var errStopScan = errors.New("stop")

// loaded is the answer to a view's load: its data, of the view's own type,
// routed to the view whose id it carries. gen is the view's request
// generation when the load started: an answer to an older request than
// the view's newest is dropped, so a slow load can never overwrite a newer
// one.
type loaded[T any] struct {
	view int
	gen  uint64
	data T
	err  error
}

func (m loaded[T]) viewID() int { return m.view }

// takeLoaded hands a view's loaded data to take, when msg is one; a view
// whose update has nothing else to do returns it.
func takeLoaded[T any](msg viewMsg, take func(T)) tea.Cmd {
	if m, ok := msg.(loaded[T]); ok {
		take(m.data)
	}
	return nil
}

func (m loaded[T]) answer() (gen uint64, err error) { return m.gen, m.err }

// loadResult is a loaded[T] of any view, as the app handles it before the
// view sees it.
type loadResult interface {
	viewMsg
	answer() (gen uint64, err error)
}

// loadCmd runs fn with a bounded context and wraps its result for view id.
// A failed load probes the store: when the store does not answer either,
// the error is a storeDownError, which the app retries with backoff under
// a banner; otherwise the request itself was wrong and is shown as it is.
func loadCmd[T any](c *common, id int, gen uint64, fn func(ctx context.Context) (T, error)) tea.Cmd {
	return loadCmdWithin(c, id, gen, loadTimeout, fn)
}

// loadCmdWithin is loadCmd with a bound of its own, for a load whose cost
// grows with the platform (wholeLoadTimeout). A load that outlives
// loadTimeout is taken for a store that hangs, and retried under the
// banner; one that outlives a longer bound while the store still answers
// is too big for it, and says so: retrying it would only repeat it.
func loadCmdWithin[T any](c *common, id int, gen uint64, bound time.Duration, fn func(ctx context.Context) (T, error)) tea.Cmd {
	ctx, e := c.loadContext(id), c.eng
	return func() tea.Msg {
		lctx, cancel := context.WithTimeout(ctx, bound)
		defer cancel()
		data, err := fn(lctx)
		if err != nil && ctx.Err() == nil {
			pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
			_, perr := e.SchemaVersion(pctx)
			pcancel()
			timedOut := errors.Is(err, context.DeadlineExceeded)
			switch {
			case perr != nil || timedOut && bound <= loadTimeout:
				err = storeDownError{err}
			case timedOut:
				err = fmt.Errorf("not done within %s (the store answers; the next change tries again): %w", bound, err)
			}
		}
		return loaded[T]{view: id, gen: gen, data: data, err: err}
	}
}

// storeDownError is a load that failed because the store is unreachable.
type storeDownError struct{ err error }

func (e storeDownError) Error() string { return e.err.Error() }
func (e storeDownError) Unwrap() error { return e.err }
