package cli

import (
	"bufio"
	"cmp"
	gocontext "context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/untrusted"
	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/pflag"
)

func init() {
	var since, until string
	var statuses []string
	register(triageRead(&command{
		name:    "units",
		args:    "MODEL",
		summary: "list a model's state rows in window order, optionally narrowed by window and status",
		globals: append(storeGlobals, gTheme),
		long: `units streams MODEL's units (its state rows) in window order, without loading
its history into memory: a fixed model's grid windows, a flexible model's
covered units, or a timeless model's one existence row. --since and --until
keep the units overlapping [since, until); either may be left open. --status
keeps units in the given statuses (repeat it or separate them by commas).

A failed unit waiting for its retry (a model's retry: budget) shows
"retry 2/5 at TIME": the try it makes next, of the model's retry.attempts,
and when. A failed or retrying unit also names the errors of its earlier
failed attempts, newest first with their times (the store keeps a unit's
newest 20; the line names 3, why lists them all).

With -o json:
  {"model","units":[{"since","until","status","applied_at","blocked_reason",
    "attempts","error","not_before","retry","attempt_errors","fingerprint",
    "definition","built_on_outdated"}]}
Timestamps are RFC 3339 UTC; since and until are null for a timeless model's
existence row; applied_at, blocked_reason and error are null when the unit
has none; not_before is when a unit waiting for its retry may run again, and
retry {"try","of","at","ended_run"} the same wait as the text says it, both null
otherwise. attempt_errors lists a failed or pending unit's failed attempts
newest first, [{"number","try","error","at","run_id"}] (try 0: an expired
lease; run_id null: a worker's), and is [] for other units. fingerprint is
the definition an applied unit was built under (16 hex digits; null when it
is not applied or the definition is unknown) and definition says whether that
is the model's current one: "current", "outdated" (built under an earlier
definition; gates still count it applied) or "unknown" (marked applied by an
operator, or applied before bollhav recorded definitions), null when the unit
is not applied. built_on_outdated is true for an applied unit whose gated
upstreams have outdated windows in its reach (or windows built on outdated
ones, through the lineage): it read data an earlier definition produced;
'bollhav why' names them and 'bollhav run --outdated --downstream' rebuilds
it. The text output is one aligned line per unit, DEFINITION holding the
short fingerprint (8 hex digits) and that word, or built-on-outdated alone
for a current or unknown unit built on outdated windows; DETAIL the blocked
reason, the retry wait and the errors.`,
		examples: []string{
			"bollhav units raw.orders",
			"bollhav units raw.orders --since 2026-01-01 --until 2026-01-02",
			"bollhav units warehouse.daily_orders --status blocked,failed",
			"bollhav units raw.orders -o json | jq -r '.units[] | select(.status==\"failed\") | .error'",
		},
		flags: func(fs *pflag.FlagSet) {
			since, until, statuses = "", "", nil
			fs.StringVar(&since, "since", "", "keep units ending after this time (RFC 3339 or a date)")
			fs.StringVar(&until, "until", "", "keep units starting before this time (RFC 3339 or a date)")
			fs.StringSliceVar(&statuses, "status", nil, "keep units in these statuses: pending, running, applied, blocked, failed")
		},
		run: func(c *cmdContext, args []string) int { return runUnits(c, args, since, until, statuses) },
	}))
}

// unitJSON is one unit of `units -o json`.
type unitJSON struct {
	Since         *string `json:"since"`
	Until         *string `json:"until"`
	Status        string  `json:"status"`
	AppliedAt     *string `json:"applied_at"`
	BlockedReason *string `json:"blocked_reason"`
	// Reasons is BlockedReason structured (a blocked unit, or a pending
	// one waiting on upstream work under way); empty otherwise.
	Reasons  []reasonJSON `json:"reasons"`
	Attempts int          `json:"attempts"`
	Error    *string      `json:"error"`
	// NotBefore is when a failed unit waiting for its retry may run again;
	// null otherwise.
	NotBefore *string `json:"not_before"`
	// Retry is that wait as "retry 2/5 at …" says it; null otherwise.
	Retry *retryJSON `json:"retry"`
	// AttemptErrors is a failed or pending unit's attempt history, newest
	// first; [] for other units.
	AttemptErrors []attemptJSON `json:"attempt_errors"`
	// Fingerprint is the definition an applied unit was built under;
	// Definition is current, outdated or unknown (null unless applied).
	Fingerprint *string `json:"fingerprint"`
	Definition  *string `json:"definition"`
	// BuiltOnOutdated: an applied unit whose upstream windows in reach are
	// outdated (or built on outdated ones).
	BuiltOnOutdated bool `json:"built_on_outdated"`
}

