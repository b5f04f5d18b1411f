package tui

import (
	"context"
	"fmt"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/untrusted"
)

// runsView is the run history of the environment, newest first, under the
// runs this UI started, which show their live progress.
type runsView struct {
	viewBase
	runs []state.Run
	cur  cursor
}

func newRuns(c *common) *runsView { return &runsView{viewBase: newBase(c)} }

// viewRuns is the run history, key 3.
const viewRuns viewKind = "runs"

func (v *runsView) kind() viewKind { return viewRuns }
func (v *runsView) title() string  { return "Runs" }

func (v *runsView) load(gen uint64, _ []string) tea.Cmd {
	return loadCmd(v.c, v.id, gen, loadRuns(v.c.eng))
}

func (v *runsView) update(msg viewMsg) tea.Cmd {
	return takeLoaded(msg, v.apply)
}

// apply takes the runs, keeping the cursor on its run.
func (v *runsView) apply(d runsData) {
	var sel int64
	if v.cur.pos < len(v.runs) {
		sel = v.runs[v.cur.pos].ID
	}
	v.runs = d.runs
	v.cur.setLen(len(v.runs))
	v.cur.moveToFirst(len(v.runs), func(i int) bool { return v.runs[i].ID == sel })
}

// affected: every unit transition of a run moves its counts, and a run's
// end follows its last transition.
func (v *runsView) affected(changes []state.Change) (bool, []string) {
	return len(v.c.envChanges(changes)) > 0, nil
}

func (v *runsView) key(msg tea.KeyPressMsg) tea.Cmd {
	if v.cur.handleKey(v.c.keys, msg) {
		return nil
	}
	if key.Matches(msg, v.c.keys.Enter) && v.cur.pos < len(v.runs) {
		v.c.send(pushMsg{newRun(v.c, v.runs[v.cur.pos].ID)})
		return nil
	}
	return nil
}

func (v *runsView) wheel(msg tea.MouseWheelMsg) { v.cur.handleWheel(msg) }

func (v *runsView) bindings() []key.Binding {
	return []key.Binding{saying(v.c.keys.Enter, "tasks")}
}

// runStatus is a run's status as a theme status. An abandoned run — its
// process stopped without closing it — left its work undone, like a
// failed one: ✗, never the ↻ of a run still going.
func runStatus(s state.RunStatus) themes.Status {
	switch s {
	case state.RunRunning:
		return themes.Running
	case state.RunSucceeded:
		return themes.Applied
	case state.RunFailed, state.RunAbandoned:
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

// runWindow is a run's window, in the header's zone.
func (c *common) runWindow(r state.Run) string {
	if r.Window.Empty() {
		return "no window"
	}
	return c.window(r.Window)
}

func (v *runsView) render(w, h int) []string {
	t := v.c.theme
	var lines []string
	if len(v.c.runs) > 0 {
		lines = append(lines, " "+t.Title.Render("Started here")+t.Muted.Render(" · "+plural(len(v.c.runs), "run", "runs")+" this session"))
		live, more := startedHere(v.c.runs, h)
		for i := len(live) - 1; i >= 0; i-- {
			lines = append(lines, liveRunLine(t, live[i], w, v.c.window))
		}
		if more > 0 {
			lines = append(lines, t.Muted.Render(fmt.Sprintf("   +%d more started here, older (in the history below)", more)))
		}
		lines = append(lines, " "+t.Title.Render("History"))
	}
	if !v.loaded {
		return pad(append(lines, loadingLines(&v.viewBase, w, 1)...), w, h)
	}
	// When a run started and how long it took come before its window at
	// any width; the actor, which the run's own view shows, only when
	// there is room.
	wide := w >= 120
	cols := []column{{w: 4, right: true}, {w: 11}, {w: 9}, {w: min(24, max(12, w/6))}, {w: v.c.instantWidth()}, {w: 5, right: true}}
	head := []string{"ID", "STATUS", "MODE", "SCOPE", "STARTED", "TOOK"}
	if wide {
		cols = append(cols, column{w: 24})
		head = append(head, "WINDOW")
	}
	cols = append(cols, column{w: 0})
	if wide {
		head = append(head, "ACTOR")
	} else {
		head = append(head, "WINDOW")
	}
	lines = append(lines, t.Muted.Render(" "+row(w-1, cols, head...)))
	if len(v.runs) == 0 {
		lines = append(lines, t.Muted.Render("   no runs yet in "+v.c.eng.Env().String()))
	}
	v.cur.setHeight(max(1, h-len(lines)))
	from, to := v.cur.visible()
	now := v.c.now()
	for i := from; i < to; i++ {
		r := v.runs[i]
		status := t.Status(runStatus(r.Status)).Render(themes.Glyph(runStatus(r.Status)) + " " + string(r.Status))
		cells := []string{fmt.Sprint(r.ID), status, r.StateMode, runScope(r), t.Muted.Render(v.c.when(&r.StartedAt)),
			t.Muted.Render(took(r, now)), v.c.runWindow(r)}
		if wide {
			cells = append(cells, t.Muted.Render(untrusted.Line(r.Actor)))
		}
		lines = append(lines, listLine(t, i == v.cur.pos, row(w-1, cols, cells...), w))
	}
	return pad(lines, w, h)
}

// startedHere is the runs of this session the runs view lists, oldest
// first, on a body h lines high: every one while they fit in a third of
// it (three at least), else the newest that fit beside a "+N more" line,
// with N the older ones left out.
func startedHere(runs []*liveRun, h int) (shown []*liveRun, more int) {
	room := max(3, h/3)
	if len(runs) <= room {
		return runs, 0
	}
	more = len(runs) - (room - 1)
	return runs[more:], more
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
	return elapsedText(end.Sub(r.StartedAt))
}

// liveRunLine is one run started from this UI: its state and the progress
// of its tasks.
func liveRunLine(t themes.Theme, r *liveRun, w int, window func(state.Window) string) string {
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
	line := " " + t.Status(st).Render(themes.Glyph(st)+" "+id+" "+what) + "  " + string(r.action.mode) + "  " + r.action.target(window)
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

// runsLimit is how many runs the runs view lists.
const runsLimit = 200

// runsData is the runs view's data.
type runsData struct {
	runs []state.Run
}

// loadRuns reads the environment's newest runs.
func loadRuns(e *engine.Engine) func(ctx context.Context) (runsData, error) {
	return func(ctx context.Context) (runsData, error) {
		runs, err := e.Runs(ctx, runsLimit)
		if err != nil {
			return runsData{}, fmt.Errorf("reading the runs of %s: %w", e.Env(), err)
		}
		return runsData{runs: runs}, nil
	}
}
