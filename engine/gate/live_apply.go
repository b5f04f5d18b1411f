package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// ApplyStats says what one Apply, Advance or rebuild did.
type ApplyStats struct {
	// Changes counts the changes of the environment taken in (those the
	// index already had are skipped).
	Changes int
	// Rebuilt says why the index was rebuilt from a full read instead of
	// applying the changes one by one; empty when it was not.
	Rebuilt string
	// Read counts the units read back from the store.
	Read int
	// Rejudged counts the units judged again.
	Rejudged int
}

// maxGap is the widest gap in the feed's seqs Apply fills from the store's
// feed; a wider one rebuilds.
const maxGap = 5000

// maxRefine bounds how often a window re-read may grow (a unit read back
// reaching past it) before the model is read whole.
const maxRefine = 3

// Apply takes a batch of the feed's changes, in seq order: it re-reads the
// windows they name and re-judges the units whose verdicts they can alter,
// at the reader's now (verdicts the clock flipped meanwhile included).
// Changes of other environments and those the index already has are
// skipped. When the batch cannot be applied piecewise it rebuilds from a
// full read (see Live). On an error the index is as before the call, and
// the same batch can be applied again.
func (l *Live) Apply(ctx context.Context, changes []state.Change) (ApplyStats, error) {
	l.applyMu.Lock()
	defer l.applyMu.Unlock()
	return l.apply(ctx, changes)
}

// Advance re-judges what the clock changed by the reader's now: the models
// whose freshness limits ran out or whose WHOLE upstreams completed a window
// since. It reads nothing from the store; call it when NextChange comes.
func (l *Live) Advance(ctx context.Context) (ApplyStats, error) {
	return l.Apply(ctx, nil)
}

// Rebuild replaces the index with one from a full read, for a caller that
// knows it lost changes (a subscription that overflowed).
func (l *Live) Rebuild(ctx context.Context, reason string) (ApplyStats, error) {
	l.applyMu.Lock()
	defer l.applyMu.Unlock()
	return l.rebuild(ctx, reason, 0)
}

// CheckRegistrations reads the registry and rebuilds when a registration
// changed since the index was built: for a caller that wants to see a
// `bollhav apply` that no run has followed yet.
func (l *Live) CheckRegistrations(ctx context.Context) (ApplyStats, error) {
	l.applyMu.Lock()
	defer l.applyMu.Unlock()
	changed, err := l.registrationsChanged(ctx)
	if err != nil || !changed {
		return ApplyStats{}, err
	}
	return l.rebuild(ctx, "the registrations changed", 0)
}

func (l *Live) registrationsChanged(ctx context.Context) (bool, error) {
	recs, err := l.r.Store.Models(ctx, l.r.Env.Suffix)
	if err != nil {
		return false, fmt.Errorf("reading the registered models: %w", err)
	}
	return !maps.Equal(fingerprints(recs), l.st.regs), nil
}

func (l *Live) rebuild(ctx context.Context, reason string, seq int64) (ApplyStats, error) {
	st, err := l.build(ctx)
	if err != nil {
		return ApplyStats{}, err
	}
	// Every change the caller handed in committed before the build read
	// the feed's newest seq, so the read reflects it.
	st.seq = max(st.seq, seq)
	l.mu.Lock()
	l.st = st
	l.mu.Unlock()
	return ApplyStats{Rebuilt: reason}, nil
}

