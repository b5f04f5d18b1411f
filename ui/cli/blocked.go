package cli

import (
	gocontext "context"
	"fmt"
	"strconv"
	"strings"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/untrusted"
	"github.com/spf13/pflag"
)

func init() {
	var (
		model, pipeline string
		recheck         bool
	)
	register(triageRead(&command{
		name:    "blocked",
		summary: "every blocked unit with its reason, what holds the most first",
		globals: append(storeGlobals, gAsOf),
		long: `blocked lists the units whose last gate evaluation blocked them, with their
blocked_reason and what each holds: how many units downstream (directly or through
other models, along gated edges) wait on them — units of downstream models that
are not applied and whose window the blocked unit's window reaches (overlaps it
across EXACT and ENCAPSULATE, ends after it begins across THROUGH, every unit
across WHOLE and of a timeless model). What holds the most first, then by model
and since. Use 'bollhav why MODEL --at TIME' on one of them for its root cause.

A blocked reason dates from the last time a run tried the unit. --recheck
judges the gate of every unit that is not applied as of now (or --as-of),
changing nothing, and counts them per model: ready (it would run if claimed;
"released" are those stored blocked whose upstreams caught up), waiting on an
upstream (a missing range, or an after: edge that does not hold), outdated
(nothing is missing, but a require_current contract reads windows applied
under an earlier definition: 'run --outdated' rebuilds them), stale (only a
freshness limit fails) and failing on a hard gate error.`,
		examples: []string{
			"bollhav blocked",
			"bollhav blocked --pipeline core",
			"bollhav blocked --model warehouse.daily_orders -o json | jq '.units[0]'",
			"bollhav blocked --recheck",
		},
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&model, "model", "", "only this model's blocked units")
			fs.StringVar(&pipeline, "pipeline", "", "only the blocked units of this pipeline's models")
			fs.BoolVar(&recheck, "recheck", false, "judge the gate of every unit that is not applied now, per model")
		},
		run: func(c *cmdContext, args []string) int {
			if len(args) > 0 {
				return c.fail("blocked", &usageError{fmt.Sprintf("unexpected argument %q (use --model MODEL)", args[0])})
			}
			return c.withEngine("blocked", nil, func(ctx gocontext.Context, e *engine.Engine) int {
				filter := gate.BlockedFilter{Model: model, Pipeline: pipeline}
				if recheck {
					return runRecheck(ctx, c, e, filter)
				}
				return runBlocked(ctx, c, e, filter)
			})
		},
	}))
}

type blockedJSON struct {
	Units []blockedUnitJSON `json:"units"`
}

type blockedUnitJSON struct {
	unitRefJSON
	Reason string `json:"reason"`
	// Reasons is Reason structured, one entry per upstream or edge.
	Reasons  []reasonJSON `json:"reasons"`
	Holds    int          `json:"holds"`
	Pipeline string       `json:"pipeline"`
	Attempts int          `json:"attempts"`
}

// runBlocked prints the blocked units a page at a time (blocked_stream.go):
// the first page, ranked exactly, before the rest is read.
func runBlocked(ctx gocontext.Context, c *cmdContext, e *engine.Engine, filter gate.BlockedFilter) int {
	p := &blockedPrinter{w: c.Out, json: c.Output == "json"}
	if err := e.BlockedPages(ctx, filter, blockedPageSize, p.page); err != nil {
		fmt.Fprintf(c.Err, "bollhav blocked: %s\n", oneLine(err.Error()))
		return ExitUsage
	}
	p.end()
	return ExitOK
}

// blockedRow is a blocked unit as a row of the table.
func blockedRow(u gate.BlockedUnit) []string {
	since, until := "-", "-"
	if s, un := whyWindowJSON(u.Window); s != nil {
		since, until = *s, *un
	}
	return []string{untrusted.Line(u.Model), since, until, strconv.Itoa(u.Holds), oneLine(u.Reason)}
}

// blockedHeader is the table's header.
var blockedHeader = []string{"MODEL", "SINCE", "UNTIL", "HOLDS", "REASON"}

