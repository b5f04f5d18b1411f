package cli

import (
	gocontext "context"
	"fmt"
	"strconv"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/untrusted"
)

func init() {
	register(triageRead(&command{
		name:    "status",
		summary: "per model: shape, units by status, coverage and the last applied_at",
		globals: append(storeGlobals, gTheme),
		long: `status lists every model registered in the environment of --env (by apply
or a run), and the spec's models not registered yet with zero counts, ordered
by pipeline and name. For each: its shape (fix or flex and the interval, or
timeless), its units counted by status, its coverage (the union of its applied
windows; the text shows its first..last bound and how many gaps lie between)
and its newest applied_at. OUTDATED counts the applied units built under
another definition than the model's current one (the spec's, or the
registration's without a spec): a change of its SQL, command, write, chunking
or sources. They are counted in APPLIED too — gates still take them as
applied; 'bollhav plan --outdated' lists them and 'bollhav run --outdated'
rebuilds them. Units applied by an operator's mark or before bollhav recorded
definitions are unknown, never outdated.

With -o json:
  {"models":[{"name","pipeline","temporality","flexibility","interval",
    "counts":{"pending","running","applied","blocked","failed"},
    "coverage":[["since","until"]],"last_applied_at","outdated","fingerprint",
    "data":{"connection","driver","host","database","problem"}}]}
Timestamps are RFC 3339 UTC; last_applied_at is null when nothing is applied;
flexibility and interval are null for a timeless model; coverage is the merged
applied ranges, [] when none (always [] for a timeless model, whose one row
has no window); fingerprint is the current definition's (16 hex digits). data,
only on a model whose connection: {dsn_env_var} puts its data in another
database than the state store's, says where: connection is the variable,
driver, host and database are read from its DSN — never the user or the
password — and problem says why they are null ("not set"). The text lists,
under the table, the models that keep their data on a connection.`,
		examples: []string{
			"bollhav status",
			"bollhav status --env pr123",
			"bollhav status -o json | jq '.models[] | select(.counts.failed > 0) | .name'",
		},
		run: runStatus,
	}))
}

// statusJSON is `status -o json`, the shape docs/design.md documents. A timeless
// model has no chunking, so its flexibility and interval are null (not ""),
// which keeps "no such axis" apart from any value the axis could take.
type statusJSON struct {
	Models []statusJSONModel `json:"models"`
	// Retired is how the store was retired (store copy); null for a live
	// store.
	Retired *retiredJSON `json:"retired"`
}

type retiredJSON struct {
	Kind  string `json:"kind"`
	Other string `json:"other"`
	At    string `json:"at"`
}

type statusJSONModel struct {
	Name          string           `json:"name"`
	Pipeline      string           `json:"pipeline"`
	Temporality   string           `json:"temporality"`
	Flexibility   *string          `json:"flexibility"`
	Interval      *string          `json:"interval"`
	Counts        statusJSONCounts `json:"counts"`
	Coverage      [][2]string      `json:"coverage"`
	LastAppliedAt *string          `json:"last_applied_at"`
	Outdated      int              `json:"outdated"`
	Fingerprint   *string          `json:"fingerprint"`
	State         bool             `json:"state"`
	Data          *dataJSON        `json:"data,omitempty"`
}

type statusJSONCounts struct {
	Pending int `json:"pending"`
	Running int `json:"running"`
	Applied int `json:"applied"`
	Blocked int `json:"blocked"`
	Failed  int `json:"failed"`
}