func (l *Live) apply(ctx context.Context, changes []state.Change) (ApplyStats, error) {
	st := l.st
	var fresh []state.Change
	for _, c := range changes {
		if c.Seq > st.seq {
			fresh = append(fresh, c)
		}
	}
	slices.SortStableFunc(fresh, func(a, b state.Change) int { return cmp.Compare(a.Seq, b.Seq) })
	fresh = slices.CompactFunc(fresh, func(a, b state.Change) bool { return a.Seq == b.Seq })
	if len(fresh) > 0 && fresh[0].Seq > st.seq+1 {
		// A gap: the caller subscribed after the index was built, or
		// seqs a rolled-back transaction took. The store's feed has what
		// is missing, if anything is.
		gap, err := l.r.Store.Changes(ctx, st.seq, maxGap)
		if err != nil {
			return ApplyStats{}, fmt.Errorf("reading the change feed: %w", err)
		}
		if len(gap) == maxGap && gap[len(gap)-1].Seq < fresh[0].Seq-1 {
			return l.rebuild(ctx, fmt.Sprintf("more than %d changes missed", maxGap), fresh[len(fresh)-1].Seq)
		}
		var filled []state.Change
		for _, c := range gap {
			if c.Seq < fresh[0].Seq {
				filled = append(filled, c)
			}
		}
		fresh = append(filled, fresh...)
	}
	last := st.seq
	if len(fresh) > 0 {
		last = fresh[len(fresh)-1].Seq
	}
	var (
		mine    []state.Change
		reason  string
		newRuns []int64
	)
	for _, c := range fresh {
		if c.Env != l.r.Env.Suffix {
			continue
		}
		mine = append(mine, c)
		switch m := st.models[c.Model]; {
		case m == nil:
			reason = fmt.Sprintf("a change of %s, a model the index does not know", c.Model)
		case m.judged && m.def == nil && m.err == "":
			reason = fmt.Sprintf("a change of %s, registered after the index was built", c.Model)
		}
		if c.RunID != 0 && !st.runs[c.RunID] && !slices.Contains(newRuns, c.RunID) {
			newRuns = append(newRuns, c.RunID)
		}
	}
	if reason == "" && len(newRuns) > 0 {
		// Every run registers its spec before it changes a unit: a run
		// not seen before is when a registration may have changed.
		changed, err := l.registrationsChanged(ctx)
		if err != nil {
			return ApplyStats{}, err
		}
		if changed {
			reason = "the registrations changed"
		}
		for _, id := range newRuns {
			st.runs[id] = true // only writers read runs
		}
	}
	if reason != "" {
		stats, err := l.rebuild(ctx, reason, last)
		if err == nil {
			l.mu.Lock()
			defer l.mu.Unlock()
			for _, c := range mine {
				// Known from now on, even with no unit or registration
				// left: another change of it must not rebuild again.
				l.st.model(c.Model)
			}
		}
		return stats, err
	}
	reads, n, err := l.readChanges(ctx, st, mine)
	if err != nil {
		return ApplyStats{}, err
	}
	var again []string
	for _, name := range st.currentUpstreams() {
		if slices.ContainsFunc(reads, func(rd modelRead) bool { return rd.m.name == name }) {
			again = append(again, name)
		}
	}
	cur, err := l.readCurrent(ctx, st, again)
	if err != nil {
		return ApplyStats{}, err
	}
	afterTables, err := l.refreshAfter(ctx, st, mine)
	if err != nil {
		return ApplyStats{}, err
	}
	now := l.r.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	stats := ApplyStats{Changes: len(mine), Read: n}
	stats.Rejudged = st.update(now, reads, cur)
	for m, t := range afterTables {
		m.after = t
		stats.Rejudged += st.judgeRange(m, 0, len(m.units))
		st.queueFlip(m)
	}
	st.dropStaleFlips()
	st.seq = last
	return stats, nil
}

// refreshAfter reads again the histories of the after: edges a batch may
// have moved: when it changes a model with after: edges or one such an
// edge waits on, a task of it has started or ended since, so every model
// with after: edges is judged again (a task's end is in no change of its
// own: the next change of either side brings it in).
func (l *Live) refreshAfter(ctx context.Context, st *liveState, changes []state.Change) (map[*liveModel]*afterTable, error) {
	involved := map[string]bool{}
	var models []*liveModel
	for _, m := range st.models {
		if m.after == nil {
			continue
		}
		models = append(models, m)
		involved[m.name] = true
		for _, a := range m.after.m.After {
			involved[a.Task] = true
		}
	}
	if !slices.ContainsFunc(changes, func(c state.Change) bool { return involved[c.Model] }) {
		return nil, nil
	}
	st.history.Forget()
	out := make(map[*liveModel]*afterTable, len(models))
	for _, m := range models {
		t, err := l.r.afterTableOf(ctx, &st.history, m.after.m)
		if err != nil {
			return nil, err
		}
		out[m] = t
	}
	return out, nil
}

// span is a range of Unix microseconds, [a, b).
type span struct{ a, b int64 }

// everything is the span of a whole model.
var everything = span{math.MinInt64, math.MaxInt64}