// Open bounds of --since/--until: instants every unit lies within. The zero
// time is not used because it means "no window" to the store.
var (
	unitsMinTime = time.Date(1, 1, 1, 0, 0, 0, 1000, time.UTC)
	unitsMaxTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

func runUnits(c *cmdContext, args []string, since, until string, statusFlags []string) int {
	switch {
	case len(args) == 0:
		return c.fail("units", &usageError{"name the model: bollhav units MODEL"})
	case len(args) > 1:
		return c.fail("units", &usageError{fmt.Sprintf("unexpected argument %q", args[1])})
	}
	model := args[0]
	w, err := windowFlags(since, until, c.flagGiven("since"), c.flagGiven("until"), false)
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav units: %v\n", err)
		return ExitUsage
	}
	statuses, err := parseStatuses(statusFlags)
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav units: %v\n", err)
		return ExitUsage
	}
	return c.withEngine("units", nil, func(ctx gocontext.Context, e *engine.Engine) int {
		return listUnits(ctx, c, e, model, w, statuses)
	})
}

// listUnits is `bollhav units MODEL` once its flags are read: model's units
// in w with one of statuses (any window, any status when zero), streamed
// in the text or JSON form.
func listUnits(ctx gocontext.Context, c *cmdContext, e *engine.Engine, model string, w state.Window, statuses []state.UnitStatus) int {
	// Resolve the model first, so an unknown one is one clean line and not
	// an empty document followed by an error.
	ms, err := e.ModelStatus(ctx, model)
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav units: %v\n", err)
		return ExitUsage
	}
	if ms.Timeless() && !w.IsZero() {
		fmt.Fprintf(c.Err, "bollhav units: model %s is timeless: it has one existence row and no windows; list it without --since/--until\n", model)
		return ExitUsage
	}

	// Which applied units are built on outdated windows upstream: one
	// grouped count when nothing is outdated.
	trace, err := e.BuiltOnOutdated(ctx, model)
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav units: %v\n", err)
		return ExitUsage
	}
	// A flexible model's running units: each holds the pending units it
	// overlaps back (the overlap lock, one of their reasons).
	running, err := e.Running(ctx, model)
	if err != nil {
		fmt.Fprintf(c.Err, "bollhav units: %v\n", err)
		return ExitUsage
	}
	// A failed or retrying unit's history is read beside it: one small
	// read per such unit, none for the others.
	budget := e.RetryBudget(ctx, model)
	failuresOf := func(u state.Unit) (engine.UnitFailures, error) {
		if !engine.HasFailures(u) {
			return engine.UnitFailures{}, nil
		}
		return e.Failures(ctx, u, budget)
	}

	bw := bufio.NewWriter(c.Out)
	defer bw.Flush()
	var emit func(state.Unit) error
	var finish func(n int)
	if c.Output == "json" {
		name, _ := json.Marshal(model)
		fmt.Fprintf(bw, "{\n  \"model\": %s,\n  \"units\": [", name)
		first := true
		emit = func(u state.Unit) error {
			f, err := failuresOf(u)
			if err != nil {
				return err
			}
			b, err := json.Marshal(unitToJSON(u, f, ms.Fingerprint, trace, running))
			if err != nil {
				return err
			}
			sep := ",\n    "
			if first {
				sep, first = "\n    ", false
			}
			if _, err := bw.WriteString(sep); err != nil {
				return err
			}
			_, err = bw.Write(b)
			return err
		}
		finish = func(n int) {
			if n > 0 {
				bw.WriteString("\n  ")
			}
			bw.WriteString("]\n}\n")
		}
	} else {
		// The colour profile is the terminal's, detected on c.Out; the
		// buffer in front of it only batches writes.
		cw := colorprofile.NewWriter(c.Out, os.Environ())
		cw.Forward = bw
		out := io.Writer(cw)
		rows := 0
		pal := c.palette()
		emit = func(u state.Unit) error {
			if rows == 0 {
				writeUnitLine(out, pal, unitsHeader, true)
			}
			rows++
			f, err := failuresOf(u)
			if err != nil {
				return err
			}
			return writeUnitLine(out, pal, unitCells(u, f, ms.Fingerprint, trace, running), false)
		}
		finish = func(n int) {
			if n > 0 {
				return
			}
			what := "no units of " + model
			switch {
			case !ms.Registered:
				what += fmt.Sprintf(": it is not registered in %s yet (bollhav apply registers it)", e.Env())
			case !w.IsZero() || len(statuses) > 0:
				what += " match"
			default:
				what += " yet: a run creates them"
			}
			fmt.Fprintln(bw, what)
		}
	}
	n := 0
	err = e.ScanUnits(ctx, model, w, statuses, func(u state.Unit) error {
		n++
		return emit(u)
	})
	if err != nil {
		bw.Flush()
		fmt.Fprintf(c.Err, "\nbollhav units: %v\n", err)
		return ExitUsage
	}
	finish(n)
	if err := bw.Flush(); err != nil {
		fmt.Fprintf(c.Err, "bollhav units: %v\n", err)
		return ExitUsage
	}
	return ExitOK
}

