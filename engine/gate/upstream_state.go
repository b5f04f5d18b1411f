package gate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// upstreamShape is a gated upstream's registration as the gate reads it:
// its shape as registered, never as this spec assumes it.
type upstreamShape struct {
	registered  bool
	temporality spec.Temporality
	flexibility spec.Flexibility
	grid        state.Grid
	end         *time.Time
	// current is the upstream's current definition fingerprint.
	current string
}

// state is the UpstreamState of the shape alone, with no applied row: what
// Evaluate's hard checks (hardMsg) look at.
func (sh upstreamShape) state() UpstreamState {
	return UpstreamState{Registered: sh.registered, Temporality: sh.temporality, Flexibility: sh.flexibility, Current: sh.current}
}

// RegistrationCache caches upstream registrations for one task attempt, so
// gating thousands of units reads each upstream's registration once, not
// once per unit. The zero value is ready to use and safe for concurrent use.
type RegistrationCache struct {
	mu sync.Mutex
	m  map[[2]string]upstreamShape
	// history is what after: edges are judged by, read once when first
	// needed.
	history RunHistory
	// known, when set, is every registration of environment knownEnv,
	// read already: a shape of that environment comes from it, with no
	// round trip, and a name it lacks is not registered (seed).
	known    map[string]state.ModelRecord
	knownEnv string
	// applied, when set, keeps every applied row of each upstream read
	// (keptReads): for a report, never for a run, whose gate must see the
	// rows applied a moment ago.
	applied *keptReads[AppliedRow]
}

// seed makes recs, every registration of env as one registry read found
// them, the cache's source for env's shapes, and has the cache keep the
// upstreams' applied rows (keptReads): an incidents trace over ten
// thousand models then reads no registration one at a time, and each
// upstream's rows once.
func (c *RegistrationCache) seed(env string, recs map[string]state.ModelRecord) {
	c.mu.Lock()
	c.known, c.knownEnv = recs, env
	if !windowedReads.Load() {
		c.applied = newKeptReads[AppliedRow](maxKeptApplied)
	}
	c.mu.Unlock()
}

func (g *Reader) shapeOf(ctx context.Context, cache *RegistrationCache, env, name string) (upstreamShape, error) {
	key := [2]string{env, name}
	cache.mu.Lock()
	sh, ok := cache.m[key]
	rec, known := cache.known[name]
	seeded := cache.known != nil && cache.knownEnv == env
	cache.mu.Unlock()
	if ok {
		return sh, nil
	}
	var err error
	switch {
	case seeded && known:
	case seeded:
		err = state.ErrNotFound
	default:
		rec, err = g.Store.Model(ctx, env, name)
	}
	switch {
	case errors.Is(err, state.ErrNotFound):
		// Not registered: a hard error at gate time, never a skip.
	case err != nil:
		return upstreamShape{}, fmt.Errorf("reading the registration of %s: %w", name, err)
	default:
		if sh, err = g.shapeFromRecord(rec); err != nil {
			return upstreamShape{}, err
		}
	}
	cache.mu.Lock()
	if cache.m == nil {
		cache.m = map[[2]string]upstreamShape{}
	}
	cache.m[key] = sh
	cache.mu.Unlock()
	return sh, nil
}

// upstreamState reads from the store what the gate needs about one gated
// upstream of model m for a unit with window w (nil when m is timeless): the
// registration in the environment RegistrationEnv names, and the applied
// rows the level selects, read by window from an index rather than the
// upstream's whole history.
func (g *Reader) upstreamState(ctx context.Context, cache *RegistrationCache, m *spec.Model, src spec.Source, w *state.Window, now time.Time) (UpstreamState, error) {
	env := m.RegistrationEnv(src, g.Env).Suffix
	sh, err := g.shapeOf(ctx, cache, env, src.Name)
	if err != nil || !sh.registered {
		return UpstreamState{}, err
	}
	up := sh.state()
	if src.Contract == spec.Exists {
		return up, nil // EXISTS never inspects state
	}
	var read state.Window // zero: every applied row
	if up.Temporality == spec.Temporal {
		up.Start = sh.grid.Start
		rng, _ := sh.grid.ContractRange(now, sh.end)
		up.RangeEnd = rng.Until
		if w != nil {
			switch src.Contract {
			case spec.Exact, spec.Encapsulate:
				read = *w
			case spec.Through:
				read = state.Window{Since: state.Earlier(up.Start, w.Since), Until: w.Until}
			}
		}
		if src.Contract == spec.Whole && up.RangeEnd.After(up.Start) {
			read = state.Window{Since: up.Start, Until: up.RangeEnd}
		}
	}
	if up.Applied, err = g.appliedOf(ctx, cache, env, src.Name, read); err != nil {
		return UpstreamState{}, fmt.Errorf("reading applied rows of %s: %w", src.Name, err)
	}
	return up, nil
}

