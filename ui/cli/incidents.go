package cli

import (
	gocontext "context"
	"fmt"
	"io"
	"strings"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/untrusted"
	"github.com/spf13/pflag"
)

func init() {
	register(triageRead(&command{
		name:    "incidents",
		summary: "what is broken, one row per root cause: failures first, then by units held",
		globals: append(storeGlobals, gAsOf),
		long: `incidents groups everything failed, blocked or stale into root causes: the
failed (or retrying) units of one model are one incident however many windows
failed; every blocked unit is walked upstream, as 'why' walks it, to the unit
that holds it back, and counted on that root: a failed unit, a stale applied
row, an upstream window not loaded yet (missing), a hard gate error, or, when
no upstream unit can be named, its own blocked reason. Units stored blocked
whose gate is satisfied now are one incident of kind released: the next run
applies them.

Each incident shows its age (since its oldest root unit or blocked unit last
changed; for failed units, since they began failing, whatever retries came
after), the one line to read first (the newest error, the stale verdict),
the next retry when its units wait for one, the blocked units it holds (with
how many it alone holds, when another root holds some too). Failures first
(failed units, gate errors, and outdated rows a contract waits on: no load
heals them), then by units held. Each ends with the 'why' command that
explains the blocked unit behind it that holds the most.

With -o json:
  {"as_of","incidents":[{"kind","model","pipeline","since","until","units",
    "started_at","age_seconds","detail","retry":{"try","of","at","ended_run"},
    "blocked_units","releases","blocked_models":[],"focus":{"model","at"}}],
   "untraced","held","recheck":{"held","models":[]}}
kind is failed, gate_error, stale, outdated, missing, blocked or released;
since/until are the root units' first..last bounds (null when timeless);
retry, null unless a unit waits for one, is the soonest: the next try, the
model's retry.attempts and the not-before time; focus.at is null for a
timeless model.
blocked_units counts the blocked units an incident holds (a unit held by two
roots counts under both) and releases those it alone holds: fixing it alone
releases them; held counts the blocked units held, each once.
untraced counts blocked units past the first 500 (by holds) whose model had
no traced unit.

With no incident it says "all clear" only when 'blocked --recheck' finds no
unit held (not applied, and not run if asked now); otherwise it lists the
held units by model — an alert that did not fire, units re-queued while their
upstream is not loaded. recheck (null when there is an incident) gives those
counts: held, and the models as 'blocked --recheck -o json' gives them.
The exit status is 0 whether or not anything is wrong.`,
		examples: []string{
			"bollhav incidents",
			"bollhav incidents -o json | jq '.incidents[0]'",
		},
		flags: func(*pflag.FlagSet) {},
		run:   runIncidents,
	}))
}

type incidentsJSON struct {
	AsOf      string         `json:"as_of"`
	Incidents []incidentJSON `json:"incidents"`
	Untraced  int            `json:"untraced"`
	Held      int            `json:"held"`
	// Recheck is set when no incident was found: what blocked --recheck
	// reports, held counting its units that are not ready.
	Recheck *incidentsRecheckJSON `json:"recheck"`
}

type incidentsRecheckJSON struct {
	Held   int                `json:"held"`
	Models []recheckModelJSON `json:"models"`
}

type incidentJSON struct {
	Kind          string     `json:"kind"`
	Model         string     `json:"model"`
	Pipeline      string     `json:"pipeline"`
	Since         *string    `json:"since"`
	Until         *string    `json:"until"`
	Units         int        `json:"units"`
	StartedAt     *string    `json:"started_at"`
	AgeSeconds    int64      `json:"age_seconds"`
	Detail        string     `json:"detail"`
	Retry         *retryJSON `json:"retry"`
	BlockedUnits  int        `json:"blocked_units"`
	Releases      int        `json:"releases"`
	BlockedModels []string   `json:"blocked_models"`
	Focus         focusJSON  `json:"focus"`
}

type focusJSON struct {
	Model string  `json:"model"`
	At    *string `json:"at"`
}

func runIncidents(c *cmdContext, args []string) int {
	return c.withEngine("incidents", args, func(ctx gocontext.Context, e *engine.Engine) int {
		rep, err := e.Incidents(ctx)
		if err != nil {
			fmt.Fprintf(c.Err, "bollhav incidents: %s\n", oneLine(err.Error()))
			return ExitUsage
		}
		if c.Output == "json" {
			writeJSON(c.Out, incidentsToJSON(rep))
			return ExitOK
		}
		printIncidents(c.Out, rep, e.Env().String(), e.Env().Suffix)
		return ExitOK
	})
}

