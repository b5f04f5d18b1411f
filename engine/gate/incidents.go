package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// IncidentKind is what an incident's root cause is.
type IncidentKind string

// The kinds of root cause, in the order a tie in holds lists them: what an
// operator must fix first comes first.
const (
	// IncidentFailed: units of the model failed, or failed and wait for a
	// retry.
	IncidentFailed IncidentKind = "failed"
	// IncidentGateError: a gate that cannot be evaluated (a hard error);
	// no load fixes it, the spec or the stored definition must change.
	IncidentGateError IncidentKind = "gate_error"
	// IncidentStale: applied rows of the model are older than a
	// downstream's freshness contract allows.
	IncidentStale IncidentKind = "stale"
	// IncidentOutdated: applied rows of the model were built under an
	// earlier definition, and a downstream's require_current contract
	// waits for them to be rebuilt (run --outdated).
	IncidentOutdated IncidentKind = "outdated"
	// IncidentMissing: windows of the model that downstream units need are
	// not loaded: pending, running, or never prefilled.
	IncidentMissing IncidentKind = "missing"
	// IncidentBlocked: units blocked with no upstream unit to name (a WHOLE
	// upstream with no complete window yet, an upstream never registered);
	// their blocked_reason says why.
	IncidentBlocked IncidentKind = "blocked"
	// IncidentReleased: units stored blocked whose gate is satisfied now;
	// the next run applies them.
	IncidentReleased IncidentKind = "released"
)

// IncidentKinds lists every kind, in kindRank's order.
var IncidentKinds = []IncidentKind{IncidentFailed, IncidentGateError, IncidentStale, IncidentOutdated, IncidentMissing, IncidentBlocked, IncidentReleased}

var kindRank = map[IncidentKind]int{IncidentFailed: 0, IncidentGateError: 1, IncidentStale: 2, IncidentOutdated: 3,
	IncidentMissing: 4, IncidentBlocked: 5, IncidentReleased: 6}

// severity splits the kinds in two: a failure, a gate error or an outdated
// root never heals by itself — someone must read its error and act, or
// rebuild (a run in the default mode never re-runs an applied window) — while stale, missing
// and blocked units wait for a load that may already be scheduled. Broken
// roots come first, then each class by what it holds.
func (k IncidentKind) severity() int {
	if k == IncidentFailed || k == IncidentGateError || k == IncidentOutdated {
		return 0
	}
	return 1
}

// MaxTracedBlocked bounds the blocked units whose root cause Incidents
// walks (what holds the most first); a blocked unit past it is put on the incident
// of a traced unit of its model with the same blocked reason, or counted in
// IncidentReport.Untraced when there is none.
const MaxTracedBlocked = 500

// Incident is one root cause and what waits on it: the failed units of one
// model are one incident however many windows failed, the stale rows of one
// model one more.
type Incident struct {
	Kind     IncidentKind
	Model    string
	Pipeline string
	// Span runs from the first root unit's since to the last one's until;
	// zero for a timeless model.
	Span state.Window
	// Units counts the root's units: failed (and retrying) units, stale
	// rows, missing windows, or the blocked units themselves.
	Units int
	// Since is when it began to hurt: the oldest change of a root unit or
	// of a blocked unit traced to it, and for a failed root when its units
	// began failing (failingSince: the first of the failed attempts in a
	// row that end a unit's history), so a retry that fails again does not
	// make it new.
	Since time.Time
	// Detail is what an operator reads first: the newest error (its first
	// lines, ErrorLines), the stale verdict, the gate error or the blocked
	// reason.
	Detail string
	// Retry is the soonest retry of a failed root whose units wait for
	// one (the next try of the model's retry.attempts, and when); nil when
	// none does.
	Retry *state.RetryWait
	// Blocked counts the blocked units it holds: whose root-cause chains
	// (one for each upstream that holds them back) end here. A unit held
	// by two roots counts under both. Releases counts those it alone
	// holds: fixing it alone releases them. BlockedModels names the
	// models of the units it holds, sorted.
	Blocked       int
	Releases      int
	BlockedModels []string
	// Reach counts the units downstream of Model (through gated edges)
	// that Span reaches and that are not applied, as a blocked unit's
	// Holds counts them, plus the root's own units when they are blocked
	// ones (kinds blocked and released). Span covers the gaps between root
	// units too, and a pending unit in reach may never be judged, so it is
	// an upper bound of what the root will hold: it only orders incidents
	// that hold as many units (Blocked), and no surface shows it.
	Reach int
	// Focus is the unit `why` explains for it: the traced blocked unit
	// that holds the most, or the newest root unit when nothing is blocked
	// behind it.
	Focus UnitRef
}

// UnitRef names a unit: its model and window (zero when timeless).
type UnitRef struct {
	Model  string
	Window state.Window
}

