package gate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// stuckReadPage is how many of a model's stuck units one StuckPage reads.
const stuckReadPage = 1000

// StuckPage is one page of BlockedPages or TriagePages.
type StuckPage struct {
	// Units are the page's units, in Blocked's (Triage's) order.
	Units []BlockedUnit
	// Models are the models with units in the listing, by name: known
	// before the first page from the grouped read, the same on every page,
	// so a caller can lay out what it prints before the rest is read.
	Models []StuckModel
}

// StuckModel is a model with units in a paged listing.
type StuckModel struct {
	Model string
	// Units counts its units in the listing, Failed those of them that
	// failed.
	Units, Failed int
	// Span holds every one of their windows; zero for a timeless model.
	Span state.Window
}

// BlockedPages is Blocked handed over a page of at most size units at a
// time, in Blocked's order, without reading every blocked unit first:
// what `bollhav blocked` prints from, its first page as soon as it is
// known (issue 33). fn returning an error stops it with that error.
func (g *Reader) BlockedPages(ctx context.Context, f BlockedFilter, size int, fn func(StuckPage) error) error {
	return g.stuckPages(ctx, f, []state.UnitStatus{state.Blocked}, size, fn)
}

// TriagePages is Triage a page at a time, as BlockedPages is Blocked.
func (g *Reader) TriagePages(ctx context.Context, f BlockedFilter, size int, fn func(StuckPage) error) error {
	return g.stuckPages(ctx, f, []state.UnitStatus{state.Failed, state.Blocked}, size, fn)
}

// stuckCandidate is a model with stuck units, before they are read: what
// its units can hold at most, from the span of their windows.
type stuckCandidate struct {
	model string
	// span holds every stuck unit's window of the model; zero for a
	// timeless model.
	span state.Window
	// failed: the model has a failed unit, which ranks before a blocked
	// one at equal holds.
	failed bool
	// units counts them, failedUnits the failed ones.
	units, failedUnits int
	// bound is what a unit inside span can hold at most: the outstanding
	// units the whole span reaches. Reach only grows with the window, so
	// no unit of the model holds more.
	bound int
}

// beatenBy reports whether u comes before every unit of c in stuckOrder:
// before the first place one of them could take (its bound, its best
// status, its model), so u can be handed over before c is read.
func (c stuckCandidate) beatenBy(u BlockedUnit) bool {
	if u.Holds != c.bound {
		return u.Holds > c.bound
	}
	rank := stuckRank(state.Blocked)
	if c.failed {
		rank = stuckRank(state.Failed)
	}
	if r := stuckRank(u.Status); r != rank {
		return r < rank
	}
	return u.Model < c.model
}

// stuckPages hands over stuck's answer in pages, in stuckOrder, reading
// the units a model at a time from a state.StuckReader: the grouped read
// gives which models have stuck units and the span of their windows; each
// model's bound (what its units hold at most) orders the models; a heap
// keeps the units read and not yet handed over, and a unit leaves it once
// no model still unread could place a unit before it. So the order is
// exact, pages leave as soon as they are known, and what is held at once
// is the units of the models read whose holds are below some unread
// model's bound, not every stuck unit; the counts reuse reachCounter's
// window indexes of the outstanding units, 16 bytes a unit. A store that
// is no StuckReader gets stuck's full read, paged.
func (g *Reader) stuckPages(ctx context.Context, f BlockedFilter, statuses []state.UnitStatus, size int, fn func(StuckPage) error) error {
	if size < 1 {
		return fmt.Errorf("a page of %d units", size)
	}
	sr, ok := g.Store.(state.StuckReader)
	if !ok {
		all, err := g.stuck(ctx, f, statuses)
		if err != nil {
			return err
		}
		models := stuckModelsOf(all)
		for page := range slices.Chunk(all, size) {
			if err := fn(StuckPage{Units: page, Models: models}); err != nil {
				return err
			}
		}
		return nil
	}
	lin, err := g.gatedLineage(ctx)
	if err != nil {
		return err
	}
	groups, err := sr.StuckGroups(ctx, g.Env.Suffix, statuses)
	if err != nil {
		return fmt.Errorf("reading the %s units: %w", joinStatuses(statuses), err)
	}
	counter := newReachCounter(g, lin, outstandingStatuses)
	counter.windows = sr
	return g.pagesOf(ctx, sr, lin, counter, f, statuses, groups, size, fn)
}

// pagesOf is stuckPages from groups, the grouped read of the statuses'
// units (Incidents reads them once for its first page and its counts).
func (g *Reader) pagesOf(ctx context.Context, sr state.StuckReader, lin *gatedLineage, counter *reachCounter, f BlockedFilter,
	statuses []state.UnitStatus, groups []state.StuckGroup, size int, fn func(StuckPage) error) error {
	cands, err := g.stuckCandidates(ctx, lin, f, groups, counter)
	if err != nil {
		return err
	}
	out := &pager{size: size, fn: fn, models: modelsOfCandidates(cands)}
	held := graph.NewHeap(stuckOrder)
	for _, c := range cands {
		for held.Len() > 0 && c.beatenBy(held.Peek()) {
			if err := out.add(held.Pop()); err != nil {
				return err
			}
		}
		err := stuckUnitsOf(ctx, sr, g.Env.Suffix, c.model, statuses, func(u state.Unit) error {
			b := blockedOf(u, lin)
			var err error
			b.Holds, err = counter.count(ctx, b.Model, b.Window)
			held.Push(b)
			return err
		})
		if err != nil {
			return err
		}
	}
	for held.Len() > 0 {
		if err := out.add(held.Pop()); err != nil {
			return err
		}
	}
	return out.flush()
}