// appliedOf is Store.Applied, through cache's kept rows when it keeps
// them (seed): each upstream's rows read whole once, then filtered.
func (g *Reader) appliedOf(ctx context.Context, cache *RegistrationCache, env, name string, read state.Window) ([]AppliedRow, error) {
	cache.mu.Lock()
	kept := cache.applied
	cache.mu.Unlock()
	if kept == nil {
		return g.Store.Applied(ctx, env, name, read)
	}
	rows, ok, err := kept.get(env+"\x00"+name, func() ([]AppliedRow, error) {
		return g.Store.Applied(ctx, env, name, state.Window{})
	})
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return g.Store.Applied(ctx, env, name, read)
	case read.IsZero():
		return slices.Clone(rows), nil
	}
	var out []AppliedRow
	for _, r := range rows {
		if r.Window.Overlaps(read) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Unit gates one unit of m against the store: every gated
// upstream is read (no short-circuit) and judged by Judge at now.
func (g *Reader) Unit(ctx context.Context, m *spec.Model, w *state.Window, now time.Time) (UnitGate, error) {
	return g.CachedUnit(ctx, &RegistrationCache{}, m, w, now)
}

// CachedUnit is Unit reading registrations through cache, which a run shares
// between the units of one task attempt.
func (g *Reader) CachedUnit(ctx context.Context, cache *RegistrationCache, m *spec.Model, w *state.Window, now time.Time) (UnitGate, error) {
	ups := map[string]UpstreamState{}
	for _, src := range m.Upstream {
		if !src.Gated() || m.GateSkipped(src, g.Env) {
			continue
		}
		up, err := g.upstreamState(ctx, cache, m, src, w, now)
		if err != nil {
			return UnitGate{}, err
		}
		ups[src.Name] = up
	}
	ug := Judge(m, w, g.Env, ups, now)
	if len(m.After) == 0 || g.NoAfter {
		return ug, nil
	}
	var window state.Window
	if w != nil {
		window = *w
	}
	vs, err := g.afterVerdicts(ctx, &cache.history, m, window, g.SkipRun, g.AfterOnly)
	if err != nil {
		return UnitGate{}, err
	}
	return withAfter(ug, m, vs), nil
}

// hardError is the hard gate error every unit of m meets, whatever its
// window and whatever the store has applied (hardMsg): a gated upstream
// not registered, a window-scoped level on a timeless side, EXACT over a
// flexible upstream. It is CachedUnit's Err for any unit of m, told from
// the registrations alone, without reading an applied row or the run
// history: what tells a failed root no load fixes (issue 33).
func (g *Reader) hardError(ctx context.Context, cache *RegistrationCache, m *spec.Model) (hard, err error) {
	var errs []error
	for _, src := range m.Upstream {
		if !src.Gated() || m.GateSkipped(src, g.Env) {
			continue
		}
		sh, err := g.shapeOf(ctx, cache, m.RegistrationEnv(src, g.Env).Suffix, src.Name)
		if err != nil {
			return nil, err
		}
		if msg := hardMsg(m.Temporality != spec.Timeless, src, sh.state()); msg != "" {
			errs = append(errs, &Error{Upstream: src.Name, Level: src.Contract, Msg: msg})
		}
	}
	return errors.Join(errs...), nil
}

// joinReasons joins two blocked_reason texts, either of which may be empty.
func joinReasons(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
