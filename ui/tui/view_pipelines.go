package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// pipelinesView lists every model grouped by pipeline, with its units
// counted by status: the overview the UI opens on. Its graph form (the
// pipelines' task graphs drawn by waves) plugs in from ui/graphview through
// the graph renderer of its common; v switches forms.
type pipelinesView struct {
	viewBase
	models   []engine.ModelStatus
	graphs   []*engine.PipelineGraph
	graphErr error

	rows []plRow
	cur  cursor
	listQuery
	collapsed map[string]bool

	// The graph form: one pipeline's graph at a time, built when the data
	// changes, with a selected model.
	graphForm bool
	graph     pipelineGraph
	graphOf   string // the pipeline shown
	graphSel  string // the selected model
	graphX    int    // the scroll: the picture cell at the top-left
	graphY    int

	// stale names the models a gated downstream's freshness limit finds
	// too old (staleModels), worked out when the data arrives.
	stale map[string]bool

	// totals are every model's units by status and pipes the number of
	// pipelines, for the summary line: summed when the data arrives, so a
	// keystroke costs the rows drawn, not the models listed.
	totals map[state.UnitStatus]int
	pipes  int
}

// plRow is a pipeline heading or a model.
type plRow struct {
	pipeline string
	model    int // index into models; -1 for a heading
	counts   map[state.UnitStatus]int
	n        int // a heading's model count
}

func newPipelines(c *common) *pipelinesView {
	return &pipelinesView{viewBase: newBase(c), collapsed: map[string]bool{}}
}

// viewPipelines is the overview the UI opens on.
const viewPipelines viewKind = "pipelines"

func (v *pipelinesView) kind() viewKind { return viewPipelines }
func (v *pipelinesView) title() string  { return "Pipelines" }

func (v *pipelinesView) load(gen uint64, only []string) tea.Cmd {
	return loadCmd(v.c, v.id, gen, loadPipelines(v.c.eng, only))
}

func (v *pipelinesView) update(msg viewMsg) tea.Cmd {
	return takeLoaded(msg, v.apply)
}

// apply takes loaded data: every model, or (d.only) just those named.
func (v *pipelinesView) apply(d pipelinesData) {
	selected := v.selectedName()
	if d.only != nil {
		byName := make(map[string]int, len(v.models))
		for i, m := range v.models {
			byName[m.Name] = i
		}
		for _, st := range d.models {
			if i, ok := byName[st.Name]; ok {
				v.models[i] = st
			}
		}
	} else {
		v.models, v.graphs, v.graphErr = d.models, d.graphs, d.graphErr
	}
	v.stale = nil
	if v.c.eng.Spec() != nil {
		st := make(map[string]engine.ModelStatus, len(v.models))
		for _, m := range v.models {
			st[m.Name] = m
		}
		v.stale = staleModels(v.c.eng.Spec().Models, st, v.c.now())
	}
	v.sumUp()
	v.rebuild(selected)
	v.graph = nil // rebuilt from the new data when drawn; the selection and scroll stay
}

// sumUp counts the summary line's totals and pipelines.
func (v *pipelinesView) sumUp() {
	v.totals = map[state.UnitStatus]int{}
	pipes := map[string]bool{}
	for _, m := range v.models {
		pipes[m.Pipeline] = true
		for s, n := range m.Counts {
			v.totals[s] += n
		}
	}
	v.pipes = len(pipes)
}

// health is a model's health as its row and its graph node show it:
// stale ranks below failed and blocked, above running and pending.
func (v *pipelinesView) health(m engine.ModelStatus) themes.Status {
	h := health(m.Counts)
	if v.stale[m.Name] && h != themes.Failed && h != themes.Blocked && h != themes.Missing {
		return themes.Stale
	}
	return h
}

