package tui

import (
	"context"
	"sync"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// liveGate is the process's one live gate index (gate.Live): what the gate
// says now about every unit that is not applied — the "ready" verdicts of
// the Blocked view. It is built from one full read the first time a view
// asks (the Blocked view's first load; never at launch: a UI that never
// shows verdicts never pays for them), then kept current by the Feed that
// owns it — each batch of changes the feed fans out is applied to it
// first, so a view that reloads on that batch reads verdicts that include
// it — and by a timer at the index's NextChange, when a freshness limit
// runs out or a window completes. Nothing sweeps again on a change, and
// nothing polls. `serve` has one Feed for every session, and so one index.
type liveGate struct {
	eng *engine.Engine

	mu    sync.Mutex
	live  *gate.Live
	timer *time.Timer
	// armedAt is the engine time the timer was last armed at: a clock
	// that does not move (--as-of) is not re-armed on every firing.
	armedAt time.Time
	// onFlip hears that the clock changed verdicts: the Feed tells its
	// subscribers.
	onFlip func()
	// fits says whether the environment is small enough to keep the
	// index of (Engine.LiveGateFits; a test can say no).
	fits func(context.Context) (bool, error)
}

func newLiveGate(e *engine.Engine) *liveGate { return &liveGate{eng: e, fits: e.LiveGateFits} }

// index returns the live index, building it now if it has not been (a
// store read: call it off the event loop, never from Update).
func (g *liveGate) index(ctx context.Context) (*gate.Live, error) {
	if live := g.built(); live != nil {
		return live, nil
	}
	live, err := g.eng.LiveGate(ctx)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.live == nil { // another build may have finished first
		g.live = live
		g.armLocked()
	}
	return g.live, nil
}

// built is the index when it has been built.
func (g *liveGate) built() *gate.Live {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.live
}

// apply hands a batch of the feed to the index, when there is one. A
// failed read leaves the index as it was; the next batch, or the gap it
// finds then, catches up.
func (g *liveGate) apply(ctx context.Context, changes []state.Change) {
	live := g.built()
	if live == nil {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	if _, err := live.Apply(lctx, changes); err == nil {
		g.arm()
	}
}

func (g *liveGate) arm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armLocked()
}

// armLocked sets the timer for the index's next change by the clock.
func (g *liveGate) armLocked() {
	next, ok := g.live.NextChange()
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	if !ok {
		return
	}
	now := g.eng.Clock()
	g.armedAt = now
	g.timer = time.AfterFunc(max(next.Sub(now), 0), g.fire)
}

// fire is the timer: the clock may have flipped verdicts. A clock that has
// not moved since the timer was armed (--as-of) never will: it is not
// armed again.
func (g *liveGate) fire() {
	live := g.built()
	if live == nil {
		return
	}
	g.mu.Lock()
	frozen, onFlip := g.eng.Clock().Equal(g.armedAt), g.onFlip
	g.mu.Unlock()
	if frozen {
		return
	}
	st, err := live.Advance(context.Background())
	g.arm()
	if err == nil && st.Rejudged > 0 && onFlip != nil {
		onFlip()
	}
}

// tell sets who hears that the clock changed verdicts.
func (g *liveGate) tell(fn func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.onFlip = fn
}

// stop ends the timer (the feed ended).
func (g *liveGate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
}

// verdictView is a view that shows the gate's verdicts: it reloads when the
// clock changes them (feedMsg.verdicts).
type verdictView interface {
	showsVerdicts() bool
}

// showsVerdicts: the Blocked view marks the units whose gate passes now.
func (v *blockedView) showsVerdicts() bool { return true }

// judge is the verdicts of models' units now, a function of a unit's
// model and window (the zero Readiness for a unit it did not judge): from
// the live index when the environment fits it (engine.LiveGateMaxUnits;
// the index is built on first use, then kept current), else from a sweep
// of the models alone on each call (Engine.Judge), so a platform of ten
// million units is never held to judge the units a screen shows. A store
// read: call it off the event loop.
func (g *liveGate) judge(ctx context.Context, models []string) (func(model string, w state.Window) gate.Readiness, error) {
	live := g.built()
	if live == nil {
		fits, err := g.fits(ctx)
		if err != nil {
			return nil, err
		}
		if fits {
			if live, err = g.index(ctx); err != nil {
				return nil, err
			}
		}
	}
	if live != nil {
		return func(model string, w state.Window) gate.Readiness {
			r, _ := live.Readiness(model, w)
			return r
		}, nil
	}
	verdicts := map[unitKey]gate.Readiness{}
	_, err := g.eng.Judge(ctx, models, func(u gate.SweptUnit) error {
		verdicts[unitRef{u.Model, u.Window}.key()] = u.Readiness
		return nil
	})
	if err != nil {
		return nil, err
	}
	return func(model string, w state.Window) gate.Readiness { return verdicts[unitRef{model, w}.key()] }, nil
}