func runStatus(c *cmdContext, args []string) int {
	return c.withEngine("status", args, func(ctx gocontext.Context, e *engine.Engine) int {
		models, err := e.Status(ctx)
		if err != nil {
			fmt.Fprintf(c.Err, "bollhav status: %v\n", err)
			return ExitUsage
		}
		retired, err := e.Retirement(ctx)
		if err != nil {
			fmt.Fprintf(c.Err, "bollhav status: %v\n", err)
			return ExitUsage
		}
		if c.Output == "json" {
			out := statusJSON{Models: make([]statusJSONModel, 0, len(models))}
			if retired != nil {
				out.Retired = &retiredJSON{Kind: string(retired.Kind), Other: retired.Other, At: state.FormatTime(retired.At)}
			}
			for _, m := range models {
				j := statusModelJSON(m)
				j.Data = dataToJSON(e.DataHome(ctx, m.Name))
				out.Models = append(out.Models, j)
			}
			writeJSON(c.Out, out)
			return ExitOK
		}
		if len(models) == 0 {
			fmt.Fprintf(c.Out, "no models in %s: the spec has none and none are registered\n", e.Env())
			return ExitOK
		}
		header := []string{"MODEL", "PIPELINE", "SHAPE", "PENDING", "RUNNING", "APPLIED", "BLOCKED", "FAILED", "OUTDATED", "LAST APPLIED", "COVERAGE"}
		rows := make([][]string, 0, len(models))
		pal := c.palette()
		for _, m := range models {
			row := []string{untrusted.Line(m.Name), untrusted.Line(m.Pipeline), statusShape(m)}
			if m.Stateless && m.Units() == 0 {
				// Nothing to count: no run writes a unit of it.
				for range len(state.Statuses) + 1 {
					row = append(row, "-")
				}
				rows = append(rows, append(row, "-", "-"))
				continue
			}
			for _, s := range state.Statuses {
				row = append(row, pal.count(s, m.Counts[s]))
			}
			row = append(row, strconv.Itoa(m.Outdated), rfcOrDash(m.LastAppliedAt), statusCoverage(m))
			rows = append(rows, row)
		}
		printTable(c.Out, header, rows)
		homes, order := map[string][]string{}, []string(nil)
		for _, m := range models {
			if h := e.DataHome(ctx, m.Name); h.EnvVar != "" {
				if homes[h.String()] == nil {
					order = append(order, h.String())
				}
				homes[h.String()] = append(homes[h.String()], m.Name)
			}
		}
		printDataHomes(c.Out, homes, order)
		if retired != nil {
			fmt.Fprintf(c.Out, "\nretired: %s\n", untrusted.Line(retired.Refusal()))
		}
		return ExitOK
	})
}

func statusModelJSON(m engine.ModelStatus) statusJSONModel {
	j := statusJSONModel{
		Name: m.Name, Pipeline: m.Pipeline, Temporality: m.Temporality,
		Counts: statusJSONCounts{
			Pending: m.Counts[state.Pending], Running: m.Counts[state.Running], Applied: m.Counts[state.Applied],
			Blocked: m.Counts[state.Blocked], Failed: m.Counts[state.Failed],
		},
		Coverage:      [][2]string{},
		LastAppliedAt: rfcOrNull(m.LastAppliedAt),
		Outdated:      m.Outdated,
		State:         !m.Stateless,
	}
	if m.Fingerprint != "" {
		j.Fingerprint = &m.Fingerprint
	}
	if !m.Timeless() {
		j.Flexibility, j.Interval = &m.Flexibility, &m.Interval
	}
	for _, w := range m.Coverage.Windows() {
		j.Coverage = append(j.Coverage, [2]string{state.FormatTime(w.Since), state.FormatTime(w.Until)})
	}
	return j
}

// statusShape reads "fix 1h", "flex 1d", "timeless" or "no state".
func statusShape(m engine.ModelStatus) string {
	if m.Stateless {
		return "no state"
	}
	if m.Timeless() {
		return m.Temporality
	}
	return m.Flexibility + " " + m.Interval
}

// count colours a non-zero count like its status word.
func (p palette) count(s state.UnitStatus, n int) string {
	text := strconv.Itoa(n)
	if st, ok := p.statusStyle(string(s)); ok && n > 0 && s != state.Pending {
		return st.Render(text)
	}
	return text
}

// statusCoverage shortens a coverage to its first and last bound and the
// number of gaps between: "2026-01-01T00:00:00Z..2026-01-03T00:00:00Z (1 gap)".
func statusCoverage(m engine.ModelStatus) string {
	if !m.Registered {
		return "not registered"
	}
	ws := m.Coverage.Windows()
	if len(ws) == 0 {
		return "-"
	}
	s := state.FormatTime(ws[0].Since) + ".." + state.FormatTime(ws[len(ws)-1].Until)
	if gaps := len(ws) - 1; gaps > 0 {
		s += fmt.Sprintf(" (%d gap%s)", gaps, plural(gaps))
	}
	return s
}

// rfcOrNull is t in RFC 3339 UTC, or nil (JSON null) when there is none.
func rfcOrNull(t *time.Time) *string {
	if t == nil || t.IsZero() {
		return nil
	}
	s := state.FormatTime(*t)
	return &s
}

// rfcOrDash is t in RFC 3339 UTC, or "-" when there is none.
func rfcOrDash(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return state.FormatTime(*t)
}