// hasStatus reports whether q (lower case) begins a status the model
// has — a count of its units ("failed", "blocked", "pending", "running",
// "applied"), or "stale" or "outdated" — so /failed lists the models with
// failed units, as the count columns and the health glyph show them.
func (v *pipelinesView) hasStatus(m engine.ModelStatus, q string) bool {
	for s, n := range m.Counts {
		if n > 0 && strings.HasPrefix(string(s), q) {
			return true
		}
	}
	return v.stale[m.Name] && strings.HasPrefix("stale", q) || m.Outdated > 0 && strings.HasPrefix("outdated", q)
}

// affected: a change reloads only the models it names, when they are all
// listed already; a new model means a full reload.
func (v *pipelinesView) affected(changes []state.Change) (bool, []string) {
	names := changedModels(v.c.eng.Env().Suffix, changes)
	if len(names) == 0 {
		return false, nil
	}
	known := make(map[string]bool, len(v.models))
	for _, m := range v.models {
		known[m.Name] = true
	}
	for _, n := range names {
		if !known[n] {
			return true, nil
		}
	}
	return true, names
}

// modelNames are the models listed, for the palette to complete.
func (v *pipelinesView) modelNames() []string {
	out := make([]string, len(v.models))
	for i, m := range v.models {
		out[i] = m.Name
	}
	return out
}

func (v *pipelinesView) setFilter(s string) tea.Cmd {
	sel := v.selectedName()
	v.query = s
	v.rebuild(sel)
	return nil
}

func (v *pipelinesView) selectedName() string {
	if v.cur.pos < len(v.rows) {
		if r := v.rows[v.cur.pos]; r.model >= 0 {
			return v.models[r.model].Name
		}
		return "pipeline:" + v.rows[v.cur.pos].pipeline
	}
	return ""
}

// rebuild makes the rows from the models, the filter and the collapsed
// pipelines, keeping the cursor on the same row when it is still there.
func (v *pipelinesView) rebuild(selected string) {
	q := strings.ToLower(v.query)
	v.rows = v.rows[:0]
	for _, start := range v.pipelineStarts() {
		i := start
		p := v.models[i].Pipeline
		head := plRow{pipeline: p, model: -1, counts: map[state.UnitStatus]int{}}
		var members []plRow
		for ; i < len(v.models) && v.models[i].Pipeline == p; i++ {
			m := v.models[i]
			if q != "" && !strings.Contains(strings.ToLower(m.Name), q) && !strings.Contains(strings.ToLower(p), q) && !v.hasStatus(m, q) {
				continue
			}
			for s, n := range m.Counts {
				head.counts[s] += n
			}
			head.n++
			members = append(members, plRow{pipeline: p, model: i, counts: m.Counts})
		}
		if head.n == 0 {
			continue
		}
		v.rows = append(v.rows, head)
		if !v.collapsed[p] {
			v.rows = append(v.rows, members...)
		}
	}
	v.cur.setLen(len(v.rows))
	if v.cur.moveToFirst(len(v.rows), func(i int) bool {
		name := "pipeline:" + v.rows[i].pipeline
		if v.rows[i].model >= 0 {
			name = v.models[v.rows[i].model].Name
		}
		return name == selected
	}) {
		return
	}
	if selected == "" {
		// First load: the cursor starts on the first failed or blocked
		// model, where an on-call engineer looks first; with none, on the
		// first model.
		if !v.jumpProblem(1) {
			v.cur.moveToFirst(len(v.rows), func(i int) bool { return v.rows[i].model >= 0 })
		}
	}
}

// noJumpReason says why n and N do not move in the graph form, whose
// selection follows edges, not rows.
func (v *pipelinesView) noJumpReason() string {
	if v.graphForm && v.c.render.graph != nil {
		return "n and N jump between rows of the list: v switches to it"
	}
	return ""
}

// jumpProblem moves the cursor to the next model row (dir 1, or the
// previous: -1) with failed or blocked units, round the end; from a
// pipeline heading or the top, the first such row.
func (v *pipelinesView) jumpProblem(dir int) bool {
	if v.graphForm && v.c.render.graph != nil {
		return false // the graph has its own selection
	}
	n := len(v.rows)
	for step := 1; step <= n; step++ {
		i := ((v.cur.pos+dir*step)%n + n) % n
		if r := v.rows[i]; r.model >= 0 && (r.counts[state.Failed] > 0 || r.counts[state.Blocked] > 0) {
			v.cur.moveTo(i)
			return true
		}
	}
	return false
}

