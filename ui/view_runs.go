package ui

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// runsView is the run history of the environment, newest first, under the
// runs this UI started, which show their live progress.
type runsView struct {
	viewBase
	runs []state.Run
	cur  cursor
}

func (a *App) newRuns() *runsView { return &runsView{viewBase: viewBase{id: a.id()}} }

func (v *runsView) kind() viewKind { return viewRuns }
func (v *runsView) title() string  { return "Runs" }

func (v *runsView) load(a *App, gen uint64, _ []string) tea.Cmd {
	return loadCmd(a.ctx, a.eng, v.id, gen, loadRuns(a.eng))
}

func (v *runsView) apply(a *App, data any) {
	var sel int64
	if v.cur.pos < len(v.runs) {
		sel = v.runs[v.cur.pos].ID
	}
	v.runs = data.(runsData).runs
	v.cur.setLen(len(v.runs))
	for i, r := range v.runs {
		if r.ID == sel {
			v.cur.moveTo(i)
		}
	}
}

// affected: every unit transition of a run moves its counts, and a run's
// end follows its last transition.
func (v *runsView) affected(a *App, changes []state.Change) (bool, []string) {
	return len(a.envChanges(changes)) > 0, nil
}

func (v *runsView) key(a *App, msg tea.KeyPressMsg) tea.Cmd {
	if v.cur.handleKey(a.keys, msg) {
		return nil
	}
	if key.Matches(msg, a.keys.Enter) && v.cur.pos < len(v.runs) {
		return a.push(a.newRun(v.runs[v.cur.pos].ID))
	}
	return nil
}

func (v *runsView) wheel(msg tea.MouseWheelMsg) { v.cur.handleWheel(msg) }

func (v *runsView) bindings(a *App) []key.Binding {
	enter := a.keys.Enter
	enter.SetHelp("enter", "tasks")
	return []key.Binding{enter}
}

// runStatus is a run's status as a theme status.
func runStatus(s state.RunStatus) themes.Status {
	switch s {
	case state.RunRunning:
		return themes.Running
	case state.RunSucceeded:
		return themes.Applied
	case state.RunFailed:
		return themes.Failed
	}
	return themes.Pending
}

// runScope names what a run covered: its pipeline or its models.
func runScope(r state.Run) string {
	if r.Pipeline != "" {
		return "pipeline " + r.Pipeline
	}
	switch len(r.Models) {
	case 0:
		return "every model"
	case 1:
		return r.Models[0]
	}
	return fmt.Sprintf("%s +%d", r.Models[0], len(r.Models)-1)
}

func runWindow(w state.Window) string {
	if w.Empty() {
		return "no window"
	}
	return windowText(w)
}

func (v *runsView) render(a *App, w, h int) []string {
	t := a.theme
	var lines []string
	if len(a.runs) > 0 {
		lines = append(lines, " "+t.Title.Render("Started here"))
		live := a.runs
		if len(live) > 3 {
			live = live[len(live)-3:]
		}
		for i := len(live) - 1; i >= 0; i-- {
			lines = append(lines, liveRunLine(a, live[i], w))
		}
		lines = append(lines, " "+t.Title.Render("History"))
	}
	if !v.loaded {
		return pad(append(lines, loadingLines(a, &v.viewBase, w, 1)...), w, h)
	}
	wide := w >= 120
	cols := []column{{w: 5, right: true}, {w: 12}, {w: 9}, {w: min(24, max(12, w/5))}, {w: 22}}
	head := []string{"ID", "STATUS", "MODE", "SCOPE", "WINDOW"}
	if wide {
		cols = append(cols, column{w: 17}, column{w: 7})
		head = append(head, "STARTED", "TOOK")
	}
	cols = append(cols, column{w: 0})
	head = append(head, "ACTOR")
	lines = append(lines, t.Muted.Render(" "+row(w-1, cols, head...)))
	if len(v.runs) == 0 {
		lines = append(lines, t.Muted.Render("   no runs yet in "+a.eng.Env.String()))
	}
	v.cur.setHeight(max(1, h-len(lines)))
	from, to := v.cur.visible()
	now := a.now()
	for i := from; i < to; i++ {
		r := v.runs[i]
		cells := []string{fmt.Sprint(r.ID), t.Label(runStatus(r.Status)), r.StateMode, runScope(r), runWindow(r.Window)}
		cells[1] = t.Status(runStatus(r.Status)).Render(themes.Glyph(runStatus(r.Status)) + " " + string(r.Status))
		if wide {
			cells = append(cells, t.Muted.Render(timeText(&r.StartedAt)), t.Muted.Render(took(r, now)))
		}
		cells = append(cells, t.Muted.Render(r.Actor))
		lines = append(lines, listLine(t, i == v.cur.pos, row(w-1, cols, cells...), w))
	}
	return pad(lines, w, h)
}

// took is a run's duration, so far when it is still running.
func took(r state.Run, now time.Time) string {
	end := now
	if r.FinishedAt != nil {
		end = *r.FinishedAt
	}
	if end.Before(r.StartedAt) {
		return "-"
	}
	return shortDuration(end.Sub(r.StartedAt))
}

