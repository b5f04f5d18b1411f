package gate

import (
	"slices"
	"sort"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// Gate is what Judge says now of model's unit with window w (zero for a
// timeless model's existence row) — every upstream's verdict with its
// reason, missing ranges and ages, the blocked_reason a run claiming the
// unit would record — from the index's rows instead of the store, and false
// when the index has no definition to judge the model by. Its verdict
// folds to the unit's Readiness.
func (l *Live) Gate(model string, w state.Window) (UnitGate, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	st := l.st
	m := st.models[model]
	if m == nil || !m.judged || m.def == nil {
		return UnitGate{}, false
	}
	var win *state.Window
	if !m.timeless {
		win = &w
	}
	ups := map[string]UpstreamState{}
	for _, src := range m.srcs {
		ups[src.Name] = st.upstreamState(src, win)
	}
	ug := Judge(m.def, win, l.r.Env, ups, st.now)
	if m.after != nil {
		ug = withAfter(ug, m.def, m.after.verdicts(w))
	}
	return ug, true
}

// upstreamState is what Judge reads of src for a unit with window w, from
// its index: the registration's shape and the applied rows the level
// selects, as Reader.upstreamState reads them from the store.
func (st *liveState) upstreamState(src spec.Source, w *state.Window) UpstreamState {
	ix := st.edgeIndex(src.RequireCurrent, src.Name)
	sh := ix.shape
	if !sh.registered {
		return UpstreamState{}
	}
	up := UpstreamState{Registered: true, Temporality: sh.temporality, Flexibility: sh.flexibility}
	_, split := st.cur[src.Name]
	split = split && src.RequireCurrent
	if split {
		// Judge tells the outdated rows from the missing ranges by their
		// fingerprints against the current one.
		up.Current = sh.current
	}
	if src.Contract == spec.Exists {
		return up
	}
	a, b := int64(-1<<63), int64(1<<63-1) // every applied row
	if sh.temporality == spec.Temporal {
		up.Start = sh.grid.Start
		rng, _ := sh.grid.ContractRange(st.now, sh.end)
		up.RangeEnd = rng.Until
		if w != nil {
			switch src.Contract {
			case spec.Exact, spec.Encapsulate:
				a, b = w.Since.UnixMicro(), w.Until.UnixMicro()
			case spec.Through:
				a, b = state.Earlier(up.Start, w.Since).UnixMicro(), w.Until.UnixMicro()
			}
		}
		if src.Contract == spec.Whole && up.RangeEnd.After(up.Start) {
			a, b = up.Start.UnixMicro(), up.RangeEnd.UnixMicro()
		}
	}
	up.Applied = ix.appliedRows(a, b)
	if split {
		up.Applied = append(up.Applied, st.outdatedRows(src.Name, a, b)...)
		slices.SortStableFunc(up.Applied, func(x, y AppliedRow) int { return x.Window.Since.Compare(y.Window.Since) })
	}
	return up
}

// appliedRows returns the applied rows overlapping [a, b) (Unix µs), an
// existence row always.
func (ix *upstreamIndex) appliedRows(a, b int64) []AppliedRow {
	rows := ix.rows
	j := sort.Search(len(rows), func(i int) bool { return rows[i].Since >= b })
	i := 0
	if ix.disjoint {
		// Ordered untils: the rows ending by a are a prefix.
		i = sort.Search(j, func(k int) bool { return rows[k].Until > a || rows[k].Since == 0 && rows[k].Until == 0 })
	}
	var out []AppliedRow
	for k := i; k < j; k++ {
		u := rows[k]
		zero := u.Since == 0 && u.Until == 0
		if u.Status != state.CodeApplied || !zero && u.Until <= a {
			continue
		}
		r := AppliedRow{AppliedAt: time.UnixMicro(u.AppliedAt).UTC()}
		if !zero {
			r.Window = state.Window{Since: time.UnixMicro(u.Since).UTC(), Until: time.UnixMicro(u.Until).UTC()}
		}
		out = append(out, r)
	}
	return out
}