// pipelineStarts are the indices in models (sorted by pipeline, then name)
// where each pipeline begins, in the order pipelines are listed: the order
// data flows in (upstream pipelines first) when the graphs are known, else
// by name.
func (v *pipelinesView) pipelineStarts() []int {
	var starts []int
	for i := range v.models {
		if i == 0 || v.models[i].Pipeline != v.models[i-1].Pipeline {
			starts = append(starts, i)
		}
	}
	rank := map[string]int{}
	for i, g := range v.graphs {
		rank[g.Name] = i + 1
	}
	slices.SortStableFunc(starts, func(x, y int) int {
		rx, ry := rank[v.models[x].Pipeline], rank[v.models[y].Pipeline]
		if rx == 0 {
			rx = len(rank) + 1
		}
		if ry == 0 {
			ry = len(rank) + 1
		}
		return rx - ry
	})
	return starts
}

func (v *pipelinesView) key(msg tea.KeyPressMsg) tea.Cmd {
	if key.Matches(msg, v.c.keys.ToggleGraph) {
		v.graphForm = !v.graphForm
		if v.graphForm {
			// The graph opens on the list's pipeline, with its model
			// selected when the cursor is on one.
			v.graph, v.graphOf, v.graphSel, v.graphX, v.graphY = nil, "", "", 0, 0
			if v.cur.pos < len(v.rows) {
				r := v.rows[v.cur.pos]
				v.graphOf = r.pipeline
				if r.model >= 0 {
					v.graphSel = v.models[r.model].Name
				}
			}
		} else if v.graphSel != "" {
			// Back in the list, the cursor goes to the graph's selection.
			v.collapsed[v.graphOf] = false
			v.rebuild(v.graphSel)
		}
		return nil
	}
	if v.graphForm && v.c.render.graph != nil {
		return v.graphKey(msg)
	}
	if v.cur.handleKey(v.c.keys, msg) {
		return nil
	}
	var row *plRow
	if v.cur.pos < len(v.rows) {
		row = &v.rows[v.cur.pos]
	}
	switch {
	case key.Matches(msg, v.c.keys.Enter):
		if row == nil {
			return nil
		}
		if row.model < 0 {
			sel := v.selectedName()
			v.collapsed[row.pipeline] = !v.collapsed[row.pipeline]
			v.rebuild(sel)
			return nil
		}
		v.c.openModel(v.models[row.model].Name)
		return nil
	case key.Matches(msg, v.c.keys.RunModel):
		switch {
		case row != nil && row.model >= 0:
			v.c.openAction(action{kind: actionRun, model: v.models[row.model].Name, mode: spec.Discover})
		case row != nil:
			// A pipeline's heading: every model of it, over its task graph.
			v.c.openAction(action{kind: actionRun, pipeline: row.pipeline, mode: spec.Discover})
		}
		return nil
	}
	return nil
}

func (v *pipelinesView) wheel(msg tea.MouseWheelMsg) {
	if v.graphForm && v.c.render.graph != nil {
		return // the graph scrolls with its selection
	}
	v.cur.handleWheel(msg)
}

func (v *pipelinesView) bindings() []key.Binding {
	enter := saying(v.c.keys.Enter, "open model")
	if v.graphForm && v.c.render.graph != nil {
		return []key.Binding{enter, v.c.keys.ToggleGraph, v.c.keys.EdgeUp, v.c.keys.EdgeDown, v.c.keys.NextGraph, v.c.keys.PrevGraph,
			v.c.keys.Left, v.c.keys.Right, v.c.keys.RunModel}
	}
	run := v.c.keys.RunModel
	if v.cur.pos < len(v.rows) && v.rows[v.cur.pos].model < 0 {
		run = saying(run, "run pipeline") // on a pipeline's heading
	}
	return []key.Binding{enter, v.c.keys.ToggleGraph, run, v.c.keys.NextProblem, v.c.keys.PrevProblem}
}

