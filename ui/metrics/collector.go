package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bollhav/bollhav/state"
)

// The gauges a scrape reads from the snapshot. Their labels are bounded by
// the spec: a model, its pipeline and one of five statuses; never a
// window, a unit, a run or anything of the DSN.
var (
	descUnits = prometheus.NewDesc("bollhav_units",
		"Units of each model by status (pending, running, applied, blocked, failed), as `bollhav status` counts them.",
		[]string{"model", "pipeline", "status"}, nil)
	descBlocked = prometheus.NewDesc("bollhav_blocked_units",
		"Blocked units of each model, as `bollhav blocked` lists them.",
		[]string{"model", "pipeline"}, nil)
	descImpact = prometheus.NewDesc("bollhav_blocked_impact_units",
		"Sum over a model's blocked units of each one's downstream impact: the outstanding downstream units waiting on it (`bollhav blocked`, IMPACT). A downstream unit two blocked units reach counts twice.",
		[]string{"model", "pipeline"}, nil)
	descIncidents = prometheus.NewDesc("bollhav_open_incidents",
		"Open incidents: root causes to look at (`bollhav incidents`).",
		nil, nil)
	descLag = prometheus.NewDesc("bollhav_freshness_lag_seconds",
		"Seconds since the model's newest applied_at, at scrape time; absent while nothing of the model is applied.",
		[]string{"model", "pipeline"}, nil)
	descLimit = prometheus.NewDesc("bollhav_freshness_limit_seconds",
		"The tightest freshness limit (`within`) a gated downstream edge reads the model with: lag above it makes that downstream's units stale. Absent for a model no edge limits.",
		[]string{"model", "pipeline"}, nil)
	descSnapshot = prometheus.NewDesc("bollhav_snapshot_timestamp_seconds",
		"When the gauges above were last read from the state store (Unix time); a scrape never reads the store itself.",
		nil, nil)
)

// snapshotCollector serves the Monitor's snapshot. Collect reads only the
// published snapshot and the clock, never the store.
type snapshotCollector struct{ m *Monitor }

func (c *snapshotCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUnits, descBlocked, descImpact, descIncidents, descLag, descLimit, descSnapshot} {
		ch <- d
	}
}

func (c *snapshotCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.m.snap.Load()
	if s == nil {
		return
	}
	now := c.m.e.Clock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, m := range s.models {
		for i, st := range state.Statuses {
			gauge(descUnits, float64(m.counts[i]), m.name, m.pipeline, string(st))
		}
		gauge(descBlocked, float64(m.blocked), m.name, m.pipeline)
		gauge(descImpact, float64(m.impact), m.name, m.pipeline)
		if !m.lastApplied.IsZero() {
			gauge(descLag, max(now.Sub(m.lastApplied).Seconds(), 0), m.name, m.pipeline)
		}
		if m.freshLimit > 0 {
			gauge(descLimit, m.freshLimit.Seconds(), m.name, m.pipeline)
		}
	}
	gauge(descIncidents, float64(s.incidents))
	gauge(descSnapshot, float64(s.at.UnixNano())/1e9)
}
