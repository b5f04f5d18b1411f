package cli

import (
	gocontext "context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/untrusted"
	"github.com/spf13/pflag"
)

func init() {
	var at string
	register(triageRead(&command{
		name:    "why",
		args:    "MODEL [--at TIME]",
		summary: "explain a unit: each gated upstream's verdict, the root-cause chain upstream, the unblock frontier",
		globals: append(storeGlobals, gAsOf, gTheme),
		long: `why finds the unit of MODEL that contains TIME (the grid window of a fixed
model, the stored unit or chunk window of a flexible one; a timeless model has one
unit and needs no --at) and evaluates its gate now (or at --as-of), changing
nothing. Without --at it explains the model's failed or blocked unit that holds
the most units downstream — a failed root wins a tie — the unit the UI's
':why MODEL' explains; a model with nothing failed or blocked needs --at.

  upstreams    each gated upstream's verdict: contract, satisfied or not, stale,
               the missing ranges, the ages of the newest and oldest applied rows
  root cause   the unit, then the unit of its first unsatisfied upstream that holds
               it back (a failed unit first, then blocked, running, pending, a
               missing window), and so on upstream until a unit that is failed,
               missing, stale, or outstanding with nothing blocking it
  frontier     the fewest upstream windows whose application unblocks the unit,
               each with how many blocked or pending units downstream it releases

TIME is RFC 3339 (2026-01-01T05:30:00Z) or a date (2026-01-01, midnight UTC).
A window with no unit in the store shows as status "missing".

A failed unit waiting for its retry (a model's retry: budget) shows
"retry 2/5 at TIME" — the try it makes next, of the model's retry.attempts —
and a unit with failed attempts lists the earlier ones' errors, newest first,
each with its time and run (the store keeps a unit's newest 20). With -o json
they are "retry": {"try","of","at","ended_run"} (null when not waiting) and
"attempt_errors": [{"number","try","error","at","run_id"}], every kept failed
attempt newest first (try 0: an expired lease; run_id null: a worker's).

An applied unit built under an earlier definition says "applied under an
earlier definition (changed TIME: what)" and lists the changes (JSON
"definition_change": {"changed_at","changes":[{"field","old","new"}]}, null
when the store does not keep that definition); one whose upstream windows in
reach are outdated names them ("built_on_outdated": [{"model","windows",
"more"}]). An upstream whose require_current contract waits on outdated
windows lists them apart from the missing ones ("outdated").`,
		examples: []string{
			"bollhav why warehouse.daily_orders",
			"bollhav why warehouse.daily_orders --at 2026-01-05",
			"bollhav why raw.orders --at 2026-01-05T13:20:00Z --as-of 2026-01-06T00:00:00Z",
			"bollhav why warehouse.daily_orders --at 2026-01-05 -o json | jq '.root_cause[-1]'",
		},
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&at, "at", "", "a time inside the unit to explain: RFC 3339 or a date (default: the model's failed or blocked unit that holds the most; not needed for a timeless model)")
		},
		run: func(c *cmdContext, args []string) int { return runWhy(c, args, at) },
	}))
}

// whyJSON is `why -o json`: the documented fields first, then extras.
type whyJSON struct {
	Model     string            `json:"model"`
	Since     *string           `json:"since"`
	Until     *string           `json:"until"`
	Status    string            `json:"status"`
	Upstreams []whyUpstreamJSON `json:"upstreams"`
	After     []whyAfterJSON    `json:"after"`
	RootCause []whyLinkJSON     `json:"root_cause"`
	Roots     []whyLinkJSON     `json:"roots"`
	Frontier  []whyFrontierJSON `json:"frontier"`
	Pipeline  string            `json:"pipeline"`
	Temporal  string            `json:"temporality"`
	Blocked   string            `json:"blocked_reason"`
	Error     string            `json:"error"`
	AppliedAt *string           `json:"applied_at"`
	Attempts  int               `json:"attempts"`
	NotBefore *string           `json:"not_before"`
	Retry     *retryJSON        `json:"retry"`
	Failures  []attemptJSON     `json:"attempt_errors"`
	// Fingerprint and Definition as in units -o json.
	Fingerprint *string       `json:"fingerprint"`
	Definition  *string       `json:"definition"`
	BuiltOn     []builtOnJSON `json:"built_on_outdated"`
	Change      *changeJSON   `json:"definition_change"`
	Satisfied   bool          `json:"satisfied"`
	// UnderWay is what a unit not satisfied waits on when the upstream
	// windows it lacks are being loaded (gate.WhyReport.UnderWay); null
	// when it is not waiting on work under way.
	UnderWay *string   `json:"under_way"`
	AsOf     string    `json:"as_of"`
	More     int       `json:"frontier_more"`
	Data     *dataJSON `json:"data,omitempty"`
}

