package cli

import (
	gocontext "context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/spf13/pflag"
)

func init() {
	var f demoFlags
	register(&command{
		name:    "demo",
		summary: "build and run a demo shop project in ./bollhav-demo, then open the UI",
		globals: []string{gTheme, gAsOf},
		long: `demo creates ./bollhav-demo (a spec, scripts, landing CSV files and the embedded
SQLite store, which also holds the models' data) and runs a small web shop's
pipelines in it: ingest (orders, payments, clicks, an alert on failure), core
(order facts, daily revenue, customers) and reporting (daily KPIs, monthly
revenue). The payment provider was down for one hour, so that unit fails and
everything that needs it is blocked; click data loaded hours ago makes some
KPI days stale; a dev environment (--env dev) holds a copy of one model.

The outage lasts until scripts/outage in the folder is removed: then the
provider is back, and the failed hour loads when it runs again — from the UI
(r on its incident, d for what waits downstream, y), or with mark and run as
the demo prints. A rerun of demo does not bring the outage back.

--as-of TIME tells the story as of TIME instead of now (a new folder's
timeline follows it), so a demo made on any day has the same dates; the UI
it opens then is read-only, as every --as-of UI is.

The demo runs on SQLite only: its SQL is SQLite's, and its data lives in
the embedded store's file. examples/shop runs on PostgreSQL.

The first run seeds the store in two passes (one as of two hours before
midnight, one now) and one dev run. A rerun reuses the folder: it catches up
to the current time. Then it opens the UI; --no-ui stops after seeding and
prints what to try next.`,
		examples: []string{
			"bollhav demo",
			"bollhav demo --no-ui",
			"bollhav demo --dir /tmp/shop --no-ui",
		},
		flags: func(fs *pflag.FlagSet) {
			f = demoFlags{}
			fs.StringVar(&f.dir, "dir", "bollhav-demo", "the demo project's folder")
			fs.BoolVar(&f.noUI, "no-ui", false, "stop after seeding and print what to try next")
		},
		run: func(c *cmdContext, args []string) int { return runDemo(c, f, args) },
		// Its runs and its UI stop on a signal as run's and ui's do.
		ownsSignals: true,
	})
}

type demoFlags struct {
	dir  string
	noUI bool
}

// demoUI opens the UI on the seeded demo; it is set by the UI's command so
// that demo does not depend on it directly. Nil: no UI is built in.
var demoUI func(c *cmdContext, e *engine.Engine) int

