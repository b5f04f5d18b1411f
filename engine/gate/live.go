package gate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// Live is the gate sweep kept in memory and kept current from the change
// feed, for a process that shows verdicts for a long time (the UI, `serve`):
// built once from a full sweep's read, then each batch of changes
// (Apply) re-reads only the windows the changes name and re-judges only
// the units whose verdict they can alter, and the clock (Advance, at
// NextChange) re-judges only the models a freshness limit or a growing
// contract range can flip. Its verdicts are the sweep's at the same state
// and the same now, unit for unit (a property test holds it to that on
// both stores). The UI's Blocked view, `serve` and `blocked --recheck`
// report its verdicts.
//
// A change re-judges (see docs/semantics.md, "Live verdicts"):
//   - the changed model's own units in the windows it names (their status
//     moved: the counts of pending, blocked, released change);
//   - when a window's applied rows changed, in each gated downstream: the
//     units overlapping it across EXACT and ENCAPSULATE, every unit ending
//     after it begins across THROUGH, and — only when the edge's one
//     verdict changed — every unit across WHOLE, EXISTS and a timeless
//     upstream. The gate reads direct upstreams only, so a verdict
//     never carries further: a unit that runs because of it is a change of
//     its own in the feed.
//
// Some changes cannot be applied piecewise, and Apply rebuilds from a full
// read instead (ApplyStats.Rebuilt says why): a change of a model the index
// does not know (registered after it was built), a registration that
// changed (checked with one read of the registry when a run the index has
// not seen yet first shows up in the feed — every run registers its spec
// before it changes a unit; CheckRegistrations does it on demand), and a
// gap in the feed's seqs wider than the feed itself can fill in one read.
// A smaller gap is filled from the store's feed (Changes), so a caller may
// subscribe after the index was built.
//
// Live is safe for concurrent use: writers (Apply, Advance, Rebuild,
// CheckRegistrations) take turns and do their store reads without blocking
// readers, which only wait while a writer updates memory.
type Live struct {
	r       Reader
	applyMu sync.Mutex   // one writer at a time
	mu      sync.RWMutex // readers against the writer's updates of st
	st      *liveState
}

// liveState is one consistent picture: every unit of the environment by
// model, the upstream indexes the gates read, and the verdicts at now.
type liveState struct {
	now time.Time
	// seq is the feed's seq this state is current up to: every change
	// up to it is reflected (a later one may be, too: re-reading a window
	// twice changes nothing).
	seq int64
	lin *gatedLineage
	// regs fingerprints each registration, to see one change.
	regs map[string]string
	// runs are the runs seen in the feed since the registrations were
	// last read.
	runs map[int64]bool
	// history is what the after: edges are judged by; refreshAfter reads
	// it again when a batch changes a model an after: edge involves.
	history RunHistory
	models  map[string]*liveModel
	// shapes are the registered models' shapes; shapeErr holds the
	// registrations this bollhav cannot read as an upstream.
	shapes   map[string]upstreamShape
	shapeErr map[string]error
	// ix holds an index for every name some judged model gates on.
	ix map[string]*upstreamIndex
	// cur holds the current-only index of an upstream some judged model
	// reads with require_current, while it has outdated windows (see
	// live_current.go).
	cur map[string]*upstreamIndex
	// old holds the outdated applied rows of the upstreams in cur, in
	// window order, with their fingerprints.
	old map[string][]AppliedRow
	// down lists, for an upstream name, the judged models gating on it.
	down map[string][]string
	// flips holds the judged models' flips, earliest first
	// (live_flips.go).
	flips *graph.Heap[flipEntry]
}

// liveModel is one model's units in window order, with the verdict of each
// that is not applied (0 for an applied one).
type liveModel struct {
	name     string
	pipeline string
	// judged is true for the models a sweep judges (registered ones and
	// the spec's); def is their definition, nil when the registration
	// cannot be read (err) or the model is only in the spec.
	judged   bool
	def      *spec.Model
	err      string
	timeless bool
	srcs     []spec.Source
	edges    []sweepEdge
	// after judges the model's after: edges; nil when it has none.
	after    *afterTable
	units    []state.SweepUnit
	verdicts []Readiness
	counts   ModelReadiness
	// disjoint is true when no two units overlap, so the units touching
	// a range are one contiguous run; otherwise a change re-reads the
	// whole model.
	disjoint bool
	// flip is a lower bound of the Unix nanosecond after which the clock
	// alone may change one of the verdicts (noFlip: it cannot).
	flip int64
	// queued is the flip last put in the live state's heap (noFlip: none).
	queued int64
}

// NewLive builds a live index from one full read of r's environment, as
// Sweep reads it, current as of the feed's newest change at the start of
// that read.
func NewLive(ctx context.Context, r Reader) (*Live, error) {
	l := &Live{r: r}
	st, err := l.build(ctx)
	if err != nil {
		return nil, err
	}
	l.st = st
	return l, nil
}