// modelRead is what the store holds now in the windows a batch changed
// of one model: its whole list of units, or the units of some spans.
type modelRead struct {
	m     *liveModel
	whole bool
	rows  []state.SweepUnit
	spans []span
	got   [][]state.SweepUnit
}

// readChanges reads back, model by model, the units in the windows the
// changes name. A change's window is the hull of the units it moved, so
// the units overlapping it are all it can have touched — but a unit read
// back may reach past it (Uncover trims units at a window's edges), so a
// span grows to hold every unit it meets, in memory and in the store, and
// is read again; a model whose units overlap one another, a timeless one,
// and a change without a window are read whole. Each round of spans is
// one read of the store (state.RegionReader) however many models it
// spans.
func (l *Live) readChanges(ctx context.Context, st *liveState, changes []state.Change) ([]modelRead, int, error) {
	byModel := map[string]*modelRead{}
	var order []*modelRead
	for _, c := range changes {
		rd := byModel[c.Model]
		if rd == nil {
			m := st.models[c.Model]
			rd = &modelRead{m: m, whole: !m.disjoint || m.timeless}
			byModel[c.Model] = rd
			order = append(order, rd)
		}
		if c.Window.IsZero() {
			rd.whole = true
		}
		if !rd.whole {
			rd.spans = append(rd.spans, span{c.Window.Since.UnixMicro(), c.Window.Until.UnixMicro()})
		}
	}
	read := 0
	var todo []*modelRead
	for _, rd := range order {
		if !rd.whole {
			todo = append(todo, rd)
		}
	}
	for round := 0; len(todo) > 0; round++ {
		if round == maxRefine {
			for _, rd := range todo {
				rd.whole = true
			}
			break
		}
		var regions []state.Region
		for _, rd := range todo {
			rd.spans = rd.m.coalesce(mergeSpans(rd.m.grow(mergeSpans(rd.spans))))
			rd.got = make([][]state.SweepUnit, len(rd.spans))
			for _, s := range rd.spans {
				regions = append(regions, state.Region{Model: rd.m.name, Window: state.Window{Since: time.UnixMicro(s.a).UTC(), Until: time.UnixMicro(s.b).UTC()}})
			}
		}
		got, err := l.readRegions(ctx, regions)
		if err != nil {
			return nil, 0, err
		}
		var again []*modelRead
		k := 0
		for _, rd := range todo {
			grown := false
			for i, s := range rd.spans {
				rows := got[k]
				k++
				read += len(rows)
				rd.got[i] = rows
				if len(rows) == 0 {
					continue
				}
				if hi := slices.MaxFunc(rows, byUntil).Until; rows[0].Since < s.a || hi > s.b {
					rd.spans[i] = span{min(s.a, rows[0].Since), max(s.b, hi)}
					grown = true
				}
			}
			if grown {
				again = append(again, rd)
			}
		}
		todo = again
	}
	out := make([]modelRead, 0, len(order))
	for _, rd := range order {
		if rd.whole {
			rows, err := l.readUnits(ctx, rd.m.name, state.Window{})
			if err != nil {
				return nil, 0, err
			}
			read += len(rows)
			rd.rows, rd.spans, rd.got = rows, nil, nil
		}
		out = append(out, *rd)
	}
	return out, read, nil
}

func byUntil(a, b state.SweepUnit) int { return cmp.Compare(a.Until, b.Until) }

// readRegions reads the units of each region: in one round trip when the
// store is a state.RegionReader, else a ScanUnits each.
func (l *Live) readRegions(ctx context.Context, regions []state.Region) ([][]state.SweepUnit, error) {
	out := make([][]state.SweepUnit, len(regions))
	if rr, ok := l.r.Store.(state.RegionReader); ok {
		err := rr.SweepRegions(ctx, l.r.Env.Suffix, regions, func(i int, us []state.SweepUnit) error {
			out[i] = us
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading the changed windows: %w", err)
		}
		return out, nil
	}
	for i, r := range regions {
		us, err := l.readUnits(ctx, r.Model, r.Window)
		if err != nil {
			return nil, err
		}
		out[i] = us
	}
	return out, nil
}

// readUnits reads model's units overlapping w (every unit when w is zero)
// in window order.
func (l *Live) readUnits(ctx context.Context, model string, w state.Window) ([]state.SweepUnit, error) {
	var out []state.SweepUnit
	err := l.r.Store.ScanUnits(ctx, state.UnitQuery{Env: l.r.Env.Suffix, Model: model, Window: w}, func(u state.Unit) error {
		out = append(out, state.SweepUnitOf(u))
		return nil
	})
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, fmt.Errorf("reading the units of %s: %w", model, err)
	}
	state.SortSweepUnits(out)
	return out, nil
}

