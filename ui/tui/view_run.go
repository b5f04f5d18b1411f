package tui

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/untrusted"
)

// runView is one run: its request and its task run log, with live
// progress for a run this UI is running.
type runView struct {
	viewBase
	runID int64
	data  runData
	rows  []runRow
	cur   cursor
}

// runRow is a row of the run view: a wave's heading, a task attempt (an
// entry of the log), or a task of the wave that has not started.
type runRow struct {
	heading bool
	wave    int // -1: tasks the waves do not hold
	entry   int // index into the log; -1 for a task not started
	task    int
}

func newRun(c *common, id int64) *runView { return &runView{viewBase: newBase(c), runID: id} }

// viewRun is one run, opened from the runs view.
const viewRun viewKind = "run"

func (v *runView) kind() viewKind { return viewRun }
func (v *runView) title() string  { return fmt.Sprintf("run %d", v.runID) }

func (v *runView) load(gen uint64, _ []string) tea.Cmd {
	return loadCmd(v.c, v.id, gen, loadRun(v.c.eng, v.runID))
}

func (v *runView) update(msg viewMsg) tea.Cmd {
	return takeLoaded(msg, v.apply)
}

// apply takes the run and its log, keeping the cursor on its attempt.
func (v *runView) apply(d runData) {
	var sel runRow
	if v.cur.pos < len(v.rows) {
		sel = v.rows[v.cur.pos]
	}
	oldAttempt := v.attempt(sel)
	v.data = d
	v.buildRows()
	v.cur.setLen(len(v.rows))
	if !v.loaded {
		// The cursor starts on the first task, not on a heading.
		v.cur.moveToFirst(len(v.rows), func(i int) bool { return !v.rows[i].heading })
		return
	}
	v.cur.moveToFirst(len(v.rows), func(i int) bool {
		r := v.rows[i]
		return r.heading == sel.heading && r.wave == sel.wave && r.task == sel.task && v.attempt(r) == oldAttempt
	})
}

// attempt is the attempt a row shows (0 for a heading or a task not
// started), to keep the cursor on it across reloads.
func (v *runView) attempt(r runRow) int {
	if r.heading || r.entry < 0 || r.entry >= len(v.data.log) {
		return 0
	}
	return v.data.log[r.entry].Attempt
}

// buildRows lays the log out by wave: each wave's heading, then its tasks
// in wave order, each with its attempts, or a row saying it has not
// started. Without waves the log is listed as it is.
func (v *runView) buildRows() {
	v.rows = v.rows[:0]
	if v.data.waves == nil {
		for i, e := range v.data.log {
			v.rows = append(v.rows, runRow{wave: -1, entry: i, task: e.TaskID})
		}
		return
	}
	byTask := map[int][]int{}
	for i, e := range v.data.log {
		byTask[e.TaskID] = append(byTask[e.TaskID], i)
	}
	placed := map[int]bool{}
	for wi, wave := range v.data.waves {
		v.rows = append(v.rows, runRow{heading: true, wave: wi, entry: -1})
		for _, id := range wave {
			placed[id] = true
			if len(byTask[id]) == 0 {
				v.rows = append(v.rows, runRow{wave: wi, entry: -1, task: id})
			}
			for _, ix := range byTask[id] {
				v.rows = append(v.rows, runRow{wave: wi, entry: ix, task: id})
			}
		}
	}
	head := false
	for i, e := range v.data.log {
		if !placed[e.TaskID] {
			if !head {
				v.rows, head = append(v.rows, runRow{heading: true, wave: -1, entry: -1}), true
			}
			v.rows = append(v.rows, runRow{wave: -1, entry: i, task: e.TaskID})
		}
	}
}

func (v *runView) affected(changes []state.Change) (bool, []string) {
	for _, c := range changes {
		if c.RunID == v.runID {
			return true, nil
		}
	}
	return v.data.run.Status == state.RunRunning && len(v.c.envChanges(changes)) > 0, nil
}

func (v *runView) key(msg tea.KeyPressMsg) tea.Cmd {
	if v.cur.handleKey(v.c.keys, msg) {
		return nil
	}
	if key.Matches(msg, v.c.keys.Enter) && v.cur.pos < len(v.rows) {
		if r := v.rows[v.cur.pos]; !r.heading {
			if name := v.data.names[r.task]; name != "" {
				v.c.openModel(name)
				return nil
			}
		}
	}
	return nil
}

