package metrics

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/bollhav/bollhav/engine/gate"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/bollhav/bollhav/state"
)

// The gauges read from the snapshot. Their labels are bounded by the spec:
// a model, its pipeline and one of five statuses; never a window, a unit, a
// run or anything of the DSN. A HELP that names a label's values names them
// from the list the values come from (listOf), so it names every one.
var (
	helpUnits     = "Units of each model by status (" + listOf(state.Statuses) + "), as `bollhav status` counts them."
	helpBlocked   = "Blocked units of each model, as `bollhav blocked` lists them."
	helpHolds     = "Blocked units each open incident holds, one series per open root (kind: " + listOf(gate.IncidentKinds) + "; model and pipeline: the root's): whose root-cause chains end at its model (`bollhav incidents`, \"holds N units\"; JSON blocked_units). A unit two roots hold counts under both. Absent with no incident."
	helpReleases  = "Blocked units each open incident alone holds, one series per open root as bollhav_incident_holds_units (kind: " + listOf(gate.IncidentKinds) + "): fixing it alone releases them (`bollhav incidents`, \"fixing it alone releases K\"; JSON releases)."
	helpHeld      = "Blocked units, each counted once however many roots hold it (`bollhav incidents -o json`, held plus untraced)."
	helpIncidents = "Open incidents, root causes to look at (`bollhav incidents`), by kind: " + listOf(gate.IncidentKinds) + "; every kind is present, 0 when it has none."
	helpLag       = "Seconds since the model's newest applied_at, at scrape time; absent while nothing of the model is applied."
	helpLimit     = "The tightest freshness limit (`within`) a gated downstream edge reads the model with: lag above it makes that downstream's units stale. Absent for a model no edge limits."
	helpSnapshot  = "When the gauges above were last read from the state store (Unix time); a scrape never reads the store itself."
)

// listOf names the values of a label, comma-separated, in the order of the
// list they come from.
func listOf[S ~string](values []S) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return strings.Join(out, ", ")
}

// gatherer is what /metrics serves: the registry's counters, histograms and
// process metrics, plus the snapshot's gauges. The snapshot's families are
// built once per refresh (families), not per scrape, and only the lag,
// which moves with the clock, is computed per scrape: at 1,000 models that
// is about 7,000 samples a scrape does not have to build, check and sort.
type gatherer struct{ m *Monitor }

func (g gatherer) Gather() ([]*dto.MetricFamily, error) {
	fams, err := g.m.reg.Gather()
	if s := g.m.snap.Load(); s != nil {
		fams = append(fams, s.families...)
		if lag := lagFamily(s, g.m.e.Clock()); lag != nil {
			fams = append(fams, lag)
		}
		slices.SortFunc(fams, func(a, b *dto.MetricFamily) int { return cmp.Compare(a.GetName(), b.GetName()) })
	}
	return fams, err
}

var _ prometheus.Gatherer = gatherer{}

// modelLabels are one model's label pairs, shared by all its samples.
type modelLabels struct{ model, pipeline *dto.LabelPair }

func labelsOf(m modelSnap) modelLabels {
	return modelLabels{model: pair("model", m.name), pipeline: pair("pipeline", m.pipeline)}
}

func pair(name, value string) *dto.LabelPair { return &dto.LabelPair{Name: &name, Value: &value} }

func gaugeSample(v float64, labels ...*dto.LabelPair) *dto.Metric {
	return &dto.Metric{Label: labels, Gauge: &dto.Gauge{Value: &v}}
}

func family(name, help string, ms []*dto.Metric) *dto.MetricFamily {
	return &dto.MetricFamily{Name: &name, Help: &help, Type: dto.MetricType_GAUGE.Enum(), Metric: ms}
}

// buildFamilies builds the snapshot's gauge families (all but the lag), sorted
// by name; label pairs are in name order, as the exposition wants them.
func (s *snapshot) buildFamilies() {
	statusPairs := make([]*dto.LabelPair, len(state.Statuses))
	for i, st := range state.Statuses {
		statusPairs[i] = pair("status", string(st))
	}
	units := make([]*dto.Metric, 0, len(s.models)*len(state.Statuses))
	var blocked, limit []*dto.Metric
	blockedAt := statusIndex(state.Blocked)
	for _, m := range s.models {
		l := labelsOf(m)
		for i := range state.Statuses {
			units = append(units, gaugeSample(float64(m.counts[i]), l.model, l.pipeline, statusPairs[i]))
		}
		blocked = append(blocked, gaugeSample(float64(m.counts[blockedAt]), l.model, l.pipeline))
		if m.freshLimit > 0 {
			limit = append(limit, gaugeSample(m.freshLimit.Seconds(), l.model, l.pipeline))
		}
	}
	byKind := map[gate.IncidentKind]int{}
	var holds, releases []*dto.Metric
	held := 0
	if rep := s.incidents; rep != nil {
		held = rep.Held + rep.Untraced
		for _, inc := range rep.Incidents {
			byKind[inc.Kind]++
			l := []*dto.LabelPair{pair("kind", string(inc.Kind)), pair("model", inc.Model), pair("pipeline", inc.Pipeline)}
			holds = append(holds, gaugeSample(float64(inc.Blocked), l...))
			releases = append(releases, gaugeSample(float64(inc.Releases), l...))
		}
	}
	incidents := make([]*dto.Metric, 0, len(gate.IncidentKinds))
	for _, k := range gate.IncidentKinds {
		incidents = append(incidents, gaugeSample(float64(byKind[k]), pair("kind", string(k))))
	}
	s.families = []*dto.MetricFamily{
		family("bollhav_blocked_units", helpBlocked, blocked),
		family("bollhav_held_units", helpHeld, []*dto.Metric{gaugeSample(float64(held))}),
		family("bollhav_open_incidents", helpIncidents, incidents),
		family("bollhav_snapshot_timestamp_seconds", helpSnapshot, []*dto.Metric{gaugeSample(float64(s.at.UnixNano()) / 1e9)}),
		family("bollhav_units", helpUnits, units),
	}
	if len(holds) > 0 { // a family of no samples is not served
		s.families = append(s.families, family("bollhav_incident_holds_units", helpHolds, holds),
			family("bollhav_incident_releases_units", helpReleases, releases))
	}
	if len(limit) > 0 {
		s.families = append(s.families, family("bollhav_freshness_limit_seconds", helpLimit, limit))
	}
}

// lagFamily is each model's freshness lag at now, or nil when no model has
// anything applied.
func lagFamily(s *snapshot, now time.Time) *dto.MetricFamily {
	var ms []*dto.Metric
	for _, m := range s.models {
		if !m.lastApplied.IsZero() {
			l := labelsOf(m)
			ms = append(ms, gaugeSample(max(now.Sub(m.lastApplied).Seconds(), 0), l.model, l.pipeline))
		}
	}
	if len(ms) == 0 {
		return nil
	}
	return family("bollhav_freshness_lag_seconds", helpLag, ms)
}
