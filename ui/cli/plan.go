package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/untrusted"
	"github.com/spf13/pflag"
)

func init() {
	var f runFlags
	register(&command{
		name:    "plan",
		args:    "[MODEL…]",
		summary: "show what a run with the same flags would change, changing nothing",
		globals: append(storeGlobals, gAsOf),
		long: `plan works out what 'bollhav run' with the same models and flags would do to
the state store — per model, the units it would create (prefill), reset to
pending, delete or uncover, and the units it would run — and changes nothing
(it works with --read-only). --as-of plans as of another time: the contract
range, and so what is created, ends at the last window complete by then.

A run also registers the spec first (REGISTER in the table) and returns
units whose lease expired to pending before planning; plan does neither.

--outdated plans 'bollhav run --outdated': per model with any, its applied
units built under an earlier definition (RESET and OUTDATED count them),
reset to pending and run in bulldozer mode; models without any are left out
unless named. With --downstream, also the applied units downstream built on
outdated windows (NOTE and built_on_outdated count them), by model.

Text: one row per model and the warnings (a bulldozer without a window runs as
discover, an interval override ignored on a fixed model, a window outside the
contract range, …). Windows print as RFC 3339 UTC spans.

JSON (-o json):
  {"env": "", "state_mode": "bulldozer", "as_of": "2026-03-01T12:00:00Z",
   "window": ["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"],
   "interval_override": null, "outdated": false,
   "models": [{
     "name": "raw.orders", "temporality": "temporal", "flexibility": "fix",
     "mode": "bulldozer", "chunk": "1h",
     "window": ["…", "…"], "contract_range": ["…", "…"],
     "register": false, "migrate": null,
     "created": 0, "reset": 24, "deleted": 0, "to_run": 24, "outdated": 0,
     "built_on_outdated": 0, "state": true,
     "created_windows": [], "reset_windows": [["…", "…"]],
     "deleted_windows": [], "to_run_windows": [["…", "…"]],
     "warnings": []}]}
created, reset and to_run count units; deleted counts the units a torch
deletes (fixed, timeless) or that uncovering deletes, trims or splits
(flexible). The *_windows lists are those units merged into gap-free spans
[since, until) (deleted_windows: the span they lie in); a timeless model's one
existence row has no window, so its lists stay empty while its counts are 1.
mode is the effective mode (bulldozer without a window runs as discover);
window is null without one; chunk is the grain units are cut at ("" when
timeless); contract_range is null when empty; migrate, under torch, is
{"registered", "defined", "units"} for a fixed model whose grain changes;
outdated (a model's) counts the outdated units an --outdated plan rebuilds,
built_on_outdated the units built on outdated windows it rebuilds
(--downstream). state is false for a model that keeps no state (state: false):
no unit of it is planned (only units an older bollhav kept are deleted), and
its task runs its work once, without a unit.`,
		examples: []string{
			"bollhav plan raw.orders --since 2026-01-01 --until 2026-01-02",
			"bollhav plan --pipeline core --mode discover",
			"bollhav plan raw.orders --mode torch --interval-override 1d -o json",
			"STATE_MODE=torch bollhav plan stage.events --env pr123",
			"bollhav plan --outdated",
		},
		flags:       func(fs *pflag.FlagSet) { f.register(fs, false) },
		run:         func(c *cmdContext, args []string) int { return runPlan(c, args, &f) },
		memoryLimit: batchMemoryLimit,
	})
}

func runPlan(c *cmdContext, args []string, f *runFlags) int {
	const cmd = "plan"
	req, err := f.request(c, args)
	if err != nil {
		return c.runUsageLine(cmd, "%v", err)
	}
	ctx := c.ctx
	e, closeStore, code := c.openEngine(ctx, cmd)
	if e == nil {
		return code
	}
	defer closeStore()
	// --as-of is the engine's clock already (openStore).
	plan, err := e.Plan(ctx, req)
	if err != nil {
		c.runErrLines(cmd, err)
		return ExitUsage
	}
	if c.Output == "json" {
		writeJSON(c.Out, planToJSON(plan))
		return ExitOK
	}
	printPlanText(c.Out, plan)
	return ExitOK
}