func unitToJSON(u state.Unit, f engine.UnitFailures, current string, trace *engine.ModelTrace, running []state.Unit) unitJSON {
	j := unitJSON{Status: string(u.Status), AppliedAt: rfcOrNull(u.AppliedAt), Attempts: u.Attempts}
	if !u.Window.IsZero() {
		j.Since, j.Until = rfcOrNull(&u.Window.Since), rfcOrNull(&u.Window.Until)
	}
	if u.BlockedReason != "" {
		j.BlockedReason = &u.BlockedReason
	}
	j.Reasons = toReasonsJSON(gate.UnitReasons(u, running))
	if u.Error != "" {
		j.Error = &u.Error
	}
	j.NotBefore = rfcOrNull(u.NotBefore)
	j.Retry, j.AttemptErrors = retryToJSON(f.Retry), attemptsToJSON(f.Failures)
	if u.Fingerprint != "" {
		j.Fingerprint = &u.Fingerprint
	}
	if d := engine.UnitDefinition(u, current); d != "" {
		j.Definition = &d
		j.BuiltOnOutdated = trace.BuiltOnAt(u.Window) != nil
	}
	return j
}

// The text columns of units: every one but the last has a fixed width, so
// lines stream out aligned without first reading every unit.
var (
	unitsHeader = []string{"SINCE", "UNTIL", "STATUS", "ATTEMPTS", "APPLIED AT", "DEFINITION", "DETAIL"}
	unitsWidths = []int{20, 20, 7, 8, 20, 17}
)

func unitCells(u state.Unit, f engine.UnitFailures, current string, trace *engine.ModelTrace, running []state.Unit) []string {
	since, until := "-", "-"
	if !u.Window.IsZero() {
		since, until = state.FormatTime(u.Window.Since), state.FormatTime(u.Window.Until)
	}
	var detail []string
	if s := oneLine(u.BlockedReason); s != "" {
		detail = append(detail, s)
	}
	detail = append(detail, failureDetail(u, f.Retry, f.Failures)...)
	for _, r := range gate.UnitReasons(u, running) {
		if r.Kind == gate.ReasonOverlap {
			detail = append(detail, "waits: "+r.Detail)
		}
	}
	d := cmp.Or(strings.Join(detail, "; "), "-")
	def := "-"
	if ds := engine.UnitDefinition(u, current); ds != "" {
		def = spec.ShortFingerprint(u.Fingerprint) + " " + ds
		if ds != engine.DefinitionOutdated && trace.BuiltOnAt(u.Window) != nil {
			// The word alone fills the column; why names the upstream.
			def = engine.DefinitionBuiltOnOutdated
		}
	}
	return []string{since, until, string(u.Status), strconv.Itoa(u.Attempts), rfcOrDash(u.AppliedAt), def, d}
}

// writeUnitLine writes cells padded to unitsWidths, two spaces apart; the
// status cell is coloured, the header bold.
func writeUnitLine(w io.Writer, pal palette, cells []string, header bool) error {
	var b strings.Builder
	for i, cell := range cells {
		if i > 0 {
			b.WriteString("  ")
		}
		styled := cell
		switch {
		case header:
			styled = headerStyle.Render(cell)
		case i == 2:
			styled = pal.status(cell)
		}
		b.WriteString(styled)
		if i < len(unitsWidths) {
			b.WriteString(strings.Repeat(" ", max(0, unitsWidths[i]-lipgloss.Width(cell))))
		}
	}
	_, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	return err
}

// oneLine folds a multi-line message (a command's stderr tail) onto one
// line, made safe to show (untrusted.Line): the text output of a unit's
// error, a reason or a store's error goes through here.
func oneLine(s string) string {
	lines := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return untrusted.Line(strings.TrimSpace(strings.Join(lines, " ⏎ ")))
}

// parseStatuses reads --status values (repeated or comma-separated, any case).
func parseStatuses(in []string) ([]state.UnitStatus, error) {
	var out []state.UnitStatus
	for _, s := range in {
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "" {
			continue
		}
		st, err := parseUnitStatus(s)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func parseUnitStatus(s string) (state.UnitStatus, error) {
	st := state.UnitStatus(strings.ToLower(strings.TrimSpace(s)))
	for _, known := range state.Statuses {
		if st == known {
			return st, nil
		}
	}
	return "", fmt.Errorf("unknown status %q: want pending, running, applied, blocked or failed", s)
}

// windowFlags builds the window of --since/--until. Both bounds are needed
// when both is set; otherwise a missing bound is open. Neither given is the
// zero Window (no window).
func windowFlags(since, until string, sinceGiven, untilGiven, both bool) (state.Window, error) {
	if !sinceGiven && !untilGiven {
		return state.Window{}, nil
	}
	if both && sinceGiven != untilGiven {
		missing := "--until"
		if !sinceGiven {
			missing = "--since"
		}
		return state.Window{}, errors.New("give both --since and --until: " + missing + " is missing")
	}
	s, u := unitsMinTime, unitsMaxTime
	var err error
	if sinceGiven {
		if s, err = state.ParseTime(since); err != nil {
			return state.Window{}, fmt.Errorf("--since: %w", err)
		}
	}
	if untilGiven {
		if u, err = state.ParseTime(until); err != nil {
			return state.Window{}, fmt.Errorf("--until: %w", err)
		}
	}
	if !u.After(s) {
		return state.Window{}, fmt.Errorf("--since %s is not before --until %s: the window [since, until) would be empty", state.FormatTime(s), state.FormatTime(u))
	}
	return state.Window{Since: s, Until: u}, nil
}
