package cli

import (
	"errors"
	"fmt"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
	"github.com/spf13/pflag"
)

func init() {
	var since, until, status string
	register(&command{
		name:    "mark",
		args:    "MODEL --since T --until T --status applied|pending",
		summary: "operator repair: set a model's units in a window to applied or pending (audited)",
		globals: append(storeGlobals, gAsOf, gReadOnly),
		long: `mark is the operator's repair. --status applied records that the units of
MODEL inside [since, until) were loaded by hand (their applied_at is now);
--status pending makes them run again. --as-of is refused with --status
applied, since freshness trusts applied_at. Only pending, blocked, failed and
applied units move; running units belong to their worker and are left alone.
A fixed model's window must align to its grid (the error names the nearest
aligned bounds); a flexible model's need not. A timeless model's existence row
is marked without --since/--until. Every mark, refused or not, is written to
the audit log with the operator (BOLLHAV_ACTOR, else $USER@host); with
--read-only it is refused and nothing changes.

With -o json: {"model","since","until","status","changed"} — since and until
are null for a timeless model.`,
		examples: []string{
			"bollhav mark raw.orders --since 2026-01-01T00:00:00Z --until 2026-01-01T06:00:00Z --status applied",
			"bollhav mark warehouse.daily_orders --since 2026-01-01 --until 2026-01-08 --status pending",
			"bollhav mark ref.countries --status applied    # a timeless model",
		},
		flags: func(fs *pflag.FlagSet) {
			since, until, status = "", "", ""
			fs.StringVar(&since, "since", "", "the window's start (RFC 3339 or a date)")
			fs.StringVar(&until, "until", "", "the window's end, exclusive (RFC 3339 or a date)")
			fs.StringVar(&status, "status", "", "applied or pending")
		},
		run: func(c *cmdContext, args []string) int { return runMark(c, args, since, until, status) },
	})
}

type markJSON struct {
	unitRefJSON
	Status  string `json:"status"`
	Changed int    `json:"changed"`
}

func runMark(c *cmdContext, args []string, since, until, statusFlag string) int {
	switch {
	case len(args) == 0:
		return c.fail("mark", &usageError{"name the model: bollhav mark MODEL --since T --until T --status applied|pending"})
	case len(args) > 1:
		return c.fail("mark", &usageError{fmt.Sprintf("unexpected argument %q", args[1])})
	}
	model := args[0]
	bad := func(format string, a ...any) int {
		fmt.Fprintf(c.Err, "bollhav mark: "+format+"\n", a...)
		return ExitUsage
	}
	if statusFlag == "" {
		return bad("--status is required: applied (loaded by hand) or pending (run again)")
	}
	status, err := parseUnitStatus(statusFlag)
	if err != nil || (status != state.Applied && status != state.Pending) {
		return bad("invalid --status %q: an operator marks units applied or pending; the other statuses are the run loop's", statusFlag)
	}
	if status == state.Applied && c.AsOf != "" {
		// applied_at is what freshness ages: a mark backdated (or
		// postdated) with --as-of would make a hand load look fresher or
		// staler than it is, with nothing in the store to tell.
		return bad("--as-of does not apply to mark --status applied: applied_at records when the units were marked, and freshness trusts it; nothing was changed")
	}
	w, err := windowFlags(since, until, c.flagGiven("since"), c.flagGiven("until"), true)
	if err != nil {
		return bad("%v", err)
	}
	ctx := c.ctx
	e, closeStore, code := c.openEngine(ctx, "mark")
	if e == nil {
		return code
	}
	defer closeStore()
	if w.IsZero() && !e.ReadOnly() {
		// No window: only a timeless model's existence row is marked so.
		ms, err := e.ModelStatus(ctx, model)
		if err != nil {
			return bad("%v", err)
		}
		if !ms.Timeless() {
			return bad("model %s is temporal: give the window to mark with --since and --until", model)
		}
	}
	n, err := e.Mark(ctx, model, w, status)
	if err != nil {
		if errors.Is(err, engine.ErrReadOnly) {
			return bad("%v; nothing was changed", err)
		}
		return bad("%v", err)
	}
	if c.Output == "json" {
		writeJSON(c.Out, markJSON{unitRef(model, w), string(status), n})
		return ExitOK
	}
	where := ""
	if !w.IsZero() {
		where = " in " + w.String()
	}
	fmt.Fprintf(c.Out, "marked %d unit%s of %s%s %s (%s)\n", n, plural(n), model, where, status, e.Env())
	return ExitOK
}