type planJSON struct {
	Env              string          `json:"env"`
	StateMode        string          `json:"state_mode"`
	AsOf             string          `json:"as_of"`
	Window           *[2]string      `json:"window"`
	IntervalOverride *string         `json:"interval_override"`
	Outdated         bool            `json:"outdated"`
	Models           []planModelJSON `json:"models"`
}

type planModelJSON struct {
	Name           string           `json:"name"`
	Temporality    string           `json:"temporality"`
	Flexibility    string           `json:"flexibility,omitempty"`
	Mode           string           `json:"mode"`
	Chunk          string           `json:"chunk"`
	Window         *[2]string       `json:"window"`
	ContractRange  *[2]string       `json:"contract_range"`
	Register       bool             `json:"register"`
	Migrate        *planMigrateJSON `json:"migrate"`
	Created        int              `json:"created"`
	Reset          int              `json:"reset"`
	Deleted        int              `json:"deleted"`
	ToRun          int              `json:"to_run"`
	Outdated       int              `json:"outdated"`
	BuiltOn        int              `json:"built_on_outdated"`
	State          bool             `json:"state"`
	CreatedWindows [][2]string      `json:"created_windows"`
	ResetWindows   [][2]string      `json:"reset_windows"`
	DeletedWindows [][2]string      `json:"deleted_windows"`
	ToRunWindows   [][2]string      `json:"to_run_windows"`
	Warnings       []string         `json:"warnings"`
}

type planMigrateJSON struct {
	Registered string `json:"registered"`
	Defined    string `json:"defined"`
	Units      int    `json:"units"`
}

func planWindowJSON(w *state.Window) *[2]string {
	if w == nil || w.Empty() {
		return nil
	}
	return &[2]string{state.FormatTime(w.Since), state.FormatTime(w.Until)}
}

func planToJSON(p *engine.Plan) planJSON {
	out := planJSON{Env: p.Env, StateMode: p.Mode.String(), AsOf: state.FormatTime(p.Now), Window: planWindowJSON(p.Request.Window),
		Models: []planModelJSON{}, Outdated: p.Request.Outdated}
	if iv := p.Request.IntervalOverride; iv != nil {
		s := iv.String()
		out.IntervalOverride = &s
	}
	for _, mp := range p.Models {
		m := planModelJSON{
			Name: mp.Model, Temporality: mp.Temporality.String(), Mode: mp.Mode.String(),
			Window: planWindowJSON(mp.Window), Register: mp.Register,
			Created: mp.Create.Len(), Reset: mp.Reset.Len(), Deleted: planDeleted(mp), ToRun: mp.Run.Len(),
			CreatedWindows: planSpansJSON(mp.Create.Spans()), ResetWindows: planSpansJSON(mp.Reset.Spans()),
			DeletedWindows: planSpansJSON(engine.SpansOf(planDeletedWindows(mp))), ToRunWindows: planSpansJSON(mp.Run.Spans()),
			Warnings: append([]string{}, mp.Warnings...), State: !mp.Stateless,
		}
		if mp.Temporality == spec.Temporal {
			m.Flexibility = mp.Flexibility.String()
			m.Chunk = mp.Chunk.String()
			m.ContractRange = planWindowJSON(&mp.ContractRange)
		}
		if g := mp.Migrate; g != nil {
			m.Migrate = &planMigrateJSON{Registered: g.Registered, Defined: g.Defined, Units: g.Units}
		}
		if mp.Outdated {
			m.Outdated, m.BuiltOn = mp.OutdatedUnits, mp.BuiltOnOutdated
		}
		out.Models = append(out.Models, m)
	}
	return out
}

// planDeleted counts the units a model's plan deletes or uncovers.
func planDeleted(mp engine.ModelPlan) int {
	n := 0
	if mp.Delete != nil {
		n += mp.Delete.Count
	}
	if mp.Uncovered != nil {
		n += mp.Uncovered.Count
	}
	return n
}

