package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bollhav/bollhav/state"
)

// Glance is what a first look at the incidents can say without tracing a
// blocked unit: the failed roots, read in one pass over the failed units,
// and how many blocked units wait to be traced, from the counts each store
// keeps. Incidents costs what the blocked units and their downstream
// models hold (seconds at a million units, minutes at ten); a glance costs
// what has failed, so the person paged at 03:00 reads the errors at once
// while the rest is traced.
//
// A glance is a lower bound of the report Incidents makes, and says so
// (IncidentReport.Glance): its failed incidents carry their units, span,
// age, newest error and focus, but no impact and nothing blocked behind
// them yet; a failure that is a hard gate error shows as failed until the
// trace judges its gate; units that wait for a retry, and stale, outdated
// or missing roots, come only with the trace.
func (g *Reader) Glance(ctx context.Context) (*IncidentReport, error) {
	now := g.now()
	sums, err := g.Store.Summaries(ctx, g.Env.Suffix, "")
	if err != nil {
		return nil, fmt.Errorf("reading the unit counts: %w", err)
	}
	rep := &IncidentReport{Now: now, Glance: true}
	failedModels := 0
	for _, s := range sums {
		if n := s.Counts[state.Blocked]; n > 0 {
			rep.Tracing += n
			rep.TracingModels++
		}
		if s.Counts[state.Failed] > 0 {
			failedModels++
		}
	}
	if failedModels == 0 {
		return rep, nil
	}
	byModel := map[string]*Incident{}
	newest := map[string]time.Time{}
	seen := map[string]bool{}
	// One scan of every failed unit of the environment, not one read a
	// model: at ten thousand models the per-model round trips alone would
	// cost the second a glance has.
	q := state.UnitQuery{Env: g.Env.Suffix, Statuses: []state.UnitStatus{state.Failed}}
	err = g.Store.ScanUnits(ctx, q, func(u state.Unit) error {
		inc := byModel[u.Model]
		if inc == nil {
			inc = &Incident{Kind: IncidentFailed, Model: u.Model, Pipeline: g.pipelineOf(u.Model)}
			byModel[u.Model] = inc
		}
		if k := u.Model + "\x00" + u.Window.String(); !seen[k] {
			seen[k] = true
			widenSpan(inc, u.Window)
			inc.Units++
		}
		inc.Since = earliest(inc.Since, u.UpdatedAt)
		if inc.Focus.Model == "" || !u.UpdatedAt.Before(newest[u.Model]) {
			newest[u.Model] = u.UpdatedAt
			inc.Detail = ErrorLines(u.Error)
			inc.Focus = UnitRef{Model: u.Model, Window: u.Window}
		}
		return nil
	})
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, fmt.Errorf("reading the failed units: %w", err)
	}
	for _, inc := range byModel {
		rep.Incidents = append(rep.Incidents, *inc)
	}
	// No impact yet: the most failed units first, then the oldest.
	slices.SortFunc(rep.Incidents, func(x, y Incident) int {
		return cmp.Or(cmp.Compare(y.Units, x.Units), x.Since.Compare(y.Since), cmp.Compare(x.Model, y.Model))
	})
	return rep, nil
}

// pipelineOf is a model's pipeline by the spec, "" without one (a glance
// does not read the registered definitions).
func (g *Reader) pipelineOf(model string) string {
	if g.Spec == nil {
		return ""
	}
	if m := g.Spec.Model(model); m != nil {
		return m.Pipeline
	}
	return ""
}

// widenSpan stretches inc's span over w, a root unit's window.
func widenSpan(inc *Incident, w state.Window) {
	if w.IsZero() {
		return
	}
	if inc.Span.IsZero() || w.Since.Before(inc.Span.Since) {
		inc.Span.Since = w.Since
	}
	if inc.Span.Until.IsZero() || w.Until.After(inc.Span.Until) {
		inc.Span.Until = w.Until
	}
}