// build reads the environment and judges every unit: a Sweep that keeps
// what it read.
func (l *Live) build(ctx context.Context) (*liveState, error) {
	g := &l.r
	seq, err := state.LatestSeq(ctx, g.Store)
	if err != nil {
		return nil, fmt.Errorf("reading the change feed: %w", err)
	}
	now := g.now()
	recs, err := g.Store.Models(ctx, g.Env.Suffix)
	if err != nil {
		return nil, fmt.Errorf("reading the registered models: %w", err)
	}
	defs, problems, lin := g.sweepModels(recs)
	units, err := g.sweepUnits(ctx, recs)
	if err != nil {
		return nil, err
	}
	st := &liveState{now: now, seq: seq, lin: lin, regs: fingerprints(recs), runs: map[int64]bool{},
		models: map[string]*liveModel{}, shapes: map[string]upstreamShape{}, shapeErr: map[string]error{},
		ix: map[string]*upstreamIndex{}, cur: map[string]*upstreamIndex{}, old: map[string][]AppliedRow{}, down: map[string][]string{}}
	for _, rec := range recs {
		if sh, err := g.shapeFromRecord(rec); err != nil {
			st.shapeErr[rec.Name] = err
		} else {
			st.shapes[rec.Name] = sh
		}
	}
	for name, us := range units {
		st.models[name] = &liveModel{name: name, units: us, queued: noFlip}
	}
	for _, name := range lin.names {
		m := st.model(name)
		m.judged, m.pipeline = true, lin.pipeline[name]
		switch def := defs[name]; {
		case problems[name] != nil:
			m.err = problems[name].Error()
		case def != nil:
			m.def, m.timeless, m.srcs = def, def.Temporality == spec.Timeless, g.gatedSources(def)
			if m.after, err = g.afterTableOf(ctx, &st.history, def); err != nil {
				return nil, err
			}
			for _, src := range m.srcs {
				if err := st.index(src.Name); err != nil {
					return nil, err
				}
				if !slices.Contains(st.down[src.Name], name) {
					st.down[src.Name] = append(st.down[src.Name], name)
				}
			}
		}
	}
	cur, err := l.readCurrent(ctx, st, st.currentUpstreams())
	if err != nil {
		return nil, err
	}
	st.setCurrent(cur, now)
	var judged []*liveModel
	for _, m := range st.models {
		m.disjoint = isDisjoint(m.units)
		m.verdicts = make([]Readiness, len(m.units))
		m.counts = ModelReadiness{Model: m.name, Pipeline: m.pipeline, Err: m.err}
		if m.judged {
			judged = append(judged, m)
		}
	}
	parallel(len(judged), func(i int) {
		m := judged[i]
		st.buildEdges(m)
		st.judgeRange(m, 0, len(m.units))
	})
	st.requeueFlips()
	return st, nil
}

// model returns the model named name, adding an empty one.
func (st *liveState) model(name string) *liveModel {
	m := st.models[name]
	if m == nil {
		m = &liveModel{name: name, disjoint: true, queued: noFlip}
		st.models[name] = m
	}
	return m
}

// index makes sure name has an upstream index, as Sweep's index does: a
// name without a registration gets one that says so.
func (st *liveState) index(name string) error {
	if _, ok := st.ix[name]; ok {
		return nil
	}
	if err := st.shapeErr[name]; err != nil {
		return err
	}
	var us []state.SweepUnit
	if m := st.models[name]; m != nil {
		us = m.units
	}
	st.ix[name] = newUpstreamIndex(st.shapes[name], us, st.now)
	return nil
}

// buildEdges prepares m's edges at st.now (their freshness cut-offs and
// the WHOLE ranges move with it), and starts m's flip from the moments its
// upstreams' contract ranges grow.
func (st *liveState) buildEdges(m *liveModel) {
	m.edges = m.edges[:0]
	for _, src := range m.srcs {
		ix, whole := st.edgeIndex(src.RequireCurrent, src.Name), st.ix[src.Name]
		ix.setRange(st.now)
		whole.setRange(st.now)
		m.edges = append(m.edges, newCurrentEdge(src, m.timeless, ix, whole, st.now))
	}
}

// rangeFlip is the earliest moment after which one of m's WHOLE edges asks
// for more of its upstream because a window completed. An edge that
// misses part of a range it has keeps missing it as the range grows, so
// only the others count.
func (st *liveState) rangeFlip(m *liveModel) int64 {
	flip := int64(noFlip)
	for k := range m.edges {
		e := &m.edges[k]
		if m.srcs[k].Contract == spec.Whole && !(e.verdict == edgeMissing && e.ix.hasRange) {
			flip = min(flip, e.ix.nextRange(st.now))
		}
	}
	return flip
}