// columns lays out the pipelines view's columns: health glyph, name, shape,
// one count per status, then, when there is room, the newest applied_at and
// the coverage.
func (v *pipelinesView) columns(w int, counts []state.UnitStatus) (cols []column, wide, wider bool) {
	wide, wider = w >= 110, w >= 150
	fixed := 2 + 9 + 1 + len(counts)*8
	// LAST APPLIED is as wide as the time toggle prints it ("2026-01-01
	// 05:00Z" under t), its heading at least; also when the counts left
	// room for it and a model name of 20.
	lastW := max(12, v.c.instantWidth())
	wide = wide || fixed+lastW+1+20 <= w
	if wide {
		fixed += lastW + 1
	}
	if wider {
		fixed += 32
	}
	name := max(12, w-fixed-1)
	if wider {
		name = min(name, 44) // the coverage column takes the rest
	}
	cols = []column{{w: 1}, {w: name}, {w: 9}}
	for range counts {
		cols = append(cols, column{w: 7, right: true})
	}
	if wide {
		cols = append(cols, column{w: lastW, right: true})
	}
	if wider {
		cols = append(cols, column{w: 0})
	}
	return cols, wide, wider
}

// countsShown are the count columns drawn at width w: every one on a
// terminal wide enough for them all and LAST APPLIED (110), else only the
// statuses some model has — a column of zeros says nothing, and dropping
// it makes room for when each model was last applied — the applied count
// at least.
func (v *pipelinesView) countsShown(w int) []state.UnitStatus {
	if w >= 110 {
		return countColumns
	}
	var out []state.UnitStatus
	for _, s := range countColumns {
		for _, m := range v.models {
			if m.Counts[s] > 0 {
				out = append(out, s)
				break
			}
		}
	}
	if len(out) == 0 {
		return countColumns[:1]
	}
	return out
}

func (v *pipelinesView) render(w, h int) []string {
	if !v.loaded {
		return loadingLines(&v.viewBase, w, h)
	}
	t := v.c.theme
	if v.graphForm && v.c.render.graph != nil {
		return v.renderGraph(w, h)
	}
	counts := v.countsShown(w - 1)
	cols, wide, wider := v.columns(w-1, counts)
	head := []string{"", "MODEL", "SHAPE"}
	for _, s := range counts {
		head = append(head, themes.Glyph(unitStatus(s))+" "+shortStatus(s))
	}
	if wide {
		head = append(head, "LAST APPLIED")
	}
	if wider {
		head = append(head, "COVERAGE")
	}
	lines := []string{t.Muted.Render(" " + row(w-1, cols, head...))}
	if v.graphErr != nil {
		lines = append(lines, t.Error.Render(fit(" "+oneLine(v.graphErr.Error()), w)))
	}
	listH := max(1, h-len(lines)-1)
	v.cur.setHeight(listH)
	summary := v.summary()
	if len(v.rows) == 0 {
		lines = append(lines, t.Muted.Render(" "+emptyList("no models: apply or run a spec to register some", "model", v.query)))
	}
	from, to := v.cur.visible()
	for i := from; i < to; i++ {
		r := v.rows[i]
		var line string
		if r.model < 0 {
			mark := "▾ "
			if v.collapsed[r.pipeline] {
				mark = "▸ "
			}
			cells := []string{t.Glyph(health(r.counts)), t.Title.Render(mark+r.pipeline) + t.Muted.Render(" "+plural(r.n, "model", "models")), ""}
			for _, s := range counts {
				cells = append(cells, countCell(t, s, r.counts[s]))
			}
			line = row(w-1, cols, cells...)
		} else {
			m := v.models[r.model]
			cells := []string{t.Glyph(v.health(m)), "  " + m.Name, t.Muted.Render(shapeText(m))}
			for _, s := range counts {
				cells = append(cells, countCell(t, s, m.Counts[s]))
			}
			if wide {
				cells = append(cells, t.Muted.Render(v.c.when(m.LastAppliedAt)))
			}
			if wider {
				cells = append(cells, t.Muted.Render(v.c.coverageText(m)))
			}
			line = row(w-1, cols, cells...)
		}
		lines = append(lines, listLine(t, i == v.cur.pos, line, w))
	}
	lines = pad(lines, w, h-1)
	return append(lines, summary)
}

