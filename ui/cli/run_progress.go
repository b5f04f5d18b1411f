package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/charmbracelet/colorprofile"
)

// runIsTerminal reports whether v is a file open on a terminal. The check is
// colorprofile's (an ioctl, not a guess from the file mode, so /dev/null is
// not a terminal), given a TERM so that only the descriptor decides.
func runIsTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	return colorprofile.Detect(f, []string{"TERM=xterm"}) > colorprofile.NoTTY
}

// runTaskProgress is one task's line.
type runTaskProgress struct {
	model                    string
	total                    int // planned units; -1 unknown
	applied, blocked, failed int
	started, finished        time.Time
	done                     bool
	status                   string
	printed                  bool // its finished line is out (live view)
}

// runView shows a run's progress. Live (a terminal that takes cursor
// movement): finished tasks print as permanent lines and the running ones
// below them are redrawn in place, with a footer counting tasks. Otherwise:
// one line per task as it finishes. Quiet (JSON): nothing at all. Progress
// callbacks come from the run's goroutines; everything is under mu.
type runView struct {
	mu     sync.Mutex
	out    io.Writer
	pal    palette
	live   bool
	quiet  bool
	now    func() time.Time
	width  int // model column
	tasks  map[string]*runTaskProgress
	order  []string
	drawn  int // lines of the live block now on screen
	dirty  bool
	stopCh chan struct{}
	wg     sync.WaitGroup
}

// newRunView picks the view for the command's output: quiet for JSON, live
// on a terminal that takes cursor movement, finish lines otherwise.
func (c *cmdContext) newRunView(order []string, totals map[string]int) *runView {
	live := runIsTerminal(c.Out) && colorprofile.Detect(c.Out, os.Environ()) > colorprofile.NoTTY
	return newRunView(colorWriter(c.Out), c.palette(), order, totals, c.Output == "json", live, time.Now)
}

func newRunView(out io.Writer, pal palette, order []string, totals map[string]int, quiet, live bool, now func() time.Time) *runView {
	v := &runView{out: out, pal: pal, quiet: quiet, live: live && !quiet, now: now, tasks: map[string]*runTaskProgress{}, width: 12}
	for _, name := range order {
		v.task(name)
	}
	for name, n := range totals {
		v.task(name).total = n
	}
	if v.live {
		v.stopCh = make(chan struct{})
		v.wg.Add(1)
		go v.tick()
	}
	return v
}

// task returns the model's line, adding it (total unknown) when new.
func (v *runView) task(model string) *runTaskProgress {
	t, ok := v.tasks[model]
	if !ok {
		t = &runTaskProgress{model: model, total: -1}
		v.tasks[model] = t
		v.order = append(v.order, model)
		v.width = min(max(v.width, lipgloss.Width(model)), 32)
	}
	return t
}

// executor wraps exec so the view learns when a task's first unit starts.
// An exec that records units applied itself (the data executor: a unit's
// rows and its applied state in one transaction) stays one: a wrapper that
// hid it would make the run record sql and query units in a second
// transaction, after their data had committed.
func (v *runView) executor(exec executor.Executor) executor.Executor {
	o := &runObservedExecutor{Executor: exec, started: v.started}
	if a, ok := exec.(executor.Applier); ok {
		return &runObservedApplier{runObservedExecutor: o, applier: a}
	}
	return o
}

type runObservedApplier struct {
	*runObservedExecutor
	applier executor.Applier
}

func (o *runObservedApplier) AppliesItself(m *spec.Model) bool { return o.applier.AppliesItself(m) }

func (o *runObservedApplier) ExecuteAndApply(ctx context.Context, u executor.UnitRun, c state.Claim, at time.Time) (executor.Result, error) {
	if u.Model != nil {
		o.started(u.Model.Name)
	}
	return o.applier.ExecuteAndApply(ctx, u, c, at)
}

type runObservedExecutor struct {
	executor.Executor
	started func(model string)
}