// judgeRange judges m's units [lo, hi) again, keeping its counts and its
// flip; a whole range recomputes the flip, a part only lowers it.
func (st *liveState) judgeRange(m *liveModel, lo, hi int) int {
	if lo == 0 && hi == len(m.units) {
		m.flip = st.rangeFlip(m)
	}
	n := 0
	for k := lo; k < hi; k++ {
		u := m.units[k]
		m.counts.tally(u, m.verdicts[k], -1)
		if u.Status == state.CodeApplied {
			m.verdicts[k] = 0
			continue
		}
		r, flip := Failing, int64(noFlip)
		if m.err == "" {
			r, flip = fold(m.edges, u)
			if r == Ready && m.after.held(sweepWindow(u)) {
				r, flip = Waiting, noFlip // held by its after: edges
			}
		}
		m.verdicts[k] = r
		m.counts.tally(u, r, +1)
		m.flip = min(m.flip, flip)
		n++
	}
	return n
}

// tally adds (d = +1) or takes away (d = -1) one unit's verdict r; r is 0
// for an applied unit, which counts nowhere.
func (c *ModelReadiness) tally(u state.SweepUnit, r Readiness, d int) {
	if r == 0 {
		return
	}
	c.Outstanding += d
	switch r {
	case Ready:
		c.Ready += d
		if u.Status == state.CodeBlocked {
			c.Released += d
		}
	case Waiting:
		c.Waiting += d
	case Outdated:
		c.Outdated += d
	case Stale:
		c.Stale += d
	default:
		c.Errors += d
	}
}

// parallel runs fn(0..n-1) over the machine's cores.
func parallel(n int, fn func(i int)) {
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(n, maxWorkers()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// isDisjoint reports whether units in window order never overlap.
func isDisjoint(us []state.SweepUnit) bool {
	for i := 1; i < len(us); i++ {
		if us[i].Since < us[i-1].Until {
			return false
		}
	}
	return true
}

// fingerprints is what of each registration the gate depends on.
func fingerprints(recs []state.ModelRecord) map[string]string {
	out := make(map[string]string, len(recs))
	for _, r := range recs {
		end := ""
		if r.End != nil {
			end = r.End.UTC().String()
		}
		out[r.Name] = fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s|%s", r.ContentHash, r.Pipeline, r.Temporality, r.Flexibility,
			r.Interval, r.Timezone, r.Start.UTC(), end)
	}
	return out
}

// Now is the time the verdicts hold at: the last Apply or Advance.
func (l *Live) Now() time.Time {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.st.now
}

// Seq is the feed seq the index is current up to.
func (l *Live) Seq() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.st.seq
}

// NextChange is the earliest time at which the clock alone may change a
// verdict — a freshness limit running out, or a window completing that a
// WHOLE contract then needs — and false when none can. The caller sets a
// timer for it and calls Advance; nothing polls. It may come early (a
// bound, not an exact moment): Advance then finds nothing to change.
func (l *Live) NextChange() (time.Time, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	// Writers leave the heap's top current (dropStaleFlips).
	if l.st.flips.Len() == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, l.st.flips.Peek().at+1).UTC(), true
}

// Report is what Sweep reports for f, at Now.
func (l *Live) Report(f BlockedFilter) (*SweepReport, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	st := l.st
	names, err := st.lin.selectModels(&l.r, f)
	if err != nil {
		return nil, err
	}
	rep := &SweepReport{Now: st.now}
	for _, name := range names {
		m := st.models[name]
		if m == nil || !m.judged || m.counts.Outstanding == 0 {
			continue
		}
		rep.Units += m.counts.Outstanding
		rep.Models = append(rep.Models, m.counts)
	}
	slices.SortFunc(rep.Models, func(a, b ModelReadiness) int {
		return cmp.Or(cmp.Compare(a.Pipeline, b.Pipeline), cmp.Compare(a.Model, b.Model))
	})
	return rep, nil
}

// Units calls fn with every unit f selects that is not applied, by model
// name and then window, as Sweep does. fn runs under the index's read lock:
// it must not call the Live's writers.
func (l *Live) Units(f BlockedFilter, fn func(SweptUnit) error) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	st := l.st
	names, err := st.lin.selectModels(&l.r, f)
	if err != nil {
		return err
	}
	for _, name := range names {
		m := st.models[name]
		if m == nil || !m.judged {
			continue
		}
		for k, u := range m.units {
			if m.verdicts[k] == 0 {
				continue
			}
			if err := fn(SweptUnit{Model: name, Window: sweepWindow(u), Status: u.Status.Status(), Readiness: m.verdicts[k]}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Readiness is the verdict on model's unit with window w (zero for a
// timeless model's existence row), and false when there is no such unit
// or it is applied.
func (l *Live) Readiness(model string, w state.Window) (Readiness, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	m := l.st.models[model]
	if m == nil || !m.judged {
		return 0, false
	}
	k, ok := m.find(w)
	if !ok || m.verdicts[k] == 0 {
		return 0, false
	}
	return m.verdicts[k], true
}

// find is the index of the unit with window w.
func (m *liveModel) find(w state.Window) (int, bool) {
	var a, b int64
	if !w.IsZero() {
		a, b = w.Since.UnixMicro(), w.Until.UnixMicro()
	}
	us := m.units
	k := sort.Search(len(us), func(i int) bool { return us[i].Since > a || us[i].Since == a && us[i].Until >= b })
	return k, k < len(us) && us[k].Since == a && us[k].Until == b
}