// stuckCandidates are the models f selects of groups (the grouped stuck
// units) ordered by the first place a unit of theirs could take.
func (g *Reader) stuckCandidates(ctx context.Context, lin *gatedLineage, f BlockedFilter, groups []state.StuckGroup, counter *reachCounter) ([]stuckCandidate, error) {
	names, err := lin.selectModels(g, f)
	if err != nil {
		return nil, err
	}
	var cands []stuckCandidate
	for _, gr := range groups {
		if (f.Model != "" || f.Pipeline != "") && !slices.Contains(names, gr.Model) {
			continue
		}
		if n := len(cands); n > 0 && cands[n-1].model == gr.Model {
			c := &cands[n-1]
			c.span = state.Hull(c.span, gr.Span)
			c.failed = c.failed || gr.Status == state.Failed
			c.units += gr.Units
			c.failedUnits += failedOnes(gr)
			continue
		}
		cands = append(cands, stuckCandidate{model: gr.Model, span: gr.Span, failed: gr.Status == state.Failed, units: gr.Units, failedUnits: failedOnes(gr)})
	}
	// Every index the bounds need, in one read.
	var down []string
	for _, c := range cands {
		start := reachSame
		if c.span.IsZero() {
			start = reachAll
		}
		for d := range lin.downstreamReach(c.model, start) {
			down = append(down, d)
		}
	}
	if err := counter.preload(ctx, down); err != nil {
		return nil, err
	}
	for i := range cands {
		if cands[i].bound, err = counter.count(ctx, cands[i].model, cands[i].span); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(cands, func(a, b stuckCandidate) int {
		if a.bound != b.bound {
			return b.bound - a.bound
		}
		if a.failed != b.failed {
			if a.failed {
				return -1
			}
			return 1
		}
		if a.model < b.model {
			return -1
		}
		return 1
	})
	return cands, nil
}

// stuckUnitsOf calls fn with each stuck unit of model, a page of the store
// at a time.
func stuckUnitsOf(ctx context.Context, sr state.StuckReader, env, model string, statuses []state.UnitStatus, fn func(state.Unit) error) error {
	var after *state.Window
	for {
		page, err := sr.StuckPage(ctx, state.StuckPageQuery{Env: env, Model: model, Statuses: statuses, After: after, Limit: stuckReadPage})
		if err != nil {
			return fmt.Errorf("reading the %s units of %s: %w", joinStatuses(statuses), model, err)
		}
		for _, u := range page {
			if err := fn(u); err != nil {
				return err
			}
		}
		if len(page) < stuckReadPage {
			return nil
		}
		w := page[len(page)-1].Window
		after = &w
	}
}

// failedOnes is how many of gr's units failed.
func failedOnes(gr state.StuckGroup) int {
	if gr.Status == state.Failed {
		return gr.Units
	}
	return 0
}

// pager gathers units into pages of size and hands each to fn when full.
type pager struct {
	size   int
	page   []BlockedUnit
	models []StuckModel
	fn     func(StuckPage) error
}

func (p *pager) add(u BlockedUnit) error {
	p.page = append(p.page, u)
	if len(p.page) < p.size {
		return nil
	}
	return p.flush()
}

func (p *pager) flush() error {
	if len(p.page) == 0 {
		return nil
	}
	page := p.page
	p.page = nil
	return p.fn(StuckPage{Units: page, Models: p.models})
}

// modelsOfCandidates is the listing's models, by name.
func modelsOfCandidates(cands []stuckCandidate) []StuckModel {
	out := make([]StuckModel, len(cands))
	for i, c := range cands {
		out[i] = StuckModel{Model: c.model, Units: c.units, Failed: c.failedUnits, Span: c.span}
	}
	slices.SortFunc(out, func(a, b StuckModel) int { return strings.Compare(a.Model, b.Model) })
	return out
}

// stuckModelsOf is the models of a full listing, by name.
func stuckModelsOf(units []BlockedUnit) []StuckModel {
	byModel := map[string]*StuckModel{}
	var out []StuckModel
	for _, u := range units {
		m, ok := byModel[u.Model]
		if !ok {
			m = &StuckModel{Model: u.Model, Span: u.Window}
			byModel[u.Model] = m
		}
		m.Units++
		if u.Status == state.Failed {
			m.Failed++
		}
		m.Span = state.Hull(m.Span, u.Window)
	}
	for _, m := range byModel {
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b StuckModel) int { return strings.Compare(a.Model, b.Model) })
	return out
}

// preload reads the window indexes of models not read yet in one call of
// the store's index-only read (state.StuckReader.OutstandingWindows): on
// PostgreSQL one round trip for them all instead of one a model.
func (c *reachCounter) preload(ctx context.Context, models []string) error {
	var todo []string
	for _, m := range models {
		if _, ok := c.idx[m]; !ok { // set below, so each model once
			todo = append(todo, m)
			c.idx[m] = &windowIndex{}
		}
	}
	err := c.windows.OutstandingWindows(ctx, c.g.Env.Suffix, todo, func(model string, since, until int64) error {
		ix := c.idx[model]
		if since == 0 && until == 0 {
			ix.zero++
			return nil
		}
		ix.sinces = append(ix.sinces, since)
		ix.untils = append(ix.untils, until)
		return nil
	})
	if err != nil {
		for _, m := range todo {
			delete(c.idx, m)
		}
		return fmt.Errorf("reading the units of %s: %w", strings.Join(todo, ", "), err)
	}
	for _, m := range todo {
		slices.Sort(c.idx[m].untils) // sinces come in window order
	}
	return nil
}