func (v *runView) wheel(msg tea.MouseWheelMsg) { v.cur.handleWheel(msg) }

func (v *runView) bindings() []key.Binding {
	return []key.Binding{saying(v.c.keys.Enter, "open model")}
}

// taskStatus is a task attempt's status as a theme status.
func taskStatus(s string) themes.Status {
	switch s {
	case "SUCCESS":
		return themes.Applied
	case "FAILED":
		return themes.Failed
	case "IN_PROGRESS":
		return themes.Running
	}
	return themes.Pending
}

func (v *runView) render(w, h int) []string {
	if !v.loaded {
		return loadingLines(&v.viewBase, w, h)
	}
	t := v.c.theme
	r := v.data.run
	st := runStatus(r.Status)
	lines := []string{
		" " + t.Status(st).Render(themes.Glyph(st)+" "+string(r.Status)) + "  " + t.Accent.Render(fmt.Sprintf("run %d", r.ID)) +
			"  " + r.StateMode + "  " + runScope(r) + "  " + v.c.runWindow(r),
		"   " + t.Muted.Render(fmt.Sprintf("env %s · by %s · started %s · took %s", spec.Env{Suffix: r.Env}, untrusted.Line(r.Actor), v.c.when(&r.StartedAt), took(r, v.c.now()))),
	}
	if len(r.Models) > 1 {
		lines = append(lines, "   "+t.Muted.Render("models "+strings.Join(r.Models, ", ")))
	}
	// Live progress when this UI runs it.
	for _, lr := range v.c.runs {
		if lr.runID == r.ID && lr.progress != nil {
			lines = append(lines, " "+t.Title.Render("Progress"))
			for _, n := range slices.Sorted(maps.Keys(lr.progress)) {
				p := lr.progress[n]
				lines = append(lines, fit("   "+n+"  "+progressText(t, map[string]engine.Progress{n: p}), w))
			}
		}
	}
	heading := " " + t.Title.Render("Tasks")
	if n := len(v.data.waves); n > 0 {
		heading = " " + t.Title.Render("Tasks by wave") + t.Muted.Render(" · "+plural(n, "wave", "waves"))
	}
	lines = append(lines, heading)
	cols := []column{{w: 1}, {w: min(28, max(14, w/4))}, {w: 4, right: true}, {w: 12}, {w: 8, right: true}, {w: 7, right: true}, {w: 0}}
	lines = append(lines, t.Muted.Render(" "+row(w-1, cols, "", "TASK", "TRY", "STATUS", "ROWS", "TOOK", "ERROR")))
	if len(v.rows) == 0 {
		lines = append(lines, t.Muted.Render("   no task has started"))
	}
	v.cur.setHeight(max(1, h-len(lines)))
	from, to := v.cur.visible()
	indent := ""
	if v.data.waves != nil {
		indent = "  "
	}
	for i := from; i < to; i++ {
		r := v.rows[i]
		if r.heading {
			lines = append(lines, listLine(t, i == v.cur.pos, v.waveHeading(t, r.wave), w))
			continue
		}
		name := v.data.names[r.task]
		if name == "" {
			name = fmt.Sprintf("task %d", r.task)
		}
		var line string
		if r.entry < 0 {
			what := "waiting"
			if v.data.run.Status != state.RunRunning {
				what = "not run"
			}
			line = row(w-1, cols, t.Glyph(themes.Pending), indent+name, "", t.Muted.Render(what), "", "", "")
		} else {
			e := v.data.log[r.entry]
			rows := "-"
			if e.RowsWritten != nil {
				rows = count(int(*e.RowsWritten))
			}
			tk := "-"
			if e.FinishedAt != nil {
				tk = elapsedText(e.FinishedAt.Sub(e.StartedAt))
			}
			ts := taskStatus(e.Status)
			line = row(w-1, cols, t.Glyph(ts), indent+name, fmt.Sprint(e.Attempt), t.Status(ts).Render(e.Status), rows, t.Muted.Render(tk),
				t.Muted.Render(oneLine(e.Error)))
		}
		lines = append(lines, listLine(t, i == v.cur.pos, line, w))
	}
	return pad(lines, w, h)
}

