package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// Glance is what a first look at the incidents can say without tracing a
// blocked unit: the failed roots and how many blocked units wait to be
// traced, from the counts each store keeps, with the failed units read for
// the GlanceDetailed models with the most of them. Incidents costs what the
// blocked units and their downstream models hold (seconds at a million
// units, minutes at ten); a glance costs a few rows a model and the
// failures of a hundred models, so the person paged at 03:00 reads the
// errors at once while the rest is traced.
//
// A glance is a lower bound of the report Incidents makes, and says so
// (IncidentReport.Glance): its failed incidents, most failed units first,
// carry their units and — for the first GlanceDetailed — their span, age,
// newest error and focus (the others only their count: Focus is zero),
// but no holds and nothing blocked behind them yet; a failure that is a
// hard gate error shows as failed until the trace judges its gate; units
// that wait for a retry, and stale, outdated or missing roots, come only
// with the trace.
func (g *Reader) Glance(ctx context.Context) (*IncidentReport, error) {
	counts, err := g.statusCounts(ctx)
	if err != nil {
		return nil, err
	}
	rep := &IncidentReport{Now: g.now(), Glance: true}
	for _, c := range counts {
		if n := c.Counts[state.Blocked]; n > 0 {
			rep.Tracing += n
			rep.TracingModels++
		}
		if n := c.Counts[state.Failed]; n > 0 {
			rep.Incidents = append(rep.Incidents, Incident{Kind: IncidentFailed, Model: c.Model, Units: n})
		}
	}
	rep.NamePipelines(g.Spec)
	// Most failed units first; counts is in name order, so ties are too.
	slices.SortStableFunc(rep.Incidents, func(x, y Incident) int { return cmp.Compare(y.Units, x.Units) })
	for i := range rep.Incidents[:min(len(rep.Incidents), GlanceDetailed)] {
		if err := g.glanceFailed(ctx, &rep.Incidents[i]); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// GlanceDetailed bounds the failed roots whose units a glance reads: more
// than a screen holds, few enough that a platform of ten thousand failing
// models still has its first look in a fraction of a second.
const GlanceDetailed = 100

// glanceFailed reads inc's failed units for its span, age, newest error
// and focus. Units stays the kept count: the two reads are not one
// snapshot, and the trace that follows is.
func (g *Reader) glanceFailed(ctx context.Context, inc *Incident) error {
	var newest time.Time
	var tried []state.Unit
	q := state.UnitQuery{Env: g.Env.Suffix, Model: inc.Model, Statuses: []state.UnitStatus{state.Failed}}
	err := g.Store.ScanUnits(ctx, q, func(u state.Unit) error {
		widenSpan(inc, u.Window)
		inc.Since = earliest(inc.Since, u.UpdatedAt)
		if u.Attempts > 1 && len(tried) < maxSinceHistories {
			tried = append(tried, u)
		}
		if inc.Focus.Model == "" || !u.UpdatedAt.Before(newest) {
			newest = u.UpdatedAt
			inc.Detail = ErrorLines(u.Error)
			inc.Focus = UnitRef{Model: u.Model, Window: u.Window}
		}
		return nil
	})
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return fmt.Errorf("reading the failed units of %s: %w", inc.Model, err)
	}
	// Its age as the trace gives it: since the failures began, not the
	// last try (failingSince).
	since, err := g.failingSince(ctx, tried)
	if err != nil {
		return err
	}
	inc.Since = earliest(inc.Since, since)
	return nil
}

// NamePipelines gives every incident without a pipeline its model's, by
// sp (nil: none). A glance reads no registered definitions, and one read
// before the spec was parsed (the UI's launch) names them afterwards.
func (r *IncidentReport) NamePipelines(sp *spec.Spec) {
	if sp == nil {
		return
	}
	for i := range r.Incidents {
		if inc := &r.Incidents[i]; inc.Pipeline == "" {
			if m := sp.Model(inc.Model); m != nil {
				inc.Pipeline = m.Pipeline
			}
		}
	}
}

// widenSpan stretches inc's span over w, a root unit's window.
func widenSpan(inc *Incident, w state.Window) {
	inc.Span = state.Hull(inc.Span, w)
}