func runDemo(c *cmdContext, f demoFlags, args []string) int {
	switch {
	case len(args) > 0:
		return c.fail("demo", &usageError{fmt.Sprintf("unexpected argument %q", args[0])})
	case c.flagGiven("dsn"):
		return c.fail("demo", &usageError{"the demo runs on its own embedded SQLite store only (its SQL is SQLite's, and its data lives in the store's file); drop --dsn. examples/shop runs on PostgreSQL"})
	case c.flagGiven("spec"):
		return c.fail("demo", &usageError{"the demo writes its own spec; use --dir to choose its folder"})
	case c.ReadOnly:
		return c.fail("demo", &usageError{"the demo writes its project and runs it; drop --read-only"})
	}
	ctx := c.ctx
	now := time.Now().UTC().Truncate(time.Second)
	if c.AsOf != "" {
		// A demo whose story is told as of a fixed instant: the same
		// dates on every day it is made (the UI's golden screens, the
		// captures in docs/ui.md). checkGlobals has parsed it already.
		at, _ := state.ParseTime(c.AsOf)
		now = at.UTC().Truncate(time.Second)
	}
	clock, rerun := readDemoClock(f.dir)
	if !rerun {
		clock = newDemoClock(now)
	}
	if err := writeDemoProject(f.dir, clock); err != nil {
		fmt.Fprintf(c.Err, "bollhav demo: writing %s: %v\n", f.dir, err)
		return ExitUsage
	}
	if err := writeLandingFiles(f.dir, clock.HourlyStart, now); err != nil {
		fmt.Fprintf(c.Err, "bollhav demo: %v\n", err)
		return ExitUsage
	}
	c.Spec = filepath.Join(f.dir, "bollhav.yaml")
	c.DSN = filepath.Join(f.dir, ".bollhav", "state.db")
	c.given["dsn"], c.given["env"] = true, true
	c.Env = ""
	o, sp, code := c.openSpecStore(ctx, "demo")
	if o == nil {
		return code
	}
	defer o.close()
	// The story's engines: each run is as of its own instant, the summary
	// as of now, and the UI, at the end, follows the store live, as of the
	// wall clock (e).
	asOf := func(at time.Time) *engine.Engine {
		opts := o.opts
		opts.Now = func() time.Time { return at }
		return engine.New(o.store, sp, opts)
	}
	e := o.engine(sp)
	runs, err := e.Runs(ctx, 1) // the demo engine is prod's (--env "")
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav demo: %v\n", err)
		return ExitUsage
	}
	out := colorWriter(c.Out)
	if len(runs) == 0 {
		fmt.Fprintf(out, "Seeding the demo shop in %s (embedded store %s)\n", f.dir, c.DSN)
		err = seedDemo(ctx, c, asOf, clock, now)
	} else {
		fmt.Fprintf(out, "Catching the demo shop in %s up to now\n", f.dir)
		err = demoRun(ctx, c, asOf(now), "everything as of now", engine.RunRequest{Mode: spec.Discover})
	}
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav demo: %v\n", err)
		return ExitUsage
	}
	if err := printDemoSummary(ctx, c, asOf(now), f.dir, clock); err != nil {
		fmt.Fprintf(c.Err, "bollhav demo: %v\n", err)
		return ExitUsage
	}
	if f.noUI {
		return ExitOK
	}
	if demoUI == nil || !uiWanted(c.Streams) {
		fmt.Fprintln(c.Out, "\n(not a terminal, so no UI: the commands above are what to try next)")
		return ExitOK
	}
	return demoUI(c, e)
}

// seedDemo gives the store its story: ingest and core run as of two hours
// before midnight (so the payments outage fails and blocks, and clicks are
// loaded then), then everything runs now (the newest clicks are fresh, the
// older KPI days are stale), then one dev run of core.order_facts. asOf
// is the demo's engine with its clock at an instant.
func seedDemo(ctx gocontext.Context, c *cmdContext, asOf func(time.Time) *engine.Engine, clock demoClock, now time.Time) error {
	earlier := now.Truncate(24 * time.Hour).Add(-2 * time.Hour)
	var first []string
	for _, m := range asOf(now).Spec().Models {
		if m.Pipeline == "ingest" || m.Pipeline == "core" {
			first = append(first, m.Name)
		}
	}
	steps := []struct {
		what string
		at   time.Time
		env  string
		req  engine.RunRequest
	}{
		{"ingest + core as of " + earlier.Format("Jan 2 15:04") + " UTC", earlier, "", engine.RunRequest{Models: first, Mode: spec.Discover}},
		{"everything as of now", now, "", engine.RunRequest{Mode: spec.Discover}},
	}
	for _, s := range steps {
		if err := demoRun(ctx, c, asOf(s.at), s.what, s.req); err != nil {
			return err
		}
	}
	dev, err := spec.ParseEnv("dev")
	if err != nil {
		return err
	}
	yesterday := state.MustWindow(now.Truncate(24*time.Hour).Add(-24*time.Hour), now.Truncate(24*time.Hour))
	return demoRun(ctx, c, asOf(now).InEnv(dev), "dev env: core.order_facts, yesterday",
		engine.RunRequest{Models: []string{"core.order_facts"}, Window: &yesterday, Mode: spec.Discover})
}