// WhyCommand is the command line that explains u in the environment of
// suffix ("" the default one), as an operator pastes it into a shell:
// "bollhav why core.daily_revenue --at 2026-12-03T00:00:00Z --env dev".
// Both `incidents` (its "explain:" line) and the UI's copy (y) write it.
// A word with a character a shell would read is quoted.
func (u UnitRef) WhyCommand(suffix string) string {
	cmd := "bollhav why " + shellWord(u.Model)
	if !u.Window.IsZero() {
		cmd += " --at " + state.FormatTime(u.Window.Since)
	}
	if suffix != "" {
		cmd += " --env " + shellWord(suffix)
	}
	return cmd
}

// shellWord is s as one word of a POSIX shell: as it is when every
// character is plain, else in single quotes.
func shellWord(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-@%+=:,/", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// IncidentReport is every incident of the environment at Now: failures
// and gate errors first, then the rest, each by what it holds.
type IncidentReport struct {
	Now       time.Time
	Incidents []Incident
	// Untraced counts blocked units past MaxTracedBlocked that share no
	// model and reason with a traced unit.
	Untraced int
	// Held counts the blocked units the incidents hold, each once, however
	// many roots hold it.
	Held int
	// Glance marks a first look (Reader.Glance): failed roots only, no
	// holds, with Tracing blocked units of TracingModels models still to
	// be traced. False in a report of Incidents, whose Tracing is 0.
	Glance        bool
	Tracing       int
	TracingModels int

	// unitHolders are the incidents (indices into Incidents) that hold
	// each traced blocked unit (key model\x00window), as its own chains
	// end; holders those that hold the untraced blocked units of a model
	// with one reason (key model\x00reason), as the first traced unit with
	// that reason; failedAt the incident of a model's failed units.
	unitHolders map[string][]int
	holders     map[string][]int
	failedAt    map[string]int
	// Recheck is, when no incident and no untraced unit was found, the
	// gate judged now for every unit that is not applied (engine.Recheck,
	// what `blocked --recheck` reports): units can be held with no
	// incident to name — a FAILURE alert that did not fire, units
	// re-queued while their upstream is not loaded. Nil otherwise, and
	// in a report of Reader.Incidents alone.
	Recheck *SweepReport
}

// Holders are the incidents (indices into Incidents) that hold bu: for a
// failed unit, the incident of its model's failures; for a blocked unit,
// every root its chains end at, as the report counted it (a unit held by
// two roots is under both). None for a unit the report did not trace (past
// MaxTracedBlocked with a reason no traced unit shares) or that only an
// idle after: edge holds. The Blocked view groups by them, so it names the
// roots Incidents names.
func (r *IncidentReport) Holders(bu BlockedUnit) []int {
	if r == nil {
		return nil
	}
	if bu.Status == state.Failed {
		if i, ok := r.failedAt[bu.Model]; ok {
			return []int{i}
		}
		return nil
	}
	if hs, ok := r.unitHolders[bu.Model+"\x00"+bu.Window.String()]; ok {
		return hs
	}
	return r.holders[bu.Model+"\x00"+bu.Reason]
}

// AllClear reports whether nothing is failed, blocked, stale or otherwise
// held: no incident, no untraced unit, and Recheck finds no held unit. A
// first look, or a report without Recheck, never says so.
func (r *IncidentReport) AllClear() bool {
	return !r.Glance && len(r.Incidents) == 0 && r.Untraced == 0 && r.Recheck != nil && r.Recheck.Held() == 0
}

// Incidents groups everything failed, blocked or stale into root causes:
// every failed or retrying unit is a root; every blocked unit is walked
// upstream as Why walks it (the root-cause chains, one for each upstream
// that holds it back) and counted on every root they end at. It only
// reads the store.
//
// It never holds every blocked unit: the MaxTracedBlocked that hold the
// most, in Blocked's order, are traced, and every other is put on a
// traced incident by model and reason. On a state.StuckReader both come
// from the store: the first page of BlockedPages, and the grouped counts
// by model and reason (incidents_grouped.go), so a million blocked units
// cost a grouped read, not a million rows. Elsewhere the blocked units are
// read twice (incidentsByScan). Either way the two reads are not one
// snapshot, so a unit blocked between them is counted by its reason like
// any untraced one.
func (g *Reader) Incidents(ctx context.Context) (*IncidentReport, error) {
	lin, err := g.gatedLineage(ctx)
	if err != nil {
		return nil, err
	}
	counter := newReachCounter(g, lin, outstandingStatuses)
	counts, err := g.statusCounts(ctx)
	if err != nil {
		return nil, err
	}
	if sr, ok := g.Store.(state.StuckReader); ok {
		return g.incidentsFromGroups(ctx, sr, lin, counts, counter)
	}
	return g.incidentsByScan(ctx, lin, counts, counter)
}

// incidentsByScan is Incidents on a store without the grouped read: the
// first scan of the blocked units keeps the MaxTracedBlocked with the most
// holds, the second hands over every other, one at a time.
func (g *Reader) incidentsByScan(ctx context.Context, lin *gatedLineage, counts []state.ModelCounts, counter *reachCounter) (*IncidentReport, error) {
	failures := g.failuresAhead(ctx, lin, counts)
	defer failures.abandon()
	// The indexes a blocked unit's holds need are read before the scan,
	// for every model the kept counts show blocked units of: counting
	// inside the scan holds a second connection of the pool while it
	// reads. Only a model blocked after the counts were read has its
	// downstream indexes read inside the scan.
	for _, c := range counts {
		if c.Counts[state.Blocked] == 0 {
			continue
		}
		for d := range lin.downstreamReach(c.Model, reachSame) {
			if _, err := counter.index(ctx, d); err != nil {
				return nil, err
			}
		}
	}
	top := &mostHolds{limit: MaxTracedBlocked}
	q := state.UnitQuery{Env: g.Env.Suffix, Statuses: []state.UnitStatus{state.Blocked}}
	err := g.Store.ScanUnits(ctx, q, func(u state.Unit) error {
		bu := blockedOf(u, lin)
		var err error
		if bu.Holds, err = counter.count(ctx, bu.Model, bu.Window); err != nil {
			return err
		}
		top.add(bu)
		return nil
	})
	if err != nil && !errors.Is(err, state.ErrNotFound) {
		return nil, fmt.Errorf("reading the blocked units: %w", err)
	}
	traced := top.sorted()
	seen := make(map[string]bool, len(traced))
	for _, bu := range traced {
		seen[bu.Model+"\x00"+bu.Window.String()] = true
	}
	rest := func(fn func(heldGroup) error) error {
		err := g.Store.ScanUnits(ctx, q, func(u state.Unit) error {
			if seen[u.Model+"\x00"+u.Window.String()] {
				return nil
			}
			return fn(heldGroup{model: u.Model, reason: u.BlockedReason, units: 1, changed: u.UpdatedAt})
		})
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return fmt.Errorf("reading the blocked units: %w", err)
		}
		return nil
	}
	return g.incidents(ctx, failures, counter, traced, rest)
}