// whyAfterJSON is one after: edge's verdict for the unit's window.
type whyAfterJSON struct {
	Upstream  string `json:"upstream"`
	Edge      string `json:"edge"`
	Cross     bool   `json:"cross_pipeline"`
	Satisfied bool   `json:"satisfied"`
	Run       *int64 `json:"run"`
	Outcome   string `json:"outcome"`
	Reason    string `json:"reason"`
}

type whyUpstreamJSON struct {
	Name      string            `json:"name"`
	Contract  string            `json:"contract"`
	Satisfied bool              `json:"satisfied"`
	Stale     bool              `json:"stale"`
	Reason    string            `json:"reason"`
	Missing   [][2]string       `json:"missing"`
	Outdated  [][2]string       `json:"outdated"`
	Skipped   bool              `json:"skipped"`
	Error     string            `json:"error,omitempty"`
	Newest    *string           `json:"newest_applied_at"`
	Oldest    *string           `json:"oldest_applied_at"`
	NewestAge *int64            `json:"newest_age_seconds"`
	OldestAge *int64            `json:"oldest_age_seconds"`
	Freshness *whyFreshnessJSON `json:"freshness"`
}

// builtOnJSON is one upstream an applied unit was built on outdated
// windows of: the first few ranges ([] for a timeless upstream's row) and
// how many more.
type builtOnJSON struct {
	Model   string      `json:"model"`
	Windows [][2]string `json:"windows"`
	More    int         `json:"more"`
}

// changeJSON is what changed since an outdated unit's definition.
type changeJSON struct {
	ChangedAt *string     `json:"changed_at"`
	Changes   []fieldJSON `json:"changes"`
}

type fieldJSON struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

type whyFreshnessJSON struct {
	Within string `json:"within"`
	Scope  string `json:"scope"`
}

// unitRefJSON names a unit in JSON: its model and its window's bounds
// (whyWindowJSON's).
type unitRefJSON struct {
	Model string  `json:"model"`
	Since *string `json:"since"`
	Until *string `json:"until"`
}

func unitRef(model string, w state.Window) unitRefJSON {
	since, until := whyWindowJSON(w)
	return unitRefJSON{Model: model, Since: since, Until: until}
}

// unitStateJSON is a unit's status in JSON, and whether its upstream rows
// are stale or outdated.
type unitStateJSON struct {
	Status   string `json:"status"`
	Stale    bool   `json:"stale,omitempty"`
	Outdated bool   `json:"outdated,omitempty"`
}

type whyLinkJSON struct {
	unitRefJSON
	unitStateJSON
	Detail string `json:"detail,omitempty"`
}

type whyFrontierJSON struct {
	unitRefJSON
	Releases int `json:"releases"`
	unitStateJSON
}

// whyWindowJSON is a window's bounds as JSON: RFC 3339 UTC, or null for a
// timeless model's existence row.
func whyWindowJSON(w state.Window) (since, until *string) {
	if w.IsZero() {
		return nil, nil
	}
	s, u := state.FormatTime(w.Since), state.FormatTime(w.Until)
	return &s, &u
}

func whyTimeJSON(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := state.FormatTime(*t)
	return &s
}

func whySecondsJSON(d *time.Duration) *int64 {
	if d == nil {
		return nil
	}
	s := int64(d.Seconds())
	return &s
}