// blockedUnitOf is a blocked unit as `blocked -o json` gives it.
func blockedUnitOf(u gate.BlockedUnit) blockedUnitJSON {
	return blockedUnitJSON{unitRefJSON: unitRef(u.Model, u.Window),
		Reason: u.Reason, Reasons: reasonsJSON(u.Reason), Holds: u.Holds, Pipeline: u.Pipeline, Attempts: u.Attempts}
}

type recheckJSON struct {
	AsOf   string             `json:"as_of"`
	Models []recheckModelJSON `json:"models"`
}

type recheckModelJSON struct {
	Model       string `json:"model"`
	Pipeline    string `json:"pipeline"`
	Outstanding int    `json:"outstanding"`
	Ready       int    `json:"ready"`
	Released    int    `json:"released"`
	Waiting     int    `json:"waiting"`
	Outdated    int    `json:"outdated"`
	Stale       int    `json:"stale"`
	Errors      int    `json:"errors"`
}

// recheckModels is rep's models as `blocked --recheck -o json` gives them.
func recheckModels(rep *gate.SweepReport) []recheckModelJSON {
	out := []recheckModelJSON{}
	for _, m := range rep.Models {
		out = append(out, recheckModelJSON{Model: m.Model, Pipeline: m.Pipeline, Outstanding: m.Outstanding,
			Ready: m.Ready, Released: m.Released, Waiting: m.Waiting, Outdated: m.Outdated, Stale: m.Stale, Errors: m.Errors})
	}
	return out
}

// heldParts says what holds a model's held units, as --recheck counts
// them: "2 waiting on an upstream, 1 stale".
func heldParts(m gate.ModelReadiness) string {
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{m.Waiting, "waiting on an upstream"}, {m.Outdated, "on an outdated upstream"}, {m.Stale, "stale"}, {m.Errors, "failing the gate"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	return strings.Join(parts, ", ")
}

// runRecheck is `blocked --recheck`: the verdicts of the live gate index
// (engine.Recheck) — what the UI's Blocked view and `serve` keep current
// from the change feed — per model. Built here from one full read, it says
// what a full sweep says, unit for unit.
func runRecheck(ctx gocontext.Context, c *cmdContext, e *engine.Engine, filter gate.BlockedFilter) int {
	rep, err := e.Recheck(ctx, filter)
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav blocked: %s\n", oneLine(err.Error()))
		return ExitUsage
	}
	if c.Output == "json" {
		writeJSON(c.Out, recheckJSON{AsOf: state.FormatTime(rep.Now), Models: recheckModels(rep)})
		return ExitOK
	}
	if len(rep.Models) == 0 {
		fmt.Fprintln(c.Out, "every unit is applied")
		return ExitOK
	}
	var total gate.ModelReadiness
	rows := make([][]string, 0, len(rep.Models))
	for _, m := range rep.Models {
		rows = append(rows, []string{untrusted.Line(m.Model), untrusted.Line(m.Pipeline), strconv.Itoa(m.Outstanding), strconv.Itoa(m.Ready), strconv.Itoa(m.Released),
			strconv.Itoa(m.Waiting), strconv.Itoa(m.Outdated), strconv.Itoa(m.Stale), strconv.Itoa(m.Errors)})
		total.Ready += m.Ready
		total.Released += m.Released
		total.Waiting += m.Waiting
		total.Outdated += m.Outdated
		total.Stale += m.Stale
		total.Errors += m.Errors
	}
	printTable(c.Out, []string{"MODEL", "PIPELINE", "NOT APPLIED", "READY", "RELEASED", "WAITING", "OUTDATED", "STALE", "ERRORS"}, rows)
	fmt.Fprintf(c.Out, "%d unit%s not applied as of %s: %d ready (%d of them blocked, now released), %d waiting on an upstream, %d on an outdated upstream, %d stale, %d failing the gate\n",
		rep.Units, plural(rep.Units), state.FormatTime(rep.Now), total.Ready, total.Released, total.Waiting, total.Outdated, total.Stale, total.Errors)
	return ExitOK
}