// heldGroup is blocked units past the traced ones that share a model and
// a stored reason: one unit of a scan, or a group of the grouped read.
type heldGroup struct {
	model, reason string
	units         int
	// changed is the earliest updated_at of the units, or of a group
	// with its traced units.
	changed time.Time
	// exact, when set, is the earliest updated_at of the group's untraced
	// units alone: read when a traced unit of the group went to other
	// roots and may be the one changed names.
	exact func() (time.Time, error)
}

// IncidentsOf is Incidents over blocked, the environment's blocked units as
// Blocked lists them (what holds the most first), all held in a list: the
// full computation the grouped and scanned reports are tested against
// (TestIncidentsStreamedEqualTheListed).
func (g *Reader) IncidentsOf(ctx context.Context, blocked []BlockedUnit) (*IncidentReport, error) {
	lin, err := g.gatedLineage(ctx)
	if err != nil {
		return nil, err
	}
	traced := blocked[:min(len(blocked), MaxTracedBlocked)]
	rest := func(fn func(heldGroup) error) error {
		for _, bu := range blocked[len(traced):] {
			if err := fn(heldGroup{model: bu.Model, reason: bu.Reason, units: 1, changed: bu.UpdatedAt}); err != nil {
				return err
			}
		}
		return nil
	}
	counts, err := g.statusCounts(ctx)
	if err != nil {
		return nil, err
	}
	failures := g.failuresAhead(ctx, lin, counts)
	defer failures.abandon()
	return g.incidents(ctx, failures, newReachCounter(g, lin, outstandingStatuses), traced, rest)
}

// statusCounts is the environment's kept unit counts by model and status.
func (g *Reader) statusCounts(ctx context.Context) ([]state.ModelCounts, error) {
	counts, err := g.Store.StatusCounts(ctx, g.Env.Suffix)
	if err != nil {
		return nil, fmt.Errorf("reading the unit counts: %w", err)
	}
	return counts, nil
}