func (o *runObservedExecutor) Execute(ctx context.Context, u executor.UnitRun) (executor.Result, error) {
	if u.Model != nil {
		o.started(u.Model.Name)
	}
	return o.Executor.Execute(ctx, u)
}

func (v *runView) started(model string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	t := v.task(model)
	if t.started.IsZero() {
		t.started = v.now()
		v.dirty = true
	}
}

// update takes one Progress report from the engine.
func (v *runView) update(p engine.Progress) {
	v.mu.Lock()
	defer v.mu.Unlock()
	t := v.task(p.Model)
	if t.done {
		return
	}
	now := v.now()
	if t.started.IsZero() {
		t.started = now
	}
	t.applied, t.blocked, t.failed = p.Applied, p.Blocked, p.Failed
	v.dirty = true
	if !p.Done {
		return
	}
	t.done, t.finished, t.status = true, now, p.Status.String()
	if v.quiet {
		return
	}
	if !v.live {
		fmt.Fprintln(v.out, v.line(t))
		return
	}
	v.redraw()
}

// line is a task's progress line: model, status, units done/planned,
// blocked, failed, elapsed.
func (v *runView) line(t *runTaskProgress) string {
	done := t.applied + t.blocked + t.failed
	total := "?"
	if t.total >= 0 {
		total = fmt.Sprint(max(t.total, done))
	}
	status := "running"
	if t.done {
		status = t.status
	}
	var elapsed time.Duration
	switch {
	case t.started.IsZero():
	case t.done:
		elapsed = t.finished.Sub(t.started)
	default:
		elapsed = v.now().Sub(t.started)
	}
	name := t.model
	if lipgloss.Width(name) > v.width {
		name = string([]rune(name)[:v.width-1]) + "…"
	}
	pad := strings.Repeat(" ", max(0, v.width-lipgloss.Width(name)))
	return fmt.Sprintf("%s%s  %s%s  %d/%s units  blocked %d  failed %d  %s", name, pad, v.pal.status(status),
		strings.Repeat(" ", max(0, len("SUCCESS")-len(status))), done, total, t.blocked, t.failed, elapsed.Round(100*time.Millisecond))
}

// redraw erases the live block, prints the tasks finished since the last
// redraw as permanent lines, and draws the running tasks and the footer.
func (v *runView) redraw() {
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dF\x1b[J", v.drawn) // to the block's first line, erase down
	}
	var running []*runTaskProgress
	finished := 0
	for _, name := range v.order {
		t := v.tasks[name]
		switch {
		case t.done && t.status != "":
			finished++
			if !t.printed {
				b.WriteString(v.line(t) + "\n")
				t.printed = true
			}
		case !t.started.IsZero():
			running = append(running, t)
		}
	}
	// The live lines must take one screen row each for the erase above to
	// hold, so auto-wrap is off while they are written: an overlong line is
	// cut at the terminal's edge instead of wrapping.
	b.WriteString("\x1b[?7l")
	for _, t := range running {
		b.WriteString(v.line(t) + "\n")
	}
	fmt.Fprintf(&b, "%d of %d task(s) finished\n", finished, len(v.order))
	b.WriteString("\x1b[?7h")
	v.drawn = len(running) + 1
	v.dirty = false
	io.WriteString(v.out, b.String())
}

// tick redraws the live block while the run goes on: on news, and at least
// once a second for the elapsed times.
func (v *runView) tick() {
	defer v.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	last := time.Time{}
	for {
		select {
		case <-v.stopCh:
			return
		case now := <-t.C:
			v.mu.Lock()
			if v.dirty || now.Sub(last) >= time.Second {
				v.redraw()
				last = now
			}
			v.mu.Unlock()
		}
	}
}

// stop ends the live block: it is erased, leaving the finished tasks'
// lines, so the summary follows them.
func (v *runView) stop() {
	if !v.live {
		return
	}
	close(v.stopCh)
	v.wg.Wait()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.redraw()
	if v.drawn > 0 {
		fmt.Fprintf(v.out, "\x1b[%dF\x1b[J", v.drawn)
		v.drawn = 0
	}
}