// waveHeading is a wave's row: its number, its tasks, and their latest
// attempts' statuses counted.
func (v *runView) waveHeading(t themes.Theme, wave int) string {
	var ids []int
	if wave >= 0 && wave < len(v.data.waves) {
		ids = v.data.waves[wave]
	}
	latest := map[int]string{}
	for _, e := range v.data.log {
		latest[e.TaskID] = e.Status // the log lists attempts in order
	}
	title := fmt.Sprintf("Wave %d", wave+1)
	if wave < 0 {
		title = "Other tasks"
		for _, r := range v.rows {
			if r.wave < 0 && !r.heading && !slices.Contains(ids, r.task) {
				ids = append(ids, r.task)
			}
		}
	}
	counts := map[themes.Status]int{}
	for _, id := range ids {
		if st, ok := latest[id]; ok {
			counts[taskStatus(st)]++
		} else {
			counts[themes.Pending]++
		}
	}
	parts := []string{plural(len(ids), "task", "tasks")}
	for _, s := range []themes.Status{themes.Applied, themes.Running, themes.Failed, themes.Pending} {
		if n := counts[s]; n > 0 {
			parts = append(parts, t.Status(s).Render(fmt.Sprintf("%s %d", themes.Glyph(s), n)))
		}
	}
	return t.Accent.Render(title) + "  " + strings.Join(parts, t.Muted.Render(" · "))
}

// runData is one run with its task run log, each task named, and its
// tasks by wave.
type runData struct {
	run   state.Run
	log   []state.TaskRunEntry
	names map[int]string
	// waves are the run's task ids by wave of the run's graph, as the spec
	// orders them now; nil when it cannot (no spec, a model it no longer
	// has).
	waves [][]int
}

// loadRun reads one run, its task log and the names of its tasks.
func loadRun(e *engine.Engine, id int64) func(ctx context.Context) (runData, error) {
	return func(ctx context.Context) (runData, error) {
		run, err := e.RunRecord(ctx, id)
		if err != nil {
			return runData{}, fmt.Errorf("run %d: %w", id, err)
		}
		log, err := e.TaskLog(ctx, id)
		if err != nil {
			return runData{}, fmt.Errorf("reading the task log of run %d: %w", id, err)
		}
		// The run's own environment, which names its tasks.
		recs, err := e.InEnv(spec.Env{Suffix: run.Env}).Models(ctx)
		if err != nil {
			return runData{}, fmt.Errorf("reading the registered models of %s: %w", e.Env(), err)
		}
		names := make(map[int]string, len(recs))
		for _, r := range recs {
			names[r.TaskID] = r.Name
		}
		ids := make(map[string]int, len(recs))
		for _, r := range recs {
			ids[r.Name] = r.TaskID
		}
		return runData{run: run, log: log, names: names, waves: runWaves(e.Spec(), run.Models, ids)}, nil
	}
}

// runWaves orders a run's models into the waves its graph runs them in:
// as the engine builds a run's graph, a dependency onto a model of the run
// is an edge whatever the pipelines, one onto a model outside it is not.
// nil when the spec is missing or lacks a model.
func runWaves(sp *spec.Spec, models []string, ids map[string]int) [][]int {
	if sp == nil || len(models) == 0 {
		return nil
	}
	in := make(map[string]bool, len(models))
	nodes := make([]graph.TaskNode, 0, len(models))
	for _, m := range models {
		id, ok := ids[m]
		if !ok || sp.Model(m) == nil || in[m] {
			return nil
		}
		in[m] = true
		nodes = append(nodes, graph.TaskNode{ID: id, RunCondition: graph.All})
	}
	pgs, _ := engine.PipelineGraphs(sp, engine.AssignTaskIDs(sp, ids))
	var edges []graph.TaskEdge
	link := func(task, dep string, typ graph.DependencyType) {
		if in[task] && in[dep] {
			edges = append(edges, graph.TaskEdge{TaskID: ids[task], DependsOnTaskID: ids[dep], Type: typ})
		}
	}
	for _, p := range pgs {
		for _, e := range p.Edges {
			link(e.Task, e.DependsOn, e.Type)
		}
		for _, e := range p.Cross {
			link(e.Task, e.DependsOn, e.Type)
		}
	}
	g, err := graph.Build(nodes, edges)
	if err != nil {
		return nil
	}
	return g.Waves()
}