// liveRunLine is one run started from this UI: its state and the progress
// of its tasks.
func liveRunLine(a *App, r *liveRun, w int) string {
	t := a.theme
	st := themes.Running
	what := "running"
	switch {
	case r.done && (r.err != nil || r.result != nil && r.result.Failed()):
		st, what = themes.Failed, "failed"
	case r.done:
		st, what = themes.Applied, "done"
	}
	id := "run"
	if r.runID > 0 {
		id = fmt.Sprintf("run %d", r.runID)
	}
	line := " " + t.Status(st).Render(themes.Glyph(st)+" "+id+" "+what) + "  " + string(r.action.mode) + "  " + r.action.target()
	if r.err != nil {
		return fit(line+"  "+t.Error.Render(oneLine(r.err.Error())), w)
	}
	return fit(line+"  "+progressText(t, r.progress), w)
}

// progressText sums a run's task reports: "12/24 units ✓10 ⊘1 ✗1".
func progressText(t themes.Theme, ps map[string]engine.Progress) string {
	var done, total, ap, bl, fa int
	for _, p := range ps {
		ap, bl, fa, total = ap+p.Applied, bl+p.Blocked, fa+p.Failed, total+p.Total
	}
	done = ap + bl + fa
	if total == 0 && done == 0 {
		return t.Muted.Render("starting…")
	}
	return fmt.Sprintf("%d/%d units ", done, total) + t.Status(themes.Applied).Render(fmt.Sprintf("✓%d", ap)) + " " +
		t.Status(themes.Blocked).Render(fmt.Sprintf("⊘%d", bl)) + " " + t.Status(themes.Failed).Render(fmt.Sprintf("✗%d", fa))
}

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

func (a *App) newRun(id int64) *runView { return &runView{viewBase: viewBase{id: a.id()}, runID: id} }

func (v *runView) kind() viewKind { return viewRun }
func (v *runView) title() string  { return fmt.Sprintf("run %d", v.runID) }

func (v *runView) load(a *App, gen uint64, _ []string) tea.Cmd {
	return loadCmd(a.ctx, a.eng, v.id, gen, loadRun(a.eng, v.runID))
}

func (v *runView) apply(a *App, data any) {
	var sel runRow
	if v.cur.pos < len(v.rows) {
		sel = v.rows[v.cur.pos]
	}
	oldAttempt := v.attempt(sel)
	v.data = data.(runData)
	v.buildRows()
	v.cur.setLen(len(v.rows))
	if !v.loaded {
		// The cursor starts on the first task, not on a heading.
		for i, r := range v.rows {
			if !r.heading {
				v.cur.moveTo(i)
				break
			}
		}
		return
	}
	for i, r := range v.rows {
		if r.heading == sel.heading && r.wave == sel.wave && r.task == sel.task && v.attempt(r) == oldAttempt {
			v.cur.moveTo(i)
			break
		}
	}
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

func (v *runView) affected(a *App, changes []state.Change) (bool, []string) {
	for _, c := range changes {
		if c.RunID == v.runID {
			return true, nil
		}
	}
	return v.data.run.Status == state.RunRunning && len(a.envChanges(changes)) > 0, nil
}

func (v *runView) key(a *App, msg tea.KeyPressMsg) tea.Cmd {
	if v.cur.handleKey(a.keys, msg) {
		return nil
	}
	if key.Matches(msg, a.keys.Enter) && v.cur.pos < len(v.rows) {
		if r := v.rows[v.cur.pos]; !r.heading {
			if name := v.data.names[r.task]; name != "" {
				return a.openModel(name)
			}
		}
	}
	return nil
}

func (v *runView) wheel(msg tea.MouseWheelMsg) { v.cur.handleWheel(msg) }

func (v *runView) bindings(a *App) []key.Binding {
	enter := a.keys.Enter
	enter.SetHelp("enter", "open model")
	return []key.Binding{enter}
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

func (v *runView) render(a *App, w, h int) []string {
	if !v.loaded {
		return loadingLines(a, &v.viewBase, w, h)
	}
	t := a.theme
	r := v.data.run
	st := runStatus(r.Status)
	lines := []string{
		" " + t.Status(st).Render(themes.Glyph(st)+" "+string(r.Status)) + "  " + t.Accent.Render(fmt.Sprintf("run %d", r.ID)) +
			"  " + r.StateMode + "  " + runScope(r) + "  " + runWindow(r.Window),
		"   " + t.Muted.Render(fmt.Sprintf("env %s · by %s · started %s · took %s", spec.Env{Suffix: r.Env}, r.Actor, timeText(&r.StartedAt), took(r, a.now()))),
	}
	if len(r.Models) > 1 {
		lines = append(lines, "   "+t.Muted.Render("models "+strings.Join(r.Models, ", ")))
	}
	// Live progress when this UI runs it.
	for _, lr := range a.runs {
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
				tk = shortDuration(e.FinishedAt.Sub(e.StartedAt))
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