// summary is the last line: totals, the filter and the scroll position.
func (v *pipelinesView) summary() string {
	t := v.c.theme
	parts := []string{plural(len(v.models), "model", "models"), plural(v.pipes, "pipeline", "pipelines")}
	for _, s := range []state.UnitStatus{state.Failed, state.Blocked, state.Running} {
		if n := v.totals[s]; n > 0 {
			parts = append(parts, t.Status(unitStatus(s)).Render(themes.Glyph(unitStatus(s))+" "+count(n)+" "+string(s)))
		}
	}
	if v.totals[state.Failed] == 0 && v.totals[state.Blocked] == 0 && len(v.stale) == 0 {
		parts = append(parts, t.Status(themes.Applied).Render(themes.Glyph(themes.Applied)+" all clear"))
	}
	right := v.cur.scrollHint()
	if v.query != "" {
		right = "filter: " + v.query + "  " + right
	}
	return t.Muted.Render(" ") + strings.Join(parts, t.Muted.Render(" · ")) + "  " + t.Muted.Render(right)
}

// shortStatus is a status's column heading.
func shortStatus(s state.UnitStatus) string {
	switch s {
	case state.Applied:
		return "appl"
	case state.Pending:
		return "pend"
	case state.Running:
		return "run"
	case state.Blocked:
		return "blkd"
	case state.Failed:
		return "fail"
	}
	return string(s)
}

// coverageText summarises a model's coverage: its first..last bound and
// the gaps between, the span printed by c.window (the time toggle).
func (c *common) coverageText(m engine.ModelStatus) string {
	switch {
	case m.Timeless():
		return "-"
	case m.Coverage.Empty():
		return "none"
	}
	ws := m.Coverage.Windows()
	first, last := ws[0], ws[len(ws)-1]
	s := c.window(state.Window{Since: first.Since, Until: last.Until})
	if gaps := len(ws) - 1; gaps > 0 {
		s += fmt.Sprintf(" (%s)", plural(gaps, "gap", "gaps"))
	}
	return s
}

// pipelinesData is the pipelines view's data: every model's status, and the
// pipelines' task graphs when the engine has a spec. only, when set, marks a
// partial reload of just those models' statuses.
type pipelinesData struct {
	models   []engine.ModelStatus
	graphs   []*engine.PipelineGraph
	graphErr error
	only     []string
}

// loadPipelines reads every model's status and the pipelines' graphs, or
// (only) just the statuses of the models named.
func loadPipelines(e *engine.Engine, only []string) func(ctx context.Context) (pipelinesData, error) {
	return func(ctx context.Context) (pipelinesData, error) {
		if len(only) > 0 {
			d := pipelinesData{only: only}
			for _, name := range only {
				st, err := e.ModelStatus(ctx, name)
				if errors.Is(err, engine.ErrUnknownModel) {
					continue // gone from the store and the spec: the full reload drops it
				}
				if err != nil {
					return pipelinesData{}, err
				}
				d.models = append(d.models, st)
			}
			return d, nil
		}
		models, err := e.Status(ctx)
		if err != nil {
			return pipelinesData{}, err
		}
		d := pipelinesData{models: models}
		if e.Spec() != nil {
			recs, err := e.Models(ctx)
			if err != nil {
				return pipelinesData{}, fmt.Errorf("reading the registered models of %s: %w", e.Env(), err)
			}
			known := make(map[string]int, len(recs))
			for _, r := range recs {
				known[r.Name] = r.TaskID
			}
			d.graphs, d.graphErr = engine.PipelineGraphs(e.Spec(), engine.AssignTaskIDs(e.Spec(), known))
		}
		return d, nil
	}
}
