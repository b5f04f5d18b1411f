package gen

import (
	"math/rand/v2"
	"sort"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// status is a planned unit's status, one byte so a million planned units
// stay small.
type status uint8

const (
	pending status = iota
	applied
	failed
	blocked
	running
)

var statusOf = [...]state.UnitStatus{pending: state.Pending, applied: state.Applied, failed: state.Failed, blocked: state.Blocked, running: state.Running}

// unitPlan is one planned unit. Times are Unix microseconds, the stores'
// precision; since and until are both 0 for a timeless existence row.
type unitPlan struct {
	since, until int64
	at           int64 // applied_at; 0 unless applied
	st           status
	// recent marks a row re-applied shortly before AsOf (a re-run last
	// night): the rows that make downstream units stale.
	recent bool
}

// modelPlan is one model's planned units, in window order.
type modelPlan struct {
	units []unitPlan
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func (u unitPlan) window() state.Window {
	if u.since == 0 && u.until == 0 {
		return state.Window{}
	}
	return state.Window{Since: fromMicros(u.since), Until: fromMicros(u.until)}
}

// planState decides every unit of every model: windows, status and
// applied_at. Models are planned in dependency order, so a downstream's
// blocked units and applied_at follow what its upstreams hold.
func planState(p *project, seed int64) []modelPlan {
	r := rand.New(rand.NewPCG(uint64(seed), 0x7374617465)) // "state"
	plans := make([]modelPlan, len(p.models))
	for i, m := range p.models {
		plans[i].units = windowsOf(r, m)
		assignStatuses(r, p, plans, m)
		assignAppliedAt(r, p, plans, m)
	}
	return plans
}

// windowsOf cuts m's units: one per grid window of a fixed model; runs of
// one to three chunks of a flexible one, with an uncovered range now and
// then (coverage a torch removed and nothing re-covered yet).
func windowsOf(r *rand.Rand, m *modelDef) []unitPlan {
	if m.timeless {
		return []unitPlan{{}}
	}
	g := state.Grid{Start: m.start, Interval: m.iv, Location: m.loc}
	rng := state.Window{Since: m.start, Until: m.rangeEnd}
	out := make([]unitPlan, 0, m.target+m.target/8)
	if !m.flex {
		for _, w := range g.WindowsSeq(rng) {
			out = append(out, unitPlan{since: micros(w.Since), until: micros(w.Until)})
		}
		return out
	}
	var (
		group    int
		since    int64
		inGroup  int
		skipping bool
	)
	for _, w := range g.WindowsSeq(rng) {
		if inGroup == 0 {
			group = 1
			switch x := r.IntN(100); {
			case x >= 90:
				group = 3
			case x >= 70:
				group = 2
			}
			since, skipping = micros(w.Since), chance(r, 0.01)
		}
		inGroup++
		if inGroup == group {
			if !skipping {
				out = append(out, unitPlan{since: since, until: micros(w.Until)})
			}
			inGroup = 0
		}
	}
	return out
}

// assignStatuses marks m's units: applied, except a pending tail not run
// yet, random holes of pending, failed and blocked units, and units blocked
// downstream of an upstream's holes.
func assignStatuses(r *rand.Rand, p *project, plans []modelPlan, m *modelDef) {
	us := plans[m.idx].units
	n := len(us)
	for i := range us {
		us[i].st = applied
	}
	if m.timeless {
		us[0].st = []status{applied, pending, failed, blocked}[pickIndex(r, []int{85, 5, 5, 5})]
		return
	}
	if n == 0 {
		return
	}
	tail := int(float64(n) * 0.04 * r.Float64())
	if chance(r, 0.5) {
		tail++
	}
	for i := max(n-tail, 0); i < n; i++ {
		us[i].st = pending
	}
	holes := n / 300
	if r.IntN(300) < n%300 {
		holes++
	}
	for range holes {
		from := r.IntN(n)
		length := 1 + min(int(r.ExpFloat64()*6), 59)
		st := []status{pending, failed, blocked}[pickIndex(r, []int{35, 35, 30})]
		for i := from; i < min(from+length, n); i++ {
			us[i].st = st
		}
	}
	for _, e := range m.ups {
		if e.level != spec.Exact && e.level != spec.Encapsulate && e.level != spec.Through {
			continue
		}
		forEachHole(plans[e.up].units, func(a, b int64) {
			// Half the holes upstream were there when this model last ran
			// over them: its units there are blocked, as a run.
			if !chance(r, 0.5) {
				return
			}
			i := sort.Search(n, func(i int) bool { return us[i].until > a })
			for ; i < n && us[i].since < b; i++ {
				if us[i].st == applied || us[i].st == pending {
					us[i].st = blocked
				}
			}
		})
	}
	// Now and then a worker is loading the newest windows right now.
	if m.idx%40 == 7 {
		for i := max(n-1-r.IntN(3), 0); i < n; i++ {
			us[i].st = running
		}
	}
}

// forEachHole calls fn with each range of a model's history that is not
// applied: each run of units that are not applied, and each uncovered gap
// between units.
func forEachHole(us []unitPlan, fn func(a, b int64)) {
	for i := 0; i < len(us); {
		if i > 0 && us[i-1].until < us[i].since {
			fn(us[i-1].until, us[i].since)
		}
		if us[i].st == applied {
			i++
			continue
		}
		j := i
		for j+1 < len(us) && us[j+1].st != applied && us[j].until == us[j+1].since {
			j++
		}
		fn(us[i].since, us[j].until)
		i = j + 1
	}
}

func pickIndex(r *rand.Rand, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	n := r.IntN(total)
	for i, w := range weights {
		if n < w {
			return i
		}
		n -= w
	}
	return len(weights) - 1
}

// assignAppliedAt gives each run of applied units one applied_at: history
// older than the model's backfill was loaded at the backfill, later windows
// shortly after they ended, and never before the upstream rows they read
// were applied — unless the upstream re-ran them recently, which leaves the
// downstream stale half the time. One model in four re-ran a run of its own
// recently.
func assignAppliedAt(r *rand.Rand, p *project, plans []modelPlan, m *modelDef) {
	us := plans[m.idx].units
	asOf := micros(AsOf)
	if m.timeless {
		if us[0].st == applied {
			us[0].at = asOf - int64(time.Hour/time.Microsecond)*(1+r.Int64N(240))
		}
		return
	}
	minute := int64(time.Minute / time.Microsecond)
	backfill := asOf - int64(24*time.Hour/time.Microsecond)*(20+r.Int64N(280))
	grainLag := int64(m.iv.Nominal()/time.Microsecond) / 20
	type run struct{ from, to int }
	var runs []run
	for i, k := 0, 0; i < len(us); {
		if us[i].st != applied {
			i++
			continue
		}
		limit := 100 + r.IntN(1900)
		j := i
		for j+1 < len(us) && j+1-i < limit && us[j+1].st == applied {
			j++
		}
		runs = append(runs, run{i, j + 1})
		at := max(backfill+int64(k)*90*1_000_000, us[j].until+grainLag+minute*(2+r.Int64N(120)))
		at = min(at, asOf-minute*(1+r.Int64N(30)))
		lo, hi := us[i].since, us[j].until
		for _, e := range m.ups {
			if e.level != spec.Exact && e.level != spec.Encapsulate && e.level != spec.Through {
				continue
			}
			upMax, recent := newestApplied(plans[e.up].units, lo, hi)
			if upMax <= at || (recent && chance(r, 0.5)) {
				continue
			}
			at = min(upMax+minute*(1+r.Int64N(30)), asOf-1_000_000)
		}
		for x := i; x <= j; x++ {
			us[x].at = at
		}
		k++
		i = j + 1
	}
	if len(runs) > 0 && chance(r, 0.25) {
		rn := runs[r.IntN(len(runs))]
		at := asOf - minute*(10+r.Int64N(2150))
		for x := rn.from; x < rn.to; x++ {
			us[x].at, us[x].recent = at, true
		}
	}
}

// newestApplied is the newest applied_at of the applied units of us that
// overlap [a, b), and whether it belongs to a recent re-run.
func newestApplied(us []unitPlan, a, b int64) (at int64, recent bool) {
	i := sort.Search(len(us), func(i int) bool { return us[i].until > a })
	for ; i < len(us) && us[i].since < b; i++ {
		if us[i].st == applied && us[i].at > at {
			at, recent = us[i].at, us[i].recent
		}
	}
	return at, recent
}

// summarize counts the plan: units by status, stale units and edges by
// level.
func summarize(p *project, plans []modelPlan) Summary {
	s := Summary{AsOf: AsOf, Models: len(p.models), Counts: map[state.UnitStatus]int{}, Levels: map[spec.ContractLevel]int{}}
	for _, st := range state.Statuses {
		s.Counts[st] = 0
	}
	for i, m := range p.models {
		us := plans[i].units
		s.Units += len(us)
		for _, u := range us {
			s.Counts[statusOf[u.st]]++
		}
		stale := make([]bool, len(us))
		for _, e := range m.ups {
			s.Levels[e.level]++
			if e.level != spec.Exact && e.level != spec.Encapsulate && e.level != spec.Through {
				continue
			}
			for k, u := range us {
				if u.st != applied || stale[k] {
					continue
				}
				if at, _ := newestApplied(plans[e.up].units, u.since, u.until); at > u.at {
					stale[k] = true
					s.Stale++
				}
			}
		}
	}
	return s
}