// demoRun runs req as of e's clock and prints one line about it. A failed task is
// part of the story, not an error; an error is something that stopped it.
func demoRun(ctx gocontext.Context, c *cmdContext, e *engine.Engine, what string, req engine.RunRequest) error {
	started := time.Now()
	res, err := e.Run(ctx, req, e.Executor(), nil)
	if err != nil {
		return fmt.Errorf("run %s: %w", what, err)
	}
	var applied, blocked, failed int
	var failedTasks []string
	for _, t := range res.Tasks {
		applied, blocked, failed = applied+t.Applied, blocked+t.Blocked, failed+t.Failed
		if t.Outcome() == "FAILED" {
			failedTasks = append(failedTasks, t.Model)
		}
	}
	line := fmt.Sprintf("  run %d  %-36s %5d applied %4d blocked %3d failed  (%s)", res.RunID, what, applied, blocked, failed,
		time.Since(started).Round(100*time.Millisecond))
	if len(failedTasks) > 0 {
		line += "\n         failed: " + strings.Join(failedTasks, ", ")
	}
	fmt.Fprintln(colorWriter(c.Out), line)
	return nil
}

// printDemoSummary prints the store's state per model and the commands to
// try next, with the spec and store of the demo spelled out.
func printDemoSummary(ctx gocontext.Context, c *cmdContext, e *engine.Engine, dir string, clock demoClock) error {
	models, err := e.Status(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.Out)
	var rows [][]string
	pal := c.palette()
	for _, m := range models {
		row := []string{m.Pipeline, m.Name}
		for _, st := range []state.UnitStatus{state.Applied, state.Blocked, state.Failed, state.Pending} {
			cell := fmt.Sprint(m.Counts[st])
			if m.Counts[st] > 0 {
				cell = pal.status(string(st)) + " " + cell
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	printTable(c.Out, []string{"PIPELINE", "MODEL", "APPLIED", "BLOCKED", "FAILED", "PENDING"}, rows)
	sp := filepath.Join(dir, "bollhav.yaml")
	blockedDay := clock.Outage.Truncate(24 * time.Hour).Add(24 * time.Hour)
	bin := "bollhav --spec " + sp
	try := []string{
		bin + " incidents",
		bin + " status",
		bin + " blocked",
		bin + " why core.daily_revenue",
		bin + " units raw.payments --status failed",
		bin + " graph",
		fmt.Sprintf("%s plan core.daily_revenue --mode bulldozer --since %s --until %s", bin,
			blockedDay.Format(time.DateOnly), blockedDay.Add(24*time.Hour).Format(time.DateOnly)),
		bin + " --env dev status",
		bin + " ui",
	}
	fmt.Fprintln(c.Out, "\nTry next:")
	for _, t := range try {
		fmt.Fprintln(c.Out, "  "+t)
	}
	if _, err := os.Stat(filepath.Join(dir, "scripts", "outage")); err == nil {
		hour := state.Window{Since: clock.Outage, Until: clock.Outage.Add(time.Hour)}
		fmt.Fprintln(c.Out, "\nThe payment provider's outage lasts until its marker goes; then re-run the hour and what waits on it")
		fmt.Fprintln(c.Out, "(or, in the UI, r on the payments incident, d for downstream, y):")
		for _, t := range []string{
			"rm " + filepath.Join(dir, "scripts", "outage"),
			fmt.Sprintf("%s mark raw.payments --since %s --until %s --status pending", bin, rfc3339(hour.Since), rfc3339(hour.Until)),
			bin + " run",
		} {
			fmt.Fprintln(c.Out, "  "+t)
		}
	}
	if _, err := exec.LookPath("bollhav"); err != nil {
		fmt.Fprintln(c.Out, "\n(bollhav is not on your PATH: 'go install .' in the repository puts it in $(go env GOPATH)/bin,\n or 'go build -o bollhav .' builds ./bollhav)")
	}
	return nil
}