func incidentsToJSON(rep *gate.IncidentReport) incidentsJSON {
	out := incidentsJSON{AsOf: state.FormatTime(rep.Now), Incidents: []incidentJSON{}, Untraced: rep.Untraced, Held: rep.Held}
	if rep.Recheck != nil {
		out.Recheck = &incidentsRecheckJSON{Held: rep.Recheck.Held(), Models: recheckModels(rep.Recheck)}
	}
	for _, inc := range rep.Incidents {
		j := incidentJSON{Kind: string(inc.Kind), Model: inc.Model, Pipeline: inc.Pipeline, Units: inc.Units,
			StartedAt: rfcOrNull(&inc.Since), Detail: inc.Detail, BlockedUnits: inc.Blocked, Releases: inc.Releases,
			BlockedModels: append([]string{}, inc.BlockedModels...),
			Focus:         focusJSON{Model: inc.Focus.Model}}
		if !inc.Since.IsZero() {
			j.AgeSeconds = int64(rep.Now.Sub(inc.Since).Seconds())
		}
		j.Since, j.Until = whyWindowJSON(inc.Span)
		if !inc.Focus.Window.IsZero() {
			at := state.FormatTime(inc.Focus.Window.Since)
			j.Focus.At = &at
		}
		j.Retry = retryToJSON(inc.Retry)
		out.Incidents = append(out.Incidents, j)
	}
	return out
}

// printIncidents prints each incident as a short card: what the operator
// reads, then what waits on it, then the command that explains it.
// suffix is the environment's schema suffix, which the why command it
// names must carry too.
func printIncidents(w io.Writer, rep *gate.IncidentReport, env, suffix string) {
	if rep.AllClear() {
		fmt.Fprintf(w, "all clear: nothing failed, blocked or stale in %s as of %s\n", env, state.FormatTime(rep.Now))
		return
	}
	if len(rep.Incidents) == 0 && rep.Untraced == 0 && rep.Recheck != nil {
		// Held units no incident names: an alert that did not fire, units
		// re-queued behind an upstream not loaded.
		n := rep.Recheck.Held()
		fmt.Fprintf(w, "no incident in %s as of %s, but %d unit%s %s held (not applied, and would not run if asked now):\n",
			env, state.FormatTime(rep.Now), n, plural(n), map[bool]string{true: "is", false: "are"}[n == 1])
		width := 0
		for _, m := range rep.Recheck.Models {
			if m.Held() > 0 {
				width = max(width, len(m.Model))
			}
		}
		for _, m := range rep.Recheck.Models {
			if m.Held() > 0 {
				fmt.Fprintf(w, "  %-*s  %s\n", width, untrusted.Line(m.Model), heldParts(m))
			}
		}
		fmt.Fprintln(w, "'bollhav blocked --recheck' counts them by model, 'bollhav why MODEL --at TIME' explains one")
		return
	}
	for i, inc := range rep.Incidents {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%d. %s\n", i+1, untrusted.Line(inc.Title(rep.Now)))
		for line := range strings.SplitSeq(inc.Detail, "\n") {
			if line != "" {
				fmt.Fprintf(w, "   %s\n", untrusted.Line(line))
			}
		}
		if inc.Retry != nil {
			fmt.Fprintf(w, "   %s\n", inc.Retry.Line(state.FormatTime))
		}
		fmt.Fprintf(w, "   %s\n", untrusted.Line(inc.HoldsText()))
		fmt.Fprintf(w, "   explain: %s\n", untrusted.Line(whyCommand(inc.Focus, suffix)))
	}
	if rep.Untraced > 0 {
		fmt.Fprintf(w, "\n%d more blocked unit%s not traced (past the first %d by holds): see 'bollhav blocked'\n",
			rep.Untraced, plural(rep.Untraced), gate.MaxTracedBlocked)
	}
}

// whyCommand is the command that explains a unit of the environment of
// suffix (gate.UnitRef.WhyCommand, which the UI copies too).
func whyCommand(u gate.UnitRef, suffix string) string { return u.WhyCommand(suffix) }