func runWhy(c *cmdContext, args []string, at string) int {
	if len(args) != 1 {
		return c.fail("why", &usageError{"want exactly one MODEL"})
	}
	model := args[0]
	var t time.Time
	if at != "" {
		var err error
		if t, err = state.ParseTime(at); err != nil {
			fmt.Fprintf(c.Err, "bollhav why: --at: %v\n", err)
			return ExitUsage
		}
	}
	return c.withEngine("why", nil, func(ctx gocontext.Context, e *engine.Engine) int {
		if at == "" {
			// The unit the UI's :why MODEL explains: the engine picks it.
			var err error
			if t, err = e.WorstUnitAt(ctx, model); err != nil {
				if errors.Is(err, engine.ErrNothingToExplain) {
					fmt.Fprintf(c.Err, "bollhav why: %s has no failed or blocked unit to explain: give --at TIME, a time inside the unit to explain\n", model)
				} else {
					fmt.Fprintf(c.Err, "bollhav why: %s\n", oneLine(err.Error()))
				}
				return ExitUsage
			}
		}
		r, err := e.Why(ctx, model, t)
		if err != nil {
			if errors.Is(err, gate.ErrWhyNeedsTime) {
				fmt.Fprintf(c.Err, "bollhav why: model %s is temporal: give --at TIME, a time inside the unit to explain\n", model)
			} else {
				fmt.Fprintf(c.Err, "bollhav why: %s\n", oneLine(err.Error()))
			}
			return ExitUsage
		}
		home := e.DataHome(ctx, model)
		if c.Output == "json" {
			j := whyToJSON(r)
			j.Data = dataToJSON(home)
			writeJSON(c.Out, j)
			return ExitOK
		}
		printWhy(c.Out, r, home.String(), c.palette())
		return ExitOK
	})
}

func whyToJSON(r *gate.WhyReport) whyJSON {
	out := whyJSON{Model: r.Model, Status: string(r.Status), Upstreams: []whyUpstreamJSON{}, After: []whyAfterJSON{}, RootCause: []whyLinkJSON{},
		Frontier: []whyFrontierJSON{}, Pipeline: r.Pipeline, Temporal: r.Temporality.String(), Blocked: r.BlockedReason,
		Error: r.Error, AppliedAt: whyTimeJSON(r.AppliedAt), Attempts: r.Attempts, NotBefore: whyTimeJSON(r.NotBefore), Satisfied: r.Satisfied,
		AsOf: state.FormatTime(r.Now), More: r.FrontierMore, Retry: retryToJSON(r.Retry), Failures: attemptsToJSON(r.Failures)}
	out.Since, out.Until = whyWindowJSON(r.Window)
	if r.UnderWay != "" {
		out.UnderWay = &r.UnderWay
	}
	if r.Fingerprint != "" {
		out.Fingerprint = &r.Fingerprint
	}
	if r.Definition != "" {
		out.Definition = &r.Definition
	}
	if c := r.Change; c != nil {
		out.Change = &changeJSON{ChangedAt: whyTimeJSON(c.ChangedAt), Changes: []fieldJSON{}}
		for _, f := range c.Changes {
			out.Change.Changes = append(out.Change.Changes, fieldJSON{Field: f.Field, Old: f.Old, New: f.New})
		}
	}
	out.BuiltOn = []builtOnJSON{}
	for _, b := range r.BuiltOnOutdated {
		bj := builtOnJSON{Model: b.Model, Windows: [][2]string{}, More: b.More}
		for _, w := range b.Windows {
			if !w.IsZero() {
				bj.Windows = append(bj.Windows, [2]string{state.FormatTime(w.Since), state.FormatTime(w.Until)})
			}
		}
		out.BuiltOn = append(out.BuiltOn, bj)
	}
	for _, a := range r.After {
		aj := whyAfterJSON{Upstream: a.Upstream, Edge: a.Edge.String(), Cross: a.Cross, Satisfied: a.Satisfied, Outcome: a.Outcome, Reason: a.Reason}
		if a.Run != 0 {
			aj.Run = &a.Run
		}
		out.After = append(out.After, aj)
	}
	for _, u := range r.Upstreams {
		uj := whyUpstreamJSON{Name: u.Upstream, Contract: u.Level.String(), Satisfied: u.Satisfied, Stale: u.Stale,
			Reason: u.Reason, Missing: [][2]string{}, Outdated: [][2]string{}, Skipped: u.Skipped, Newest: whyTimeJSON(u.Newest), Oldest: whyTimeJSON(u.Oldest),
			NewestAge: whySecondsJSON(u.NewestAge), OldestAge: whySecondsJSON(u.OldestAge)}
		if u.Err != nil {
			uj.Error = u.Err.Error()
			uj.Reason = uj.Error
		}
		for _, m := range u.Missing {
			uj.Missing = append(uj.Missing, [2]string{state.FormatTime(m.Since), state.FormatTime(m.Until)})
		}
		for _, m := range u.Outdated {
			uj.Outdated = append(uj.Outdated, [2]string{state.FormatTime(m.Since), state.FormatTime(m.Until)})
		}
		if f := u.Freshness; f != nil {
			uj.Freshness = &whyFreshnessJSON{Within: gate.FormatWithin(f.Within), Scope: f.Scope.String()}
		}
		out.Upstreams = append(out.Upstreams, uj)
	}
	link := func(l gate.ChainLink) whyLinkJSON {
		return whyLinkJSON{unitRef(l.Model, l.Window), unitStateJSON{string(l.Status), l.Stale, l.Outdated}, l.Detail}
	}
	for _, l := range r.RootCause {
		out.RootCause = append(out.RootCause, link(l))
	}
	out.Roots = []whyLinkJSON{}
	for _, l := range r.Roots {
		out.Roots = append(out.Roots, link(l))
	}
	for _, f := range r.Frontier {
		out.Frontier = append(out.Frontier, whyFrontierJSON{unitRef(f.Model, f.Window), f.Releases,
			unitStateJSON{string(f.Status), f.Stale, f.Outdated}})
	}
	return out
}