// planDeletedWindows is where a model's deleted or uncovered units lie: the hull
// of the deleted units, and each uncovered window (everything, as the hull
// of the units touched, for a torch).
func planDeletedWindows(mp engine.ModelPlan) []state.Window {
	var out []state.Window
	if mp.Delete != nil {
		out = append(out, mp.Delete.Hull)
	}
	for _, w := range mp.Uncover {
		if w.Empty() && mp.Uncovered != nil {
			w = mp.Uncovered.Hull
		}
		if mp.Uncovered != nil {
			// Uncovering trims the units that cross the window's edges, so
			// what changes is the window clipped to the units touched.
			h := mp.Uncovered.Hull
			if h.Since.After(w.Since) {
				w.Since = h.Since
			}
			if h.Until.Before(w.Until) {
				w.Until = h.Until
			}
		}
		out = append(out, w)
	}
	return out
}

// planSpansJSON writes spans (from engine.SpansOf or Windows.Spans) as pairs of times.
func planSpansJSON(spans []state.Window) [][2]string {
	out := [][2]string{}
	for _, w := range spans {
		out = append(out, [2]string{state.FormatTime(w.Since), state.FormatTime(w.Until)})
	}
	return out
}

// planSpanText summarises windows for a table cell: the first span and how
// many more there are.
func planSpanText(ws engine.Windows, timeless bool) string {
	if ws.Len() == 0 {
		return "-"
	}
	if timeless {
		return "existence row"
	}
	sp := ws.Spans()
	if len(sp) == 0 {
		return "-"
	}
	s := sp[0].String()
	if len(sp) > 1 {
		s += fmt.Sprintf(" +%d more span(s)", len(sp)-1)
	}
	return s
}

// printPlanText writes the plan as a heading, one table row per model,
// totals and the warnings.
func printPlanText(w io.Writer, p *engine.Plan) {
	head := fmt.Sprintf("plan: %s in %s", p.Mode, spec.Env{Suffix: p.Env})
	if p.Request.Outdated {
		head = fmt.Sprintf("plan: %s of the outdated windows in %s", p.Mode, spec.Env{Suffix: p.Env})
	}
	if win := p.Request.Window; win != nil {
		head += ", window " + win.String()
	} else {
		head += ", no window"
	}
	if iv := p.Request.IntervalOverride; iv != nil {
		head += ", interval override " + iv.String()
	}
	head += ", as of " + state.FormatTime(p.Now)
	fmt.Fprintln(w, head)
	rows := make([][]string, 0, len(p.Models))
	var created, reset, deleted, toRun int
	for _, mp := range p.Models {
		timeless := mp.Temporality == spec.Timeless
		var note []string
		if mp.Register {
			note = append(note, "register")
		}
		if g := mp.Migrate; g != nil {
			note = append(note, fmt.Sprintf("migrate %s → %s", g.Registered, g.Defined))
		}
		if mp.Mode != p.Mode {
			note = append(note, "runs as "+mp.Mode.String())
		}
		if mp.Stateless {
			note = append(note, "no state: its task runs its work, no unit")
		}
		if mp.Outdated {
			note = append(note, fmt.Sprintf("%d outdated", mp.OutdatedUnits))
			if p.Request.Downstream {
				note[len(note)-1] += fmt.Sprintf(", %d built on outdated", mp.BuiltOnOutdated)
			}
		}
		rows = append(rows, []string{mp.Model, strconv.Itoa(mp.Create.Len()), strconv.Itoa(mp.Reset.Len()),
			strconv.Itoa(planDeleted(mp)), strconv.Itoa(mp.Run.Len()), planSpanText(mp.Run, timeless), strings.Join(note, ", ")})
		created, reset, deleted, toRun = created+mp.Create.Len(), reset+mp.Reset.Len(), deleted+planDeleted(mp), toRun+mp.Run.Len()
	}
	printTable(w, []string{"MODEL", "CREATE", "RESET", "DELETE", "RUN", "RUN WINDOWS", "NOTE"}, rows)
	fmt.Fprintf(w, "total: %d model(s); units: %d created, %d reset to pending, %d deleted or uncovered, %d to run\n",
		len(p.Models), created, reset, deleted, toRun)
	if p.Request.Outdated && len(p.Models) == 0 {
		fmt.Fprintln(w, "no outdated windows: every applied unit was built under its model's current definition (or its definition is unknown)")
	}
	if ws := p.Warnings(); len(ws) > 0 {
		fmt.Fprintln(w, "warnings:")
		for _, msg := range ws {
			fmt.Fprintf(w, "  %s\n", untrusted.Line(msg))
		}
	}
}