// mergeSpans sorts spans and joins those that overlap or touch.
func mergeSpans(ss []span) []span {
	slices.SortFunc(ss, func(x, y span) int { return cmp.Compare(x.a, y.a) })
	out := ss[:0]
	for _, s := range ss {
		if k := len(out) - 1; k >= 0 && s.a <= out[k].b {
			out[k].b = max(out[k].b, s.b)
			continue
		}
		out = append(out, s)
	}
	return out
}

// overlap is the run of m's units overlapping s (m disjoint): units
// [lo, hi).
//
// The searches are written out: a batch asks a few hundred of them over
// models of up to a hundred thousand units, and the generic search's
// callback cost a quarter of a batch's CPU.
func (m *liveModel) overlap(s span) (lo, hi int) {
	us := m.units
	// lo: the first unit ending after s begins.
	i, j := 0, len(us)
	for i < j {
		if h := int(uint(i+j) >> 1); us[h].Until > s.a {
			j = h
		} else {
			i = h + 1
		}
	}
	lo = i
	// hi: the first unit from lo on that begins where s ends or later.
	j = len(us)
	for i < j {
		if h := int(uint(i+j) >> 1); us[h].Since >= s.b {
			j = h
		} else {
			i = h + 1
		}
	}
	return lo, i
}

// grow widens each span to the units it overlaps in memory.
func (m *liveModel) grow(ss []span) []span {
	for i, s := range ss {
		if lo, hi := m.overlap(s); lo < hi {
			ss[i] = span{min(s.a, m.units[lo].Since), max(s.b, m.units[hi-1].Until)}
		}
	}
	return ss
}

// coalesceGap is how many units between two spans are read rather than
// spend a second round trip on the second span.
const coalesceGap = 32