// whyWindowText prints a unit's window, or "(existence row)" for a timeless one.
func whyWindowText(w state.Window) string {
	if w.IsZero() {
		return "(existence row)"
	}
	return w.String()
}

func whyAgeText(d *time.Duration) string {
	if d == nil {
		return "-"
	}
	if *d < 0 {
		return "in " + gate.FormatWithin(-d.Truncate(time.Second))
	}
	return gate.FormatWithin(d.Truncate(time.Second)) + " ago"
}

// whyVerdictText is one word for an upstream's verdict.
func whyVerdictText(v gate.UpstreamReport) string {
	switch {
	case v.Skipped:
		return "skipped"
	case v.Err != nil:
		return "failed"
	case v.Satisfied:
		return "applied"
	case v.Stale:
		return "stale"
	}
	return "blocked"
}

// printWhy prints the text form of r, one unit's explanation: its state,
// then each gated upstream's verdict. data is where the model's data lives
// (executor.DataHome's words).
func printWhy(w io.Writer, r *gate.WhyReport, data string, pal palette) {
	out := colorWriter(w)
	shape := spec.ShapeText(r.Temporality, r.Flexibility, r.Interval.String())
	fmt.Fprintf(out, "%s %s  %s\n", r.Model, whyWindowText(r.Window), pal.status(string(r.Status)))
	fmt.Fprintf(out, "  pipeline %s, %s, evaluated at %s\n", r.Pipeline, shape, state.FormatTime(r.Now))
	fmt.Fprintf(out, "  data in %s\n", data)
	if !r.Registered {
		fmt.Fprintln(out, "  not registered yet (bollhav apply)")
	}
	if r.BlockedReason != "" {
		fmt.Fprintf(out, "  blocked_reason: %s\n", oneLine(r.BlockedReason))
	}
	if r.Retry != nil {
		fmt.Fprintf(out, "  %s\n", r.Retry.Line(state.FormatTime))
	}
	if r.Error != "" {
		fmt.Fprintf(out, "  error: %s\n", untrusted.Text(r.Error))
	}
	printEarlierFailures(out, r)
	if r.AppliedAt != nil {
		fmt.Fprintf(out, "  applied_at: %s\n", state.FormatTime(*r.AppliedAt))
	}
	switch r.Definition {
	case engine.DefinitionOutdated:
		fmt.Fprintf(out, "  definition: applied under an earlier definition (%s); bollhav run %s --outdated rebuilds it\n", definitionChangeText(r), r.Model)
		if r.Change != nil {
			for _, f := range r.Change.Changes {
				fmt.Fprintf(out, "    %s\n", untrusted.Line(fmt.Sprint(f)))
			}
		}
	case engine.DefinitionUnknown:
		fmt.Fprintln(out, "  definition: unknown (marked applied, or applied before bollhav recorded definitions)")
	}
	for _, b := range r.BuiltOnOutdated {
		fmt.Fprintf(out, "  built on outdated windows of %s: %s; bollhav run --outdated --downstream rebuilds them and this unit\n", b.Model, taintedText(b))
	}
	if line := r.GateLine(); line != "" {
		fmt.Fprintln(out, "  "+line)
	}

	if len(r.Upstreams) > 0 {
		fmt.Fprintln(out, "\nUpstreams")
		rows := make([][]string, 0, len(r.Upstreams))
		for _, u := range r.Upstreams {
			detail := u.Reason
			if u.Err != nil {
				detail = u.Err.Error()
			}
			// The reason repeats "<upstream> (<LEVEL>): "; the table has both.
			if _, rest, ok := strings.Cut(detail, "): "); ok && strings.HasPrefix(detail, u.Upstream+" (") {
				detail = rest
			}
			if u.Satisfied && !u.Skipped {
				detail = "satisfied"
			}
			if u.Skipped {
				detail = "deactivate_for_dev: trusted, not gated"
			}
			rows = append(rows, []string{untrusted.Line(u.Upstream), u.Level.String(), pal.status(whyVerdictText(u)), whyAgeText(u.NewestAge), whyAgeText(u.OldestAge), untrusted.Line(detail)})
		}
		printTable(w, []string{"UPSTREAM", "CONTRACT", "VERDICT", "NEWEST", "OLDEST", "DETAIL"}, rows)
	}

	if len(r.After) > 0 {
		fmt.Fprintln(out, "\nAfter")
		rows := make([][]string, 0, len(r.After))
		for _, a := range r.After {
			verdict := "held"
			if a.Satisfied {
				verdict = "satisfied"
			}
			rows = append(rows, []string{untrusted.Line(a.Upstream), a.Edge.String(), pal.status(verdict), untrusted.Line(a.Detail())})
		}
		printTable(w, []string{"UPSTREAM", "EDGE", "VERDICT", "DETAIL"}, rows)
	}

	fmt.Fprintln(out, "\nRoot cause")
	for i, l := range r.RootCause {
		indent := "  " + strings.Repeat("  ", max(0, i-1))
		arrow := ""
		if i > 0 {
			arrow = "→ "
		}
		status := pal.status(string(l.Status))
		if l.Stale {
			status += " (stale)"
		}
		if l.Outdated {
			status += " (outdated)"
		}
		line := fmt.Sprintf("%s%s%s %s  %s", indent, arrow, untrusted.Line(l.Model), whyWindowText(l.Window), status)
		if l.Detail != "" {
			line += ": " + oneLine(l.Detail)
		}
		if i == len(r.RootCause)-1 && i > 0 {
			line += "  ← root cause"
		}
		fmt.Fprintln(out, line)
	}

	if len(r.Roots) > 1 {
		fmt.Fprintf(out, "\nHeld by %d roots (fixing one alone does not release it)\n", len(r.Roots))
		for _, l := range r.Roots {
			line := fmt.Sprintf("  %s %s  %s", untrusted.Line(l.Model), whyWindowText(l.Window), pal.status(string(l.Status)))
			if l.Detail != "" {
				line += ": " + oneLine(l.Detail)
			}
			fmt.Fprintln(out, line)
		}
	}

	fmt.Fprintln(out, "\nUnblock frontier")
	if len(r.Frontier) == 0 {
		fmt.Fprintln(out, "  nothing upstream to apply")
		return
	}
	// Consecutive windows of one upstream alike in status and releases
	// are one row: a WHOLE gap can be hundreds of windows.
	type group struct {
		f gate.FrontierWindow
		w state.Window
		n int
	}
	var groups []group
	for _, f := range r.Frontier {
		if n := len(groups); n > 0 {
			g := &groups[n-1]
			if g.f.Model == f.Model && g.f.Status == f.Status && g.f.Stale == f.Stale && g.f.Outdated == f.Outdated && g.f.Releases == f.Releases &&
				!g.w.Until.IsZero() && g.w.Until.Equal(f.Window.Since) {
				g.w.Until = f.Window.Until
				g.n++
				continue
			}
		}
		groups = append(groups, group{f: f, w: f.Window, n: 1})
	}
	rows := make([][]string, 0, len(groups))
	for _, g := range groups {
		since, until := "-", "-"
		if s, u := whyWindowJSON(g.w); s != nil {
			since, until = *s, *u
		}
		status := pal.status(string(g.f.Status))
		if g.f.Stale {
			status += " (stale: re-apply)"
		}
		if g.f.Outdated {
			status += " (outdated: run --outdated)"
		}
		releases := strconv.Itoa(g.f.Releases)
		if g.n > 1 {
			releases += fmt.Sprintf(" each (%d windows)", g.n)
		}
		rows = append(rows, []string{untrusted.Line(g.f.Model), since, until, status, releases})
	}
	printTable(w, []string{"MODEL", "SINCE", "UNTIL", "STATUS", "RELEASES"}, rows)
	if r.FrontierMore > 0 {
		fmt.Fprintf(out, "… and about %d more\n", r.FrontierMore)
	}
}

