package tui

import (
	"cmp"
	"slices"
	"strings"

	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// The Blocked view's grouping: its units (failed and blocked) by the roots
// that hold them — the incidents the engine traces, which is what repeats
// down a queue (the demo's blocked rows are two roots, as its Incidents
// screen says) — so the screen says each root once and lists what it holds
// under it.

// causeKind is what a cause is, in the order the groups come: what needs
// someone first.
type causeKind int

const (
	// causeFailed: a failed unit, with the units whose reason names
	// exactly its window.
	causeFailed causeKind = iota
	// causeReady: blocked units whose gate passes now (their upstreams
	// caught up): a run applies them.
	causeReady
	// causeMissing: upstream windows not applied (pending, blocked,
	// never loaded).
	causeMissing
	// causeStale: an upstream's rows are older than a freshness limit.
	causeStale
	// causeOther: any other reason (a WHOLE upstream with no complete
	// window yet, a reason this release cannot read).
	causeOther
)

// cause is one group: its root cause and the units under it.
type cause struct {
	key  string
	kind causeKind
	// model and windows are the upstream (or the failed unit's model) and
	// the windows it lacks; detail is the rest of the reason.
	model   string
	windows []state.Window
	detail  string
	// units are indices into the view's units, in queue order (what
	// holds the most first), the failed unit first; holds is the most any
	// of them holds.
	units []int
	holds int
	// total is how many units the cause's incident counts (the blocked
	// units it holds, and a failed root's own units), of which the queue
	// may have read fewer (blockedPage); 0 for a cause of no incident.
	total int
}

// glyph is the status the cause is drawn with.
func (c cause) glyph() themes.Status {
	switch c.kind {
	case causeFailed:
		return themes.Failed
	case causeReady:
		return themes.Pending
	case causeMissing:
		return themes.Missing
	case causeStale:
		return themes.Stale
	}
	return themes.Blocked
}

// label is the cause in words, for its heading: "raw.payments
// 2026-11-30 16:00–17:00 failed", its windows printed by windows
// (common.windows: the header's zone).
func (c cause) label(windows func([]state.Window) string) string {
	switch c.kind {
	case causeFailed:
		return c.model + " " + windows(c.windows) + " failed"
	case causeReady:
		if c.model != "" { // a released incident's units
			return c.model + " " + windows(c.windows) + " ready"
		}
		return "ready: the gate passes now (R runs every ready unit)"
	case causeMissing:
		return c.model + " " + windows(c.windows) + " missing"
	case causeStale:
		return c.model + " stale: " + c.detail
	}
	if c.model == "" {
		return c.detail
	}
	return c.model + ": " + c.detail
}

// groupCauses groups units (in the queue's order) by cause; ready says
// which blocked units' gate passes now. The causes are the roots roots (the
// incidents report over the same units) says hold each unit, so the view
// names the roots the Incidents screen names and counts what each holds the
// same way: a unit held by two roots is listed under both. A unit the report
// did not trace falls back to its stored reason (a failed unit: its own
// window). Groups come failed first, then ready, then by what holds the most
// under them, then the most units.
func groupCauses(units []gate.BlockedUnit, idx []int, ready map[unitKey]bool, roots *gate.IncidentReport) []cause {
	var out []*cause
	byKey := map[string]*cause{}
	get := func(key string, kind causeKind) *cause {
		if c := byKey[key]; c != nil {
			if kind < c.kind {
				c.kind = kind
			}
			return c
		}
		c := &cause{key: key, kind: kind}
		byKey[key] = c
		out = append(out, c)
		return c
	}
	for _, i := range idx {
		u := units[i]
		var cs []*cause
		holders := roots.Holders(u)
		switch {
		case u.Status == state.Blocked && ready[unitRef{u.Model, u.Window}.key()] && !releasedOnly(roots, holders):
			// The live gate says it passes, the report (read a moment
			// apart) names another root: ready, on its own.
			cs = append(cs, get("ready", causeReady))
		default:
			for _, h := range holders {
				cs = append(cs, incidentCause(roots.Incidents[h], get))
			}
		}
		switch {
		case len(cs) > 0:
		case u.Status == state.Failed:
			c := get(u.Model+" "+u.Window.String(), causeFailed)
			c.model, c.windows = u.Model, []state.Window{u.Window}
			cs = append(cs, c)
		default:
			cs = append(cs, reasonCause(u.Reason, get))
		}
		for _, c := range cs {
			c.units = append(c.units, i)
			c.holds = max(c.holds, u.Holds)
		}
	}
	failed := map[unitKey]bool{}
	for _, i := range idx {
		if u := units[i]; u.Status == state.Failed {
			failed[unitRef{u.Model, u.Window}.key()] = true
		}
	}
	for _, c := range out {
		// Missing windows that are all failed units (two failed hours a
		// day waits for) are a failure too, though no one unit heads it.
		if c.kind == causeMissing && allFailed(c.model, c.windows, failed) {
			c.kind = causeFailed
		}
		// The failed unit heads its group, whatever came first.
		slices.SortStableFunc(c.units, func(a, b int) int {
			return cmp.Compare(stuckRank(units[a].Status), stuckRank(units[b].Status))
		})
		// A failed root's heading names its failed windows, not the span
		// from the first to the last (05–06 and 07–08, not 05–08).
		if c.kind == causeFailed && strings.HasPrefix(c.key, "root:") {
			var ws []state.Window
			for _, i := range c.units {
				if u := units[i]; u.Status == state.Failed && u.Model == c.model {
					ws = append(ws, u.Window)
				}
			}
			if len(ws) > 0 {
				c.windows = ws
			}
		}
	}
	// Failures never heal by themselves and ready units only want a run:
	// those come first; the units that wait on something else follow,
	// what holds the most first.
	rank := func(c *cause) int { return min(int(c.kind), int(causeMissing)) }
	slices.SortStableFunc(out, func(a, b *cause) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(b.holds, a.holds),
			cmp.Compare(len(b.units), len(a.units)), cmp.Compare(a.key, b.key))
	})
	res := make([]cause, len(out))
	for i, c := range out {
		res[i] = *c
	}
	return res
}

