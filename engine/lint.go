package engine

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// Severity grades a lint finding.
type Severity string

// An error is proven wrong by construction (a contract that can never be
// satisfied); a warning is one of the design's silent combinations, which
// only the model's author can judge.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one lint result.
type Finding struct {
	Model    string
	Severity Severity
	Rule     string
	Message  string
	Pos      spec.Position
}

// Lint proves what it can about a valid spec before anything runs: contracts
// that can never be satisfied by construction, task graphs that cannot be
// scheduled, and the design's silent combinations that corrupt data with no
// error. Findings are sorted by position in the spec.
func Lint(sp *spec.Spec) []Finding {
	// The rules read the spec alone, so the models are linted in runs on
	// every core and the task graphs beside them (at 10,000 models a lint
	// took 190 ms on one core, 110 ms on two, and a read command waits for
	// it). The runs are joined in model order; the sort by position below
	// orders them anyway, and findings at one position are one model's,
	// found in one run, in its order.
	runs := slices.Collect(slices.Chunk(sp.Models, max(lintRunModels, (len(sp.Models)+runtime.GOMAXPROCS(0)-1)/runtime.GOMAXPROCS(0))))
	found := make([][]Finding, len(runs)+1)
	var wg sync.WaitGroup
	for i, run := range runs {
		wg.Go(func() { found[i] = lintModels(sp, run) })
	}
	wg.Go(func() { found[len(runs)] = lintGraphs(sp) })
	wg.Wait()
	out := slices.Concat(found...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return out
}

// lintRunModels is the fewest models Lint gives a goroutine of their own:
// below it, a goroutine costs more than it saves.
const lintRunModels = 250

// lintModels is each model's own rules over models, in order.
func lintModels(sp *spec.Spec, models []*spec.Model) []Finding {
	var out []Finding
	for _, m := range models {
		out = append(out, lintFlexible(m)...)
		for _, src := range m.Upstream {
			if src.Gated() {
				out = append(out, lintContract(sp, m, src)...)
			}
		}
		out = append(out, lintRunCondition(sp, m)...)
		out = append(out, lintHasData(sp, m)...)
		out = append(out, lintUnitDDL(m)...)
	}
	return out
}

// aggregating matches the query shapes that break [a,c) ≡ [a,b) ∪ [b,c).
var aggregating = regexp.MustCompile(`(?i)\bgroup\s+by\b|\b(sum|count|avg|min|max)\s*\(|\brow_number\s*\(|\bover\s*\(|\bdistinct\b`)

// ddl matches the statements that change a schema rather than a window's
// rows.
var ddl = regexp.MustCompile(`(?i)\b(create|alter|drop)\s+(unique\s+)?(table|index|view|schema|type|materialized\s+view)\b`)

// lintUnitDDL warns of DDL among a model's per-unit sql: statements, which
// every unit runs — several workers at once. CREATE TABLE IF NOT EXISTS is
// not safe under concurrency in PostgreSQL (two sessions creating one table
// race on the catalog's unique index, pg_type_typname_nsp_index, and one
// fails), so units fail at random on a fresh target. Create the target
// once, outside the units: bollhav creates a recreate_partition, upsert or
// append target itself (run: {write: …}), or a migration does.
func lintUnitDDL(m *spec.Model) []Finding {
	for _, stmt := range m.Run.SQL {
		if loc := ddl.FindString(stmt); loc != "" {
			return []Finding{{Model: m.Name, Severity: SeverityWarning, Rule: "unit-ddl",
				Message: fmt.Sprintf("sql: runs %q in every unit, and units run at once on several workers: concurrent CREATE … IF NOT EXISTS fails in PostgreSQL (pg_type_typname_nsp_index); create the target once — a write: mode creates it for you — and keep sql: to the window's rows", strings.TrimSpace(loc)),
				Pos:     m.Run.Pos}}
		}
	}
	return nil
}

func lintFlexible(m *spec.Model) []Finding {
	if !m.Flexible() {
		return nil
	}
	var out []Finding
	warn := func(rule, msg string, pos spec.Position) {
		out = append(out, Finding{Model: m.Name, Severity: SeverityWarning, Rule: rule, Message: msg, Pos: pos})
	}
	if w := m.Run.Write; w != nil {
		switch w.Mode {
		case spec.Append:
			warn("flex-append", "flexible model with append write: every re-cover of a range appends its rows again, duplicating them; use recreate_partition, or keep the model fixed", m.Run.Pos)
		case spec.Upsert:
			warn("flex-upsert", "flexible model with upsert write: a last-writer-wins merge makes the result depend on how ranges were partitioned; break ties deterministically (a _data_modified comparison) or use recreate_partition", m.Run.Pos)
		}
	}
	body := m.Run.Query + "\n" + strings.Join(m.Run.SQL, "\n")
	if loc := aggregating.FindString(body); loc != "" {
		warn("flex-aggregate", fmt.Sprintf("flexible model with an aggregating query (%q): aggregates are not invariant to how the window is partitioned, so re-chunking silently changes the numbers; keep aggregating models fixed", strings.TrimSpace(loc)), m.Run.Pos)
	}
	for _, src := range m.Upstream {
		if src.Contract == spec.Through {
			warn("flex-through", fmt.Sprintf("flexible model with a THROUGH upstream %s: cumulative logic over history is not partition-invariant; keep it fixed", src.Name), src.Pos)
		}
	}
	return out
}

func lintContract(sp *spec.Spec, m *spec.Model, src spec.Source) []Finding {
	var out []Finding
	finding := func(sev Severity, rule, msg string) {
		out = append(out, Finding{Model: m.Name, Severity: sev, Rule: rule,
			Message: fmt.Sprintf("source %s (%s): %s", src.Name, src.Contract, msg), Pos: src.Pos})
	}
	up := sp.Model(src.Name)
	if up == nil {
		finding(SeverityWarning, "upstream-not-in-spec", "the gated upstream is not defined in this spec; the gate needs it registered in the store by another spec, or the unit fails")
		return out
	}
	if up.Temporality == spec.Timeless && src.Contract.WindowScoped() {
		finding(SeverityError, "window-level-on-timeless", "the upstream is timeless and has no window to match: this is a hard error at gate time; gate it WHOLE or EXISTS")
		return out
	}
	if src.Contract == spec.Exact && up.Flexible() {
		finding(SeverityError, "exact-on-flexible", "EXACT on a flexible upstream can never match (Guard A): its rows are coalesced into ranges; use ENCAPSULATE")
		return out
	}
	if f := src.Freshness; f != nil && up.Temporality == spec.Temporal && up.Chunking != nil && f.Within < up.Chunking.Interval.Nominal() {
		finding(SeverityWarning, "freshness-shorter-than-grain", fmt.Sprintf(
			"freshness within %s is shorter than the upstream's own %s grain: it is loaded once per window, so the gate reports it stale for part of every period", gate.FormatWithin(f.Within), up.Chunking.Interval))
	}
	if m.Temporality != spec.Temporal || up.Temporality != spec.Temporal || m.Chunking == nil || up.Chunking == nil {
		return out
	}
	if up.Chunking.Start.After(m.Chunking.Start) && src.Contract != spec.Exists {
		msg := fmt.Sprintf("the upstream starts %s, after this model's start %s: ",
			state.FormatTime(up.Chunking.Start), state.FormatTime(m.Chunking.Start))
		if src.Contract == spec.Whole {
			finding(SeverityWarning, "upstream-starts-later", msg+"this model's windows before then read no upstream data, which WHOLE does not notice")
		} else {
			finding(SeverityError, "upstream-starts-later", msg+"this model's windows before then can never be covered and block forever; move this model's start or the upstream's")
		}
	}
	if src.Contract == spec.Exact && !up.Flexible() {
		if matched, checked, ok := exactMatches(m, up); ok && matched == 0 {
			finding(SeverityError, "exact-grain-mismatch", fmt.Sprintf(
				"none of this model's first %d windows (%s grain) is a window of the upstream's %s grid, so EXACT can never match and every unit blocks forever; use ENCAPSULATE",
				checked, m.Chunking.Interval, up.Chunking.Interval))
		} else if ok && matched < checked {
			finding(SeverityWarning, "exact-grain-mismatch", fmt.Sprintf(
				"only %d of this model's first %d windows are windows of the upstream's %s grid; the others block forever under EXACT",
				matched, checked, up.Chunking.Interval))
		}
	}
	return out
}

// exactMatches counts how many of the downstream's first windows are exactly
// windows of the upstream's grid: EXACT can only ever match those.
func exactMatches(down, up *spec.Model) (matched, checked int, ok bool) {
	dg, err1 := state.NewGrid(down.Chunking.Start, down.Chunking.Interval, down.Chunking.Location)
	ug, err2 := state.NewGrid(up.Chunking.Start, up.Chunking.Interval, up.Chunking.Location)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	const sample = 400
	for k := 0; k < sample; k++ {
		w := dg.WindowAt(k)
		if w.Since.Before(ug.Start) {
			continue
		}
		checked++
		if ug.WindowContaining(w.Since).Equal(w) {
			matched++
		}
	}
	return matched, checked, checked > 0
}

func lintRunCondition(sp *spec.Spec, m *spec.Model) []Finding {
	same, cross := modelEdges(sp, m)
	total := len(same) + len(cross)
	var out []Finding
	if m.RunCondition == graph.N && m.RunConditionCount > total {
		out = append(out, Finding{Model: m.Name, Severity: SeverityError, Rule: "n-exceeds-edges", Pos: m.Pos,
			Message: fmt.Sprintf("run_condition %d asks for more dependencies than the task has (%d), so it can never start", m.RunConditionCount, total)})
	}
	if m.RunCondition != graph.All || len(same) == 0 || len(cross) > 0 {
		return out
	}
	failures := map[string]bool{}
	for _, e := range same {
		if e.Type != graph.Failure {
			return out
		}
		failures[e.DependsOn] = true
	}
	// Under ALL with only FAILURE edges, every upstream must fail. One that
	// needs another's success to run (a SUCCESS or HAS_DATA path under ALL)
	// is skipped, not failed, when that other fails: then it can never be.
	for a := range failures {
		for b := range failures {
			if a != b && needsSuccessOf(sp, a, b, map[string]bool{}) {
				out = append(out, Finding{Model: m.Name, Severity: SeverityError, Rule: "failure-only-all", Pos: m.Pos,
					Message: fmt.Sprintf("runs only when all of its FAILURE upstreams fail, but %s needs %s to succeed before it can run, so both can never fail in one run", a, b)})
				return out
			}
		}
	}
	names := slices.Sorted(maps.Keys(failures))
	out = append(out, Finding{Model: m.Name, Severity: SeverityWarning, Rule: "failure-only-all", Pos: m.Pos,
		Message: fmt.Sprintf("has only FAILURE edges under ALL: it runs only when %s all fail, and is skipped on every other run", strings.Join(names, ", "))})
	return out
}

// lintHasData checks each HAS_DATA edge against what its upstream can
// report: the edge holds only when the upstream's attempt wrote a positive
// number of rows, so an upstream that never reports a count skips the
// dependent on every run, silently. A view writes no rows and a model with
// no run block never runs, so those are errors; a command reports rows only
// if it prints rows_written=N, which lint cannot see, so that is a warning.
func lintHasData(sp *spec.Spec, m *spec.Model) []Finding {
	var out []Finding
	for _, a := range m.After {
		if a.On != graph.HasData {
			continue
		}
		up := sp.Model(a.Task)
		if up == nil {
			continue
		}
		finding := func(sev Severity, msg string) {
			out = append(out, Finding{Model: m.Name, Severity: sev, Rule: "has-data-unreported", Pos: a.Pos,
				Message: fmt.Sprintf("HAS_DATA edge on %s: %s", a.Task, msg)})
		}
		switch up.Run.Kind {
		case spec.RunView:
			finding(SeverityError, "a view writes no rows, so the edge never holds and this task is skipped on every run; use a SUCCESS edge")
		case spec.RunNone:
			finding(SeverityError, "the model has no run block, so its task never writes rows and this task is skipped on every run; use a SUCCESS edge")
		case spec.RunCommand:
			finding(SeverityWarning, "a command model reports rows only when it prints rows_written=N on stdout; if it does not, the edge never holds and this task is skipped on every run")
		}
	}
	return out
}

// needsSuccessOf reports whether task a can only start after b succeeded: a
// path of SUCCESS or HAS_DATA edges from a to b through tasks under ALL.
func needsSuccessOf(sp *spec.Spec, a, b string, seen map[string]bool) bool {
	if seen[a] {
		return false
	}
	seen[a] = true
	m := sp.Model(a)
	if m == nil || m.RunCondition != graph.All {
		return false
	}
	same, _ := modelEdges(sp, m)
	for _, e := range same {
		if e.Type != graph.Success && e.Type != graph.HasData {
			continue
		}
		if e.DependsOn == b || needsSuccessOf(sp, e.DependsOn, b, seen) {
			return true
		}
	}
	return false
}

func lintGraphs(sp *spec.Spec) []Finding {
	var out []Finding
	if _, err := specLineage(sp); err != nil {
		var ce *graph.LineageCycleError
		model := ""
		if errors.As(err, &ce) && len(ce.Cycle) > 0 {
			model = ce.Cycle[0]
		}
		out = append(out, Finding{Model: model, Severity: SeverityError, Rule: "lineage-cycle", Message: err.Error(), Pos: posOf(sp, model)})
	}
	if _, err := PipelineGraphs(sp, AssignTaskIDs(sp, nil)); err != nil {
		var pe *PipelineError
		for _, e := range unjoin(err) {
			if errors.As(e, &pe) {
				if cycle := pe.CycleModels(); len(cycle) > 0 {
					out = append(out, Finding{Model: cycle[0], Severity: SeverityError, Rule: "task-cycle",
						Message: e.Error(), Pos: posOf(sp, cycle[0])})
				}
			}
		}
		return out
	}
	// Each pipeline orders alone; a run of several pipelines builds one
	// graph over their tasks, where after: edges across pipelines can
	// close a loop no single pipeline shows.
	if cycle := crossPipelineCycle(sp); len(cycle) > 0 {
		out = append(out, Finding{Model: cycle[0], Severity: SeverityError, Rule: "task-cycle", Pos: posOf(sp, cycle[0]),
			Message: "the task dependencies across pipelines form a cycle, so no run of them can order them: " + strings.Join(append(cycle, cycle[0]), " → ")})
	}
	return out
}

// crossPipelineCycle is a cycle of task edges over every model of the spec,
// pipelines together, by model name; nil when there is none.
func crossPipelineCycle(sp *spec.Spec) []string {
	ids := AssignTaskIDs(sp, nil)
	names := make(map[int]string, len(ids))
	nodes := make([]graph.TaskNode, 0, len(sp.Models))
	var edges []graph.TaskEdge
	for _, m := range sp.Models {
		names[ids[m.Name]] = m.Name
		same, cross := modelEdges(sp, m)
		outside := 0
		for _, e := range same {
			edges = append(edges, graph.TaskEdge{TaskID: ids[m.Name], DependsOnTaskID: ids[e.DependsOn], Type: e.Type})
		}
		for _, c := range cross {
			if sp.Model(c.DependsOn) == nil {
				outside++
				continue
			}
			edges = append(edges, graph.TaskEdge{TaskID: ids[m.Name], DependsOnTaskID: ids[c.DependsOn], Type: c.Type})
		}
		nodes = append(nodes, graph.TaskNode{ID: ids[m.Name], CrossPipelineEdgeCount: outside})
	}
	_, err := graph.Build(nodes, edges)
	var ce *graph.CycleError
	if !errors.As(err, &ce) {
		return nil
	}
	cycle := make([]string, len(ce.Cycle))
	for i, id := range ce.Cycle {
		cycle[i] = names[id]
	}
	return cycle
}

func posOf(sp *spec.Spec, model string) spec.Position {
	if m := sp.Model(model); m != nil {
		return m.Pos
	}
	return spec.Position{}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