// printEarlierFailures lists the unit's earlier failed attempts, newest
// first, each with its time and run: the ones before the failure whose
// error the report already shows.
func printEarlierFailures(out io.Writer, r *gate.WhyReport) {
	u := state.Unit{Status: r.Status, Error: r.Error, NotBefore: r.NotBefore}
	earlier := state.EarlierFailures(u, r.Failures)
	if len(earlier) == 0 {
		return
	}
	fmt.Fprintln(out, "  earlier attempts, newest first:")
	for _, a := range earlier {
		run := ""
		if a.RunID != 0 {
			run = " (run " + strconv.FormatInt(a.RunID, 10) + ")"
		}
		fmt.Fprintf(out, "    %s failed at %s%s: %s\n", a.Label(), state.FormatTime(a.At), run, oneLine(a.Error))
	}
}

// taintedText lists an upstream's outdated windows in a unit's reach:
// "[a, b), [c, d) (+2 more)", or "its existence row" for a timeless one.
func taintedText(b gate.TaintedUpstream) string {
	var parts []string
	for _, w := range b.Windows {
		if w.IsZero() {
			parts = append(parts, "its existence row")
			continue
		}
		parts = append(parts, w.String())
	}
	s := strings.Join(parts, ", ")
	if b.More > 0 {
		s += fmt.Sprintf(" (+%d more)", b.More)
	}
	return s
}

// definitionChangeText is the parenthesis after "applied under an earlier
// definition": when and what changed, or the old fingerprint when the store
// no longer has its definition.
func definitionChangeText(r *gate.WhyReport) string {
	c := r.Change
	switch {
	case c == nil:
		return spec.ShortFingerprint(r.Fingerprint) + "; the earlier definition is not kept"
	case len(c.Changes) == 0:
		return "changed" // a change the diff cannot name: a fingerprint rule change
	case c.ChangedAt == nil:
		return "changed in the spec, not registered yet: " + spec.Summary(c.Changes)
	}
	return "changed " + state.FormatTime(*c.ChangedAt) + ": " + spec.Summary(c.Changes)
}