// coalesce joins neighbouring spans with few units between them (spans
// merged and grown, so in order and apart).
func (m *liveModel) coalesce(ss []span) []span {
	out := ss[:0]
	for _, s := range ss {
		if k := len(out) - 1; k >= 0 {
			_, endPrev := m.overlap(out[k])
			startNext, _ := m.overlap(s)
			if startNext-endPrev <= coalesceGap {
				out[k].b = s.b
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

// touch is what a batch asks of one model's verdicts: all of them, or
// those in its own changed spans and those an upstream's changed spans
// reach.
type touch struct {
	all   bool
	own   []span
	reach []upstreamReach
}

// upstreamReach is a span of an upstream whose applied rows changed.
type upstreamReach struct {
	up string
	s  span
}

// update puts the units read into memory, and the current rows cur holds
// for require_current edges (live_current.go), and re-judges what they,
// and the clock since st.now, can have changed; it returns how many units
// it judged.
func (st *liveState) update(now time.Time, reads []modelRead, cur map[string]currentRead) int {
	back := now.Before(st.now)
	st.now = now
	nowNS := now.UnixNano()
	touched := map[*liveModel]*touch{}
	get := func(m *liveModel) *touch {
		t := touched[m]
		if t == nil {
			t = &touch{}
			touched[m] = t
		}
		return t
	}
	if back {
		// The clock went back: any verdict may be younger again.
		for _, m := range st.models {
			if m.judged {
				get(m).all = true
			}
		}
	} else {
		for _, m := range st.dueFlips(nowNS) {
			get(m).all = true
		}
	}
	for _, rd := range reads {
		m := rd.m
		t := get(m)
		var changed []span // the spans whose applied rows changed
		// moved is set when m.units changed, from the position from on.
		moved, from := false, len(m.units)
		if rd.whole {
			if !slices.Equal(m.units, rd.rows) {
				if !sameApplied(m.units, rd.rows) {
					changed = append(changed, everything)
				}
				m.units, m.verdicts = rd.rows, make([]Readiness, len(rd.rows))
				m.counts = ModelReadiness{Model: m.name, Pipeline: m.pipeline, Err: m.err}
				m.disjoint = isDisjoint(m.units)
				t.all = true
				moved, from = true, 0
			}
		} else {
			// Last span first, so the indexes of the earlier ones hold.
			for i := len(rd.spans) - 1; i >= 0; i-- {
				s, rows := rd.spans[i], rd.got[i]
				lo, hi := m.overlap(s)
				if slices.Equal(m.units[lo:hi], rows) {
					continue
				}
				if !sameApplied(m.units[lo:hi], rows) {
					changed = append(changed, s)
				}
				for k := lo; k < hi; k++ {
					m.counts.tally(m.units[k], m.verdicts[k], -1)
				}
				m.units = slices.Replace(m.units, lo, hi, rows...)
				m.verdicts = slices.Replace(m.verdicts, lo, hi, make([]Readiness, len(rows))...)
				end := lo + len(rows)
				if !isDisjoint(m.units[max(lo-1, 0):min(end+1, len(m.units))]) {
					m.disjoint = false
				}
				t.own = append(t.own, s)
				moved, from = true, lo
			}
		}
		ix, indexed := st.ix[m.name]
		if indexed && moved {
			// The index references m.units, which may have moved: point
			// it at them again, merging the coverage around what changed.
			if rd.whole || !ix.respan(m.units, changed, from, now) {
				st.ix[m.name] = newUpstreamIndex(st.shapes[m.name], m.units, now)
			}
		}
		if !indexed || len(changed) == 0 {
			continue
		}
		for _, d := range st.down[m.name] {
			for _, s := range changed {
				get(st.models[d]).reach = append(get(st.models[d]).reach, upstreamReach{up: m.name, s: s})
			}
		}
	}
	for _, name := range st.setCurrent(cur, now) {
		for _, d := range st.down[name] {
			dm := st.models[d]
			if slices.ContainsFunc(dm.srcs, func(src spec.Source) bool { return src.Name == name && src.RequireCurrent }) {
				get(dm).all = true
			}
		}
	}
	n := 0
	for m, t := range touched {
		if m.judged {
			n += st.rejudge(m, t)
			st.queueFlip(m)
		}
	}
	st.dropStaleFlips()
	return n
}

// rejudge judges again the units of m that t names, with m's edges
// rebuilt at st.now.
func (st *liveState) rejudge(m *liveModel, t *touch) int {
	old := slices.Clone(m.edges)
	st.buildEdges(m)
	for k := range m.edges {
		e := &m.edges[k]
		if !e.constant {
			continue
		}
		if k >= len(old) || !old[k].constant || old[k].verdict != e.verdict {
			t.all = true
		}
		m.flip = min(m.flip, e.flip)
	}
	if t.all || !m.disjoint {
		return st.judgeRange(m, 0, len(m.units))
	}
	var runs [][2]int
	for _, s := range t.own {
		lo, hi := m.overlap(s)
		runs = append(runs, [2]int{lo, hi})
	}
	for _, r := range t.reach {
		for k, src := range m.srcs {
			if src.Name != r.up || m.edges[k].constant {
				continue
			}
			s := r.s
			if src.Contract == spec.Through {
				s.b = math.MaxInt64 // every unit ending after the change begins
			}
			lo, hi := m.overlap(s)
			runs = append(runs, [2]int{lo, hi})
		}
	}
	slices.SortFunc(runs, func(x, y [2]int) int { return cmp.Compare(x[0], y[0]) })
	n, done := 0, 0
	for _, r := range runs {
		lo := max(r[0], done)
		if lo < r[1] {
			n += st.judgeRange(m, lo, r[1])
			done = r[1]
		}
	}
	return n
}

// sameApplied reports whether two runs of units hold the same applied
// rows: the only part of a model its downstreams' gates read.
func sameApplied(a, b []state.SweepUnit) bool {
	i, j := 0, 0
	for {
		for i < len(a) && a[i].Status != state.CodeApplied {
			i++
		}
		for j < len(b) && b[j].Status != state.CodeApplied {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if a[i] != b[j] {
			return false
		}
		i, j = i+1, j+1
	}
}