// stuckRank puts a failed unit before blocked ones.
func stuckRank(s state.UnitStatus) int {
	if s == state.Failed {
		return 0
	}
	return 1
}

// incidentCause is the group of the units an incident holds, drawn as the
// kind of root it is.
func incidentCause(inc gate.Incident, get func(string, causeKind) *cause) *cause {
	key := "root:" + string(inc.Kind) + " " + inc.Model
	var windows []state.Window
	if !inc.Span.IsZero() {
		windows = []state.Window{inc.Span}
	}
	var c *cause
	switch inc.Kind {
	case gate.IncidentFailed:
		c = get(key, causeFailed)
	case gate.IncidentMissing:
		c = get(key, causeMissing)
	case gate.IncidentReleased:
		c = get(key, causeReady)
	case gate.IncidentStale:
		c = get(key, causeStale)
		c.detail = inc.Detail
		if parts := gate.ReasonParts(inc.Detail); len(parts) > 0 && parts[0].Detail != "" {
			c.detail = parts[0].Detail // the model is in the heading already
		}
	default: // a gate error, a blocked or released root, an outdated one
		c = get(key, causeOther)
		c.detail = inc.Kind.Word() + ": " + gate.FirstLine(inc.Detail)
	}
	c.model, c.windows = inc.Model, windows
	c.total = inc.Blocked
	if inc.Kind == gate.IncidentFailed || inc.Kind == gate.IncidentGateError {
		c.total += inc.Units
	}
	return c
}

// releasedOnly reports whether the incidents at holders (indices into
// roots' incidents) are all released ones, and there is one at least: the
// report's word for a unit the live gate finds ready.
func releasedOnly(roots *gate.IncidentReport, holders []int) bool {
	for _, h := range holders {
		if roots.Incidents[h].Kind != gate.IncidentReleased {
			return false
		}
	}
	return len(holders) > 0
}

// reasonCause is the group of a blocked unit by its stored reason: its
// first upstream's missing windows, or its staleness, or the reason as it
// is.
func reasonCause(reason string, get func(string, causeKind) *cause) *cause {
	parts := gate.ReasonParts(reason)
	if len(parts) == 0 {
		c := get("reason:", causeOther)
		c.detail = "no reason recorded"
		return c
	}
	p := parts[0]
	switch {
	case p.Upstream == "":
		c := get("reason:"+p.Detail, causeOther)
		c.detail = p.Detail
		return c
	case len(p.Missing) > 0:
		var key strings.Builder
		key.WriteString(p.Upstream)
		for _, w := range p.Missing {
			key.WriteString(" " + w.String())
		}
		c := get(key.String(), causeMissing)
		c.model, c.windows = p.Upstream, p.Missing
		return c
	case p.Stale:
		c := get(p.Upstream+" stale", causeStale)
		c.model, c.detail = p.Upstream, p.Detail
		return c
	}
	c := get(p.Upstream+": "+p.Detail, causeOther)
	c.model, c.detail = p.Upstream, p.Detail
	return c
}

// allFailed reports whether every window of model in ws is a failed unit.
func allFailed(model string, ws []state.Window, failed map[unitKey]bool) bool {
	for _, w := range ws {
		if !failed[unitRef{model, w}.key()] {
			return false
		}
	}
	return len(ws) > 0
}
