package metrics

import (
	"cmp"
	"slices"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// snapshot is the state the gauges report, as of its last refresh. It is
// never changed once published: a refresh builds a new one and swaps the
// pointer, so a scrape reads it without a lock and without the store.
type snapshot struct {
	// models is sorted by name.
	models []modelSnap
	// incidents are the open incidents, with what each holds and
	// releases: the report `bollhav incidents` prints.
	incidents *gate.IncidentReport
	// at is when the snapshot was last refreshed (the wall clock); zero
	// before the first refresh.
	at time.Time
	// families are the gauges above as a scrape serves them (all but the
	// lag, which moves with the clock), built once by buildFamilies.
	families []*dto.MetricFamily
}

// modelSnap is one model's line of the snapshot.
type modelSnap struct {
	name, pipeline string
	// counts is the model's units by status, in state.Statuses order,
	// from the store's kept counts: its blocked ones are what `bollhav
	// status` and `bollhav blocked` count (bollhav_blocked_units).
	counts [5]int
	// lastApplied is the newest applied_at; zero when nothing is applied.
	lastApplied time.Time
	// freshLimit is the tightest freshness `within` any gated downstream
	// edge reads this model with; zero when none has one.
	freshLimit time.Duration
}

// statusIndex is a status's place in modelSnap.counts.
func statusIndex(s state.UnitStatus) int { return slices.Index(state.Statuses, s) }

// modelFromStatus is a model's line from engine.Status.
func modelFromStatus(st engine.ModelStatus) modelSnap {
	m := modelSnap{name: st.Name, pipeline: st.Pipeline}
	for s, n := range st.Counts {
		if i := statusIndex(s); i >= 0 {
			m.counts[i] = n
		}
	}
	if st.LastAppliedAt != nil {
		m.lastApplied = *st.LastAppliedAt
	}
	return m
}

// withStats replaces m's counts and newest applied_at by a fresh Stats read.
func (m modelSnap) withStats(st state.UnitStats) modelSnap {
	m.counts = [5]int{}
	for s, n := range st.Counts {
		if i := statusIndex(s); i >= 0 {
			m.counts[i] += n
		}
	}
	m.lastApplied = time.Time{}
	if st.LastAppliedAt != nil {
		m.lastApplied = st.LastAppliedAt.UTC()
	}
	return m
}

func sortModels(ms []modelSnap) {
	slices.SortFunc(ms, func(a, b modelSnap) int { return cmp.Compare(a.name, b.name) })
}