// incidents builds the report: the failed roots, then each of traced (the
// blocked units holding the most, most first) walked to its root, then
// every unit rest yields put on the incident of a traced unit of its model
// with the very same reason, or counted untraced. failures is the report's
// builder, its failed roots read (failuresAhead) while the caller read
// traced.
func (g *Reader) incidents(ctx context.Context, failures *failuresRead, counter *reachCounter,
	traced []BlockedUnit, rest func(func(heldGroup) error) error) (*IncidentReport, error) {
	b, err := failures.wait()
	if err != nil {
		return nil, err
	}
	// Past the traced ones, a blocked unit joins the incident of a traced
	// unit of its model with the very same reason (the same missing range,
	// the same stale verdict), and is counted untraced otherwise: a guess
	// by model alone would credit one root with another's units.
	byReason := map[string][]*Incident{}
	byUnit := make(map[string][]*Incident, len(traced))
	idle := map[string]bool{}
	for _, bu := range traced {
		incs, err := b.trace(ctx, bu)
		if err != nil {
			return nil, err
		}
		byUnit[bu.Model+"\x00"+bu.Window.String()] = incs
		if len(incs) == 0 {
			idle[bu.Model+"\x00"+bu.Reason] = true // an alert that did not fire: nothing to fix
			continue
		}
		for _, inc := range incs {
			if inc.Blocked == 0 { // traced in Blocked's order: what holds the most first
				inc.Focus = UnitRef{Model: bu.Model, Window: bu.Window}
			}
		}
		b.behind(incs, heldGroup{model: bu.Model, reason: bu.Reason, units: 1, changed: bu.UpdatedAt})
		if key := bu.Model + "\x00" + bu.Reason; byReason[key] == nil {
			byReason[key] = incs
		}
	}
	// A traced unit whose roots are not those the rest of its reason
	// joins: a group's earliest change may be its, which must not age
	// the others' roots (heldGroup.exact).
	apart := map[string][]time.Time{}
	for _, bu := range traced {
		key := bu.Model + "\x00" + bu.Reason
		if !slices.Equal(byUnit[bu.Model+"\x00"+bu.Window.String()], byReason[key]) {
			apart[key] = append(apart[key], bu.UpdatedAt)
		}
	}
	err = rest(func(h heldGroup) error {
		key := h.model + "\x00" + h.reason
		if incs := byReason[key]; incs != nil {
			if h.exact != nil && slices.ContainsFunc(apart[key], func(t time.Time) bool { return !t.After(h.changed) }) {
				var err error
				if h.changed, err = h.exact(); err != nil {
					return err
				}
			}
			b.behind(incs, h)
		} else if !idle[key] {
			b.report.Untraced += h.units
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := b.impacts(ctx, counter); err != nil {
		return nil, err
	}
	b.report.Now = b.an.now
	b.indexHolders(byUnit, byReason)
	return &b.report, nil
}

// indexHolders keeps, by traced unit (byUnit) and by model and reason
// (byReason), the indices of the incidents that hold blocked units, and the
// index of each model's failed incident, for IncidentReport.Holders.
func (b *incidentBuilder) indexHolders(byUnit, byReason map[string][]*Incident) {
	at := make(map[string]int, len(b.report.Incidents))
	r := &b.report
	r.failedAt = map[string]int{}
	for i, inc := range r.Incidents {
		at[string(inc.Kind)+" "+inc.Model] = i
		if inc.Kind == IncidentFailed || inc.Kind == IncidentGateError {
			if _, ok := r.failedAt[inc.Model]; !ok {
				r.failedAt[inc.Model] = i
			}
		}
	}
	index := func(by map[string][]*Incident) map[string][]int {
		out := make(map[string][]int, len(by))
		for key, incs := range by {
			hs := make([]int, 0, len(incs)) // empty, not nil: traced, held by none
			for _, inc := range incs {
				hs = append(hs, at[string(inc.Kind)+" "+inc.Model])
			}
			slices.Sort(hs) // the report's order: failures first
			out[key] = hs
		}
		return out
	}
	r.unitHolders, r.holders = index(byUnit), index(byReason)
}

// mostHolds keeps the limit blocked units that come first in Blocked's
// order (what holds the most first) of those added, in bounded memory: it sorts and
// cuts whenever it holds twice the limit.
type mostHolds struct {
	limit int
	units []BlockedUnit
}

func (m *mostHolds) add(bu BlockedUnit) {
	m.units = append(m.units, bu)
	if len(m.units) >= 2*m.limit {
		m.cut()
	}
}

func (m *mostHolds) cut() {
	slices.SortStableFunc(m.units, stuckOrder)
	clear(m.units[min(len(m.units), m.limit):])
	m.units = m.units[:min(len(m.units), m.limit)]
}

// sorted is what it kept, in Blocked's order.
func (m *mostHolds) sorted() []BlockedUnit {
	m.cut()
	return m.units
}

// blockedOf is a blocked unit as Blocked lists it, its holds not counted.
func blockedOf(u state.Unit, lin *gatedLineage) BlockedUnit {
	return BlockedUnit{Model: u.Model, Pipeline: lin.pipeline[u.Model], Window: u.Window, Status: u.Status,
		Reason: u.BlockedReason, Error: u.Error, Attempts: u.Attempts, UpdatedAt: u.UpdatedAt}
}

// incidentBuilder accumulates incidents by kind and model.
type incidentBuilder struct {
	g      *Reader
	lin    *gatedLineage
	an     *analysis
	byKey  map[string]*Incident
	order  []string
	seen   map[string]map[windowKey]bool // incident key → root windows counted
	report IncidentReport
}

func (b *incidentBuilder) get(kind IncidentKind, model string) *Incident {
	k := string(kind) + " " + model
	if inc, ok := b.byKey[k]; ok {
		return inc
	}
	inc := &Incident{Kind: kind, Model: model, Pipeline: b.lin.pipeline[model]}
	b.byKey[k] = inc
	b.order = append(b.order, k)
	b.seen[k] = map[windowKey]bool{}
	return inc
}

// root counts w (a root unit's window) on inc once, widening its span.
func (b *incidentBuilder) root(inc *Incident, w state.Window, changed time.Time) {
	k := string(inc.Kind) + " " + inc.Model
	if b.seen[k][keyOf(w)] {
		return
	}
	b.seen[k][keyOf(w)] = true
	inc.Units++
	widenSpan(inc, w)
	inc.Since = earliest(inc.Since, changed)
}

// windowKey is a window as a map key: its bounds in microseconds, the
// store's precision. A report counts every failed unit's window once
// (73,000 at 10M units); as strings they took 15 MB and their formatting.
type windowKey [2]int64

func keyOf(w state.Window) windowKey {
	if w.IsZero() {
		return windowKey{}
	}
	return windowKey{w.Since.UnixMicro(), w.Until.UnixMicro()}
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// addFailures makes each model's failed units, and its pending units that
// failed and wait for a retry, one incident (failedRoot). counts are the
// kept unit counts: a model with no failed unit, and no pending unit it
// would retry, has no failed root.
func (b *incidentBuilder) addFailures(ctx context.Context, counts []state.ModelCounts) error {
	roots := map[string]*failedRoot{}
	var suspects []string
	for _, c := range counts {
		r := &failedRoot{}
		if m, _, err := b.an.model(ctx, c.Model); err == nil {
			r.m = m
			if m.Retry.Retries() {
				// Only a model that retries has pending units waiting
				// for a retry: the others' pending units do not count.
				r.retries, r.budget = c.Counts[state.Pending] > 0, m.Retry.Attempts
			}
		}
		if c.Counts[state.Failed] > 0 || r.retries {
			roots[c.Model] = r
			suspects = append(suspects, c.Model)
		}
	}
	add := func(u state.Unit) error {
		if r := roots[u.Model]; r != nil {
			b.addFailing(r, u)
		}
		return nil
	}
	if sr, ok := b.g.Store.(state.StuckReader); ok {
		// One read of the environment's failed and waiting units from
		// their partial index, however many models retry.
		if err := sr.FailingUnits(ctx, b.g.Env.Suffix, add); err != nil {
			return fmt.Errorf("reading the failed units: %w", err)
		}
	} else {
		for _, model := range suspects {
			statuses := []state.UnitStatus{state.Failed}
			if roots[model].retries {
				statuses = append(statuses, state.Pending)
			}
			q := state.UnitQuery{Env: b.g.Env.Suffix, Model: model, Statuses: statuses}
			if err := b.g.Store.ScanUnits(ctx, q, add); err != nil && !errors.Is(err, state.ErrNotFound) {
				return fmt.Errorf("reading the failed units of %s: %w", model, err)
			}
		}
	}
	// After the read, not inside it: each of these reads takes a second
	// connection of the pool while a read holds one.
	slices.Sort(suspects)
	for _, model := range suspects {
		if err := b.finishFailed(ctx, model, roots[model]); err != nil {
			return err
		}
	}
	return nil
}

// failedRoot is what addFailures keeps of one model's failed units and
// waiting retries as they are read, for finishFailed: a few units, not
// all of them.
type failedRoot struct {
	m *spec.Model // nil when its definition cannot be read
	// retries: the model retries and has pending units, some of which
	// may wait for a retry; budget is its attempts.
	retries bool
	budget  int
	newest  time.Time
	// soonest is the waiting retry due first, newestFailed the failed
	// unit that failed last; tried are units tried more than once, whose
	// histories date the root (maxSinceHistories).
	soonest, newestFailed *state.Unit
	tried                 []state.Unit
}

// addFailing counts u on its model's failed incident when it failed, or
// failed and waits for a retry its model gives it; any other unit is
// passed over.
func (b *incidentBuilder) addFailing(r *failedRoot, u state.Unit) {
	retrying := r.retries && u.Status == state.Pending && u.Error != "" && u.NotBefore != nil
	if u.Status != state.Failed && !retrying {
		return
	}
	inc := b.get(IncidentFailed, u.Model)
	b.root(inc, u.Window, u.UpdatedAt)
	if u.Attempts > 1 && len(r.tried) < maxSinceHistories {
		r.tried = append(r.tried, u)
	}
	if !u.UpdatedAt.Before(r.newest) {
		r.newest = u.UpdatedAt
		inc.Detail = ErrorLines(u.Error)
		inc.Focus = UnitRef{Model: u.Model, Window: u.Window}
	}
	// Copied only when kept: taking u's own address would move every
	// unit read to the heap (73,080 of them at 10M units).
	if retrying && (r.soonest == nil || u.NotBefore.Before(*r.soonest.NotBefore)) {
		kept := u
		r.soonest = &kept
	}
	if u.Status == state.Failed && (r.newestFailed == nil || !u.UpdatedAt.Before(r.newestFailed.UpdatedAt)) {
		kept := u
		r.newestFailed = &kept
	}
}

// finishFailed dates model's failed incident, tells a hard gate error
// from a failure of the work, and says which retry comes next.
func (b *incidentBuilder) finishFailed(ctx context.Context, model string, r *failedRoot) error {
	inc := b.failedOf(model)
	if inc == nil {
		return nil
	}
	since, err := b.g.failingSince(ctx, r.tried)
	if err != nil {
		return err
	}
	inc.Since = earliest(inc.Since, since)
	if r.newestFailed != nil && r.m != nil {
		// A hard gate error fails a unit too, with no "gate:" mark in the
		// store. It is the same for every unit of the model, and told
		// from the registrations alone: a failure no load fixes.
		hard, err := b.g.hardError(ctx, b.an.shapes, r.m)
		if err != nil {
			return err
		}
		if hard != nil {
			b.rekey(IncidentFailed, IncidentGateError, model).Detail = FirstLine(hard.Error())
		}
	}
	if r.soonest != nil {
		// Its history says which try comes next.
		history, err := b.g.Store.Attempts(ctx, r.soonest.ID)
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return fmt.Errorf("reading the attempts of %s %s: %w", model, r.soonest.Window, err)
		}
		w := state.RetryWaitOf(*r.soonest, history, r.budget)
		if err := state.NoteEndedRun(ctx, b.g.Store, w, *r.soonest); err != nil {
			return err
		}
		b.failedOf(model).Retry = w
	}
	return nil
}

// maxSinceHistories bounds the units of a failed root whose attempt
// history is read for its age (failingSince): a unit that failed on its
// first try needs none, and a rerun retries a root's units together, so a
// few tell when it began as well as all would.
const maxSinceHistories = 3

// failingSince is when the failures of units (failed, or pending for
// their retry, each tried more than once) began: for each, the first of
// the failed attempts that end its history with no attempt between them
// that did not fail (attempt numbers without a gap), the earliest of
// them; zero for none. A failed root's age is the incident's, not its last
// try's: a rerun that fails again rewrites a unit's updated_at, and
// reading that alone, "for 0s" followed every retry.
func (g *Reader) failingSince(ctx context.Context, units []state.Unit) (time.Time, error) {
	var since time.Time
	for _, u := range units {
		history, err := g.Store.Attempts(ctx, u.ID)
		if err != nil && !errors.Is(err, state.ErrNotFound) {
			return time.Time{}, fmt.Errorf("reading the attempts of %s %s: %w", u.Model, u.Window, err)
		}
		since = earliest(since, StreakStart(history, u.Attempts))
	}
	return since, nil
}

// StreakStart is when the unbroken run of failed attempts that ends a
// unit's history began: history is its failed attempts, oldest first
// (state.Store.Attempts), attempts its attempt count now. Zero when the
// newest failure is not the unit's latest attempt (a later one did not
// fail, or the history predates it).
func StreakStart(history []state.Attempt, attempts int) time.Time {
	n := len(history)
	if n == 0 || history[n-1].Number != attempts {
		return time.Time{}
	}
	i := n - 1
	for i > 0 && history[i-1].Number == history[i].Number-1 {
		i--
	}
	return history[i].At
}

// trace walks bu's root-cause chains — one for each upstream that holds it
// back (analysis.allRoots) — and returns the incidents they end at, each
// once; none for a unit held only by idle after: edges (AfterVerdict.Idle).
// A unit held by two roots counts under both.
func (b *incidentBuilder) trace(ctx context.Context, bu BlockedUnit) ([]*Incident, error) {
	m, _, err := b.an.model(ctx, bu.Model)
	if err != nil {
		// A model this bollhav cannot read: its reason is all there is.
		inc := b.get(IncidentBlocked, bu.Model)
		b.root(inc, bu.Window, bu.UpdatedAt)
		inc.Detail = cmp.Or(inc.Detail, FirstLine(bu.Reason))
		return []*Incident{inc}, nil
	}
	u := &state.Unit{Model: bu.Model, Window: bu.Window, Status: state.Blocked, BlockedReason: bu.Reason, UpdatedAt: bu.UpdatedAt}
	ug, err := b.g.CachedUnit(ctx, b.an.shapes, m, windowOf(m, bu.Window), b.an.now)
	if err != nil {
		return nil, err
	}
	if ug.idleOnly() {
		return nil, nil
	}
	self := linkOf(m, bu.Window, u)
	roots, err := b.an.allRoots(ctx, m, self, &ug)
	if err != nil {
		return nil, err
	}
	var out []*Incident
	for _, last := range roots {
		lastGate := &ug
		if chainKey(last) != chainKey(self) && last.Status == state.Blocked {
			// The chain stopped at a blocked unit upstream: its own gate
			// says whether it is released or names nothing further.
			lm, _, err := b.an.model(ctx, last.Model)
			if err != nil {
				return nil, err
			}
			g, err := b.g.CachedUnit(ctx, b.an.shapes, lm, windowOf(lm, last.Window), b.an.now)
			if err != nil {
				return nil, err
			}
			lastGate = &g
		}
		inc := b.classify(last, lastGate)
		b.root(inc, last.Window, bu.UpdatedAt)
		if !slices.Contains(out, inc) {
			out = append(out, inc)
		}
	}
	return out, nil
}

// classify is the incident a root link belongs to, given its gate when it
// is a blocked unit.
func (b *incidentBuilder) classify(last ChainLink, lastGate *UnitGate) *Incident {
	var inc *Incident
	switch {
	case last.Status == state.Blocked && lastGate.Err != nil, strings.HasPrefix(last.Detail, "gate: ") && last.Status != state.Failed:
		inc = b.get(IncidentGateError, last.Model)
		inc.Detail = cmp.Or(inc.Detail, FirstLine(strings.TrimPrefix(last.Detail, "gate: ")))
	case last.Status == state.Blocked && lastGate.Satisfied:
		inc = b.get(IncidentReleased, last.Model)
		inc.Detail = "its upstreams caught up: the next run applies it"
	case last.Status == state.Blocked:
		inc = b.get(IncidentBlocked, last.Model)
		inc.Detail = cmp.Or(inc.Detail, FirstLine(last.Detail))
	case last.Status == state.Failed:
		if inc = b.failedOf(last.Model); inc == nil {
			inc = b.get(IncidentFailed, last.Model)
		}
		inc.Detail = cmp.Or(inc.Detail, ErrorLines(last.Detail))
	case b.retrying(last):
		// A pending unit that failed and waits for its retry: the failed
		// incident addFailures made for it.
		inc = b.failedOf(last.Model)
	case last.Stale:
		inc = b.get(IncidentStale, last.Model)
		inc.Detail = cmp.Or(inc.Detail, FirstLine(last.Detail))
	case last.Outdated:
		inc = b.get(IncidentOutdated, last.Model)
		inc.Detail = cmp.Or(inc.Detail, OutdatedText+": rebuild with run --outdated "+last.Model)
	default:
		inc = b.get(IncidentMissing, last.Model)
		if inc.Detail == "" {
			inc.Detail = fmt.Sprintf("%s is %s: not loaded", windowText(last.Window), last.Status)
		}
	}
	return inc
}

// retrying is whether l is a pending unit addFailures counted as failed.
func (b *incidentBuilder) retrying(l ChainLink) bool {
	if l.Status != state.Pending || b.failedOf(l.Model) == nil {
		return false
	}
	return b.seen[string(IncidentFailed)+" "+l.Model][keyOf(l.Window)] || b.seen[string(IncidentGateError)+" "+l.Model][keyOf(l.Window)]
}

// failedOf is the incident addFailures made of model's failed units — kind
// failed, or gate_error — or nil.
func (b *incidentBuilder) failedOf(model string) *Incident {
	if inc := b.byKey[string(IncidentFailed)+" "+model]; inc != nil {
		return inc
	}
	return b.byKey[string(IncidentGateError)+" "+model]
}

// rekey turns model's incident of kind from into one of kind to.
func (b *incidentBuilder) rekey(from, to IncidentKind, model string) *Incident {
	fk, tk := string(from)+" "+model, string(to)+" "+model
	inc := b.byKey[fk]
	inc.Kind = to
	delete(b.byKey, fk)
	b.byKey[tk] = inc
	b.seen[tk] = b.seen[fk]
	delete(b.seen, fk)
	for i, k := range b.order {
		if k == fk {
			b.order[i] = tk
		}
	}
	return inc
}

// windowText is a window as incident details name it.
func windowText(w state.Window) string {
	if w.IsZero() {
		return "its existence row"
	}
	return w.String()
}

// behind counts h's blocked units on every incident that holds them, and
// as released by the one incident alone that holds them, if one does. The
// report counts each once.
func (b *incidentBuilder) behind(incs []*Incident, h heldGroup) {
	b.report.Held += h.units
	for _, inc := range incs {
		inc.Blocked += h.units
		if len(incs) == 1 {
			inc.Releases += h.units
		}
		if !slices.Contains(inc.BlockedModels, h.model) {
			inc.BlockedModels = append(inc.BlockedModels, h.model)
			slices.Sort(inc.BlockedModels)
		}
		inc.Since = earliest(inc.Since, h.changed)
	}
}

// impacts counts each incident's reach with counter (its indexes already
// read when the blocked units' holds were counted) and orders the report:
// failures first, then what each holds, the reach breaking ties.
func (b *incidentBuilder) impacts(ctx context.Context, counter *reachCounter) error {
	for _, k := range b.order {
		inc := b.byKey[k]
		n, err := counter.count(ctx, inc.Model, inc.Span)
		if err != nil {
			return err
		}
		if inc.Kind == IncidentBlocked || inc.Kind == IncidentReleased {
			n += inc.Units
		}
		inc.Reach = n
		b.report.Incidents = append(b.report.Incidents, *inc)
	}
	slices.SortStableFunc(b.report.Incidents, func(x, y Incident) int {
		return cmp.Or(cmp.Compare(x.Kind.severity(), y.Kind.severity()), cmp.Compare(y.Blocked, x.Blocked), cmp.Compare(y.Reach, x.Reach),
			cmp.Compare(kindRank[x.Kind], kindRank[y.Kind]),
			x.Since.Compare(y.Since), cmp.Compare(x.Model, y.Model))
	})
	return nil
}

// maxDetailLines bounds the lines of an error an incident keeps.
const maxDetailLines = 4

// ErrorLines is an error as an incident keeps it: its first
// maxDetailLines non-empty lines, trimmed. A command's error often says
// what happened on a line of its own ("exit status 1: GET …: 503" then
// "the payment provider is down"), so the first line alone is not enough.
func ErrorLines(s string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if t := strings.TrimSpace(line); t != "" {
			out = append(out, t)
			if len(out) == maxDetailLines {
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

// FirstLine is s's first non-empty line, trimmed: the line an incident
// row has room for.
func FirstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// Title is an incident's first line: its root, kind, extent and age at
// now, e.g. "raw.payments failed · 1 unit
// 2026-11-30T16:00:00Z..2026-11-30T17:00:00Z · for 11h".
func (inc Incident) Title(now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s · %d unit", inc.Model, inc.Kind.Word(), inc.Units)
	if inc.Units != 1 {
		b.WriteString("s")
	}
	if !inc.Span.IsZero() {
		fmt.Fprintf(&b, " %s..%s", state.FormatTime(inc.Span.Since), state.FormatTime(inc.Span.Until))
	}
	if !inc.Since.IsZero() {
		fmt.Fprintf(&b, " · for %s", state.RoughDuration(now.Sub(inc.Since)))
	}
	return b.String()
}

// Fix is the run from an incident's root that fixes it: the mode over
// the root's span, and whether it rebuilds outdated windows (run
// --outdated, a bulldozer of exactly them) instead. Stale rows are
// applied, and a discover keeps applied units: they load again only under
// a bulldozer of their windows. Failed, missing, blocked and released
// roots are outstanding units, which a discover of the span runs (and
// leaves what is applied there alone); a gate error no run fixes, and a
// discover there re-runs its units to the same error.
func (k IncidentKind) Fix() (mode spec.StateMode, outdated bool) {
	switch k {
	case IncidentStale:
		return spec.Bulldozer, false
	case IncidentOutdated:
		return spec.Bulldozer, true
	}
	return spec.Discover, false
}

// Word is the kind as a sentence reads it: "failed", "gate error",
// "stale", "not loaded", "blocked", "released".
func (k IncidentKind) Word() string {
	switch k {
	case IncidentGateError:
		return "gate error"
	case IncidentMissing:
		return "not loaded"
	}
	return string(k)
}

// HoldsText is what waits on the incident, as every front end says it:
// "holds 4 units of core.daily_revenue, mart.monthly_revenue", with
// "(fixing it alone releases 2)" when another root holds some of them
// too.
func (inc Incident) HoldsText() string {
	if inc.Blocked == 0 {
		return "nothing held behind it yet"
	}
	units := "units"
	if inc.Blocked == 1 {
		units = "unit"
	}
	s := fmt.Sprintf("holds %d %s of %s", inc.Blocked, units, strings.Join(inc.BlockedModels, ", "))
	if inc.Releases != inc.Blocked {
		s += fmt.Sprintf(" (fixing it alone releases %d)", inc.Releases)
	}
	return s
}
