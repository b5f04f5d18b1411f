package storetest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/bollhav/bollhav/state"
)

// RunStateMachine is the state-machine property test of a Store (issue 9,
// item 8): rapid draws random sequences of what the engine, its workers and
// its operators do to one fixed and one flexible model — prefill, claim,
// heartbeat, complete as applied, failed, blocked or released (one claim at a
// time, or several in one CompleteBatch), lease expiry, a worker that crashes
// and never comes back, a zombie worker whose claim went stale, bulldozer,
// torch, operator marks — runs each against a fresh store
// from open and against a small in-memory model, and after every step checks
// that the two agree and that the store's invariants hold:
//
//   - every unit is in exactly one status: a scan has no duplicate ids or
//     windows, comes in window order, and a scan by a set of statuses and
//     one by the rest partition it; every unit equals the model's (window,
//     status, ids, attempts, fence, run, lease, applied_at, error, reason,
//     updated_at) and Stats counts the same;
//   - AppliedAt is set exactly when applied, LeaseOwner and LeaseUntil exactly
//     when running, Error exactly when failed, BlockedReason exactly when
//     blocked;
//   - no two running units of the flexible model overlap;
//   - Coverage is the union of the applied windows (state.IntervalSet), whole
//     and within a window; Applied lists exactly the applied units;
//   - Attempts follows the package rules (outcomes and expired leases count,
//     a release does not); every claim's fence is above any the unit had; a
//     claim takes the oldest claimable windows (ties by since may go either
//     way) and skips a flexible unit overlapping a running one;
//   - a stale claim's Heartbeat and Complete are ErrLeaseLost (Complete
//     repeating the unit's current status under its fence is a no-op) and
//     change nothing, not even the change feed; every other step records
//     exactly the changes the package doc prescribes;
//   - CompleteBatch, with live, stale and repeated claims mixed in one call,
//     judges each item as Complete would, one after another.
//
// Torch and bulldozer are refused, as the engine refuses them, while a unit
// of the model they would touch is running. Time is a logical clock passed as
// now everywhere, moved on by whole minutes the test draws.
//
// checks is the number of sequences to try (each on a store of its own),
// used unless -rapid.checks or RAPID_CHECKS is given; 0 keeps rapid's
// default (100). BOLLHAV_STATE_MACHINE_CHECKS replaces checks for this test
// alone: CI sets it to 120 in a plain pass of this test beside the fuzz
// targets, and to 10 in its race pass, where a sequence (one goroutine)
// gains nothing from the detector but its slowness (RAPID_CHECKS would
// change every property test of the module). -short divides it by five, -rapid.steps sets the mean
// sequence length (30).
//
// Call it from a top-level test (TestStateMachine) that is not parallel:
// the check count is rapid's global flag. A failing sequence is shrunk and
// written, with its step log, to testdata/rapid/TestStateMachine/*.fail in
// the package that runs the test (state/sqlite, state/postgres); rapid
// replays every file there on each run, so a committed one is a regression
// test. Replay one with
//
//	go test -run 'TestStateMachine$' -rapid.failfile=testdata/rapid/TestStateMachine/<file>.fail -v
func RunStateMachine(t *testing.T, open func(t *testing.T) state.Store, checks int) {
	t.Helper()
	if v, ok := os.LookupEnv(stateMachineChecksEnv); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: want a positive number of sequences", stateMachineChecksEnv, v)
		}
		checks = n
	}
	if checks > 0 && !rapidChecksGiven() {
		f := flag.Lookup("rapid.checks")
		old := f.Value.String()
		if err := f.Value.Set(strconv.Itoa(checks)); err != nil {
			t.Fatalf("setting rapid.checks: %v", err)
		}
		defer func() { _ = f.Value.Set(old) }()
	}
	rapid.Check(t, func(rt *rapid.T) {
		s := open(t)
		// open registers its cleanup on t, which runs only when the whole
		// test ends; close each check's store when the check ends instead,
		// so hundreds of them are never open at once. Close is idempotent.
		rt.Cleanup(func() { _ = s.Close() })
		m := newMachine(rt, s)
		rt.Repeat(rapid.StateMachineActions(m))
	})
}

// stateMachineChecksEnv names the variable that sets RunStateMachine's
// sequence count.
const stateMachineChecksEnv = "BOLLHAV_STATE_MACHINE_CHECKS"

// rapidChecksGiven reports whether the check count was chosen on the command
// line or in the environment, which then wins over RunStateMachine's.
func rapidChecksGiven() bool {
	if _, ok := os.LookupEnv("RAPID_CHECKS"); ok {
		return true
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "rapid.checks" })
	return given
}

// The machine's two models, registered once at the start of every sequence:
// an hourly fixed grid and an hourly flexible model.
const (
	smFixed = "fixed"
	smFlex  = "flexible"
)

var smWorkers = []string{"w1", "w2", "w3"}

// smKey is a unit's key within its model: its window.
type smKey struct{ since, until int64 }

func keyOf(w state.Window) smKey { return smKey{w.Since.UnixMicro(), w.Until.UnixMicro()} }

// smModel is the in-memory model of one model's units.
type smModel struct {
	name     string
	flexible bool
	units    map[smKey]*state.Unit
}

// sorted returns the model's units in window order.
func (md *smModel) sorted() []*state.Unit {
	out := make([]*state.Unit, 0, len(md.units))
	for _, u := range md.units {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return windowLess(out[i].Window, out[j].Window) })
	return out
}

func (md *smModel) byID(id int64) *state.Unit {
	for _, u := range md.units {
		if u.ID == id {
			return u
		}
	}
	return nil
}

func (md *smModel) running() []*state.Unit {
	var out []*state.Unit
	for _, u := range md.sorted() {
		if u.Status == state.Running {
			out = append(out, u)
		}
	}
	return out
}

func windowLess(a, b state.Window) bool {
	if !a.Since.Equal(b.Since) {
		return a.Since.Before(b.Since)
	}
	return a.Until.Before(b.Until)
}

// smClaim is a claim a worker got. A crashed worker never acts again; any
// other worker whose claim went stale (its lease expired and the unit was
// released or re-claimed, an operator moved or removed the unit, it already
// completed) may still come back with it, as a zombie does.
type smClaim struct {
	c       state.Claim
	crashed bool
}

// smMachine is the state machine: the store under test and its model.
type smMachine struct {
	s      state.Store
	ctx    context.Context
	now    time.Time
	runs   []int64
	models map[string]*smModel
	claims []*smClaim
	// ids are every unit id the store ever handed out: new units must get
	// fresh ones.
	ids map[int64]bool
	// seq is the last change-feed seq seen.
	seq int64
	// step counts the checks made.
	step int
}

func newMachine(rt *rapid.T, s state.Store) *smMachine {
	m := &smMachine{
		s: s, ctx: rt.Context(), now: clock(0), runs: []int64{0},
		models: map[string]*smModel{
			smFixed: {name: smFixed, units: map[smKey]*state.Unit{}},
			smFlex:  {name: smFlex, flexible: true, units: map[smKey]*state.Unit{}},
		},
		ids: map[int64]bool{},
	}
	if _, err := s.Register(m.ctx, "", []state.ModelRecord{fixModel(smFixed), flexModel(smFlex)}, nil, m.now); err != nil {
		rt.Fatalf("Register: %v", err)
	}
	for range 2 {
		id, err := s.CreateRun(m.ctx, state.Run{StateMode: "discover", StartedAt: m.now})
		if err != nil {
			rt.Fatalf("CreateRun: %v", err)
		}
		m.runs = append(m.runs, id)
	}
	m.seq = m.lastSeq(rt)
	return m
}

// ---------------------------------------------------------------- drawing

// tick moves the clock on by 0 to 5 minutes: steps happen at distinct or
// equal instants, never backwards.
func (m *smMachine) tick(rt *rapid.T) {
	m.now = m.now.Add(time.Duration(rapid.IntRange(0, 5).Draw(rt, "tick min")) * time.Minute)
}

// drawModel draws one of the two models.
func (m *smMachine) drawModel(rt *rapid.T) *smModel {
	return m.models[rapid.SampledFrom([]string{smFixed, smFlex}).Draw(rt, "model")]
}

// drawOpWindow draws an operator's window within the day, or (one time in
// five) the zero window: the whole model. Most windows are on hour edges,
// where they meet the units' edges; some are on half hours, so that they cut
// through units.
func drawOpWindow(rt *rapid.T, label string) state.Window {
	if rapid.IntRange(0, 4).Draw(rt, label+" whole") == 0 {
		return state.Window{}
	}
	return drawWindow(rt, label)
}

func drawWindow(rt *rapid.T, label string) state.Window {
	if rapid.IntRange(0, 3).Draw(rt, label+" on half hours") > 0 {
		a := rapid.IntRange(0, 23).Draw(rt, label+" since h")
		b := rapid.IntRange(a+1, 24).Draw(rt, label+" until h")
		return win(a, b)
	}
	a := rapid.IntRange(0, 47).Draw(rt, label+" since/30m")
	b := rapid.IntRange(a+1, 48).Draw(rt, label+" until/30m")
	return winD(time.Duration(a)*30*time.Minute, time.Duration(b)*30*time.Minute)
}

// live lists the claims whose worker is alive and whose unit still runs
// under the claim's fence.
func (m *smMachine) live() []*smClaim {
	var out []*smClaim
	for _, c := range m.claims {
		if !c.crashed && m.holds(c.c) {
			out = append(out, c)
		}
	}
	return out
}

// stale lists the claims of live workers that no longer hold their unit.
func (m *smMachine) stale() []*smClaim {
	var out []*smClaim
	for _, c := range m.claims {
		if !c.crashed && !m.holds(c.c) {
			out = append(out, c)
		}
	}
	return out
}

// holds reports whether c's unit is running under c's fence.
func (m *smMachine) holds(c state.Claim) bool {
	u := m.unitByID(c.Unit.Model, c.Unit.ID)
	return u != nil && u.Status == state.Running && u.Fence == c.Fence
}

func (m *smMachine) unitByID(model string, id int64) *state.Unit {
	md := m.models[model]
	if md == nil {
		return nil
	}
	return md.byID(id)
}

func claimLabel(c state.Claim) string {
	return fmt.Sprintf("%s %s (unit %d, fence %d, %s)", c.Unit.Model, hw(c.Unit.Window), c.Unit.ID, c.Fence, c.Unit.LeaseOwner)
}

func (m *smMachine) at() string { return fmt.Sprintf("t+%dm", int(m.now.Sub(clock(0))/time.Minute)) }

// ---------------------------------------------------------------- actions

// PrefillFixed prefills hourly windows of the fixed model.
func (m *smMachine) PrefillFixed(rt *rapid.T) {
	m.tick(rt)
	a := rapid.IntRange(0, 23).Draw(rt, "from h")
	b := rapid.IntRange(a+1, min(24, a+8)).Draw(rt, "to h")
	m.prefill(rt, m.models[smFixed], hourly(a, b))
}

// PrefillFlexible prefills one to three windows of one to four hours at any
// hour of the flexible model; they may overlap each other and existing
// units, which is what makes a flexible claim skip.
func (m *smMachine) PrefillFlexible(rt *rapid.T) {
	m.tick(rt)
	n := rapid.IntRange(1, 3).Draw(rt, "windows")
	ws := make([]state.Window, n)
	for i := range ws {
		l := rapid.IntRange(1, 4).Draw(rt, "hours")
		s := rapid.IntRange(0, 24-l).Draw(rt, "at h")
		ws[i] = win(s, s+l)
	}
	m.prefill(rt, m.models[smFlex], ws)
}

func (m *smMachine) prefill(rt *rapid.T, md *smModel, ws []state.Window) {
	n, err := m.s.Prefill(m.ctx, state.PrefillRequest{Model: md.name, Windows: ws, Now: m.now})
	rt.Logf("%s Prefill %s %s -> %d, %v", m.at(), md.name, hws(ws), n, err)
	if err != nil {
		rt.Fatalf("Prefill: %v", err)
	}
	var created []state.Window
	for _, w := range ws {
		if _, ok := md.units[keyOf(w)]; ok {
			continue
		}
		md.units[keyOf(w)] = &state.Unit{Model: md.name, Window: w, Status: state.Pending, UpdatedAt: m.now}
		created = append(created, w)
	}
	if n != len(created) {
		rt.Errorf("Prefill created %d units, want %d (%s)", n, len(created), hws(created))
	}
	m.adopt(rt, md, created, nil)
	var want []state.Change
	if len(created) > 0 {
		want = append(want, state.Change{Model: md.name, Window: hullOf(created), To: state.Pending, Count: len(created), At: m.now})
	}
	m.expectChanges(rt, "Prefill", want, true)
}

// adopt gives the model's units at ws the ids and fences the store chose for
// them: a fresh id each, except that one of them may keep keep (the unit a
// split came from).
func (m *smMachine) adopt(rt *rapid.T, md *smModel, ws []state.Window, keep *state.Unit) {
	if len(ws) == 0 {
		return
	}
	got := map[smKey]state.Unit{}
	for _, u := range m.scan(rt, state.UnitQuery{Model: md.name}) {
		got[keyOf(u.Window)] = u
	}
	kept := false
	for _, w := range ws {
		su, ok := got[keyOf(w)]
		if !ok {
			continue // the check after the step reports the missing unit
		}
		mu := md.units[keyOf(w)]
		switch {
		case keep != nil && su.ID == keep.ID && !kept:
			kept = true
		case m.ids[su.ID]:
			rt.Errorf("new unit %s %s has id %d, which the store handed out before", md.name, hw(w), su.ID)
		}
		m.ids[su.ID] = true
		mu.ID = su.ID
		if keep == nil {
			mu.Fence = su.Fence
		}
	}
}

// Claim claims up to three units of the fixed model, the flexible one, both
// or every model, sometimes within a window, under a lease of 1 to 30
// minutes.
func (m *smMachine) Claim(rt *rapid.T) {
	m.tick(rt)
	req := state.ClaimRequest{
		Worker: rapid.SampledFrom(smWorkers).Draw(rt, "worker"),
		Lease:  time.Duration(rapid.IntRange(1, 30).Draw(rt, "lease min")) * time.Minute,
		Limit:  rapid.IntRange(1, 3).Draw(rt, "limit"),
		RunID:  rapid.SampledFrom(m.runs).Draw(rt, "run"),
		Now:    m.now,
	}
	switch rapid.IntRange(0, 3).Draw(rt, "models") {
	case 0:
		req.Models = []string{smFixed}
	case 1:
		req.Models = []string{smFlex}
	case 2:
		req.Models = []string{smFixed, smFlex}
	}
	if rapid.IntRange(0, 3).Draw(rt, "scoped") == 0 {
		req.Window = drawWindow(rt, "claim window")
	}
	got, err := m.s.Claim(m.ctx, req)
	rt.Logf("%s Claim models=%v window=%s limit=%d lease=%s %s run=%d -> %v, %v", m.at(), req.Models, ow(req.Window), req.Limit, req.Lease, req.Worker, req.RunID, claimBriefs(got), err)
	if err != nil {
		rt.Fatalf("Claim: %v", err)
	}
	m.checkClaimChoice(rt, req, got)

	var want []state.Change
	for _, c := range got {
		u := m.unitByID(c.Unit.Model, c.Unit.ID)
		if u == nil || u.Status != state.Pending {
			rt.Fatalf("Claim handed out %s, which the model has as %v", claimLabel(c), u)
		}
		if c.Fence <= u.Fence || c.Unit.Fence != c.Fence {
			rt.Errorf("claim of %s %s: fence %d (unit says %d), want more than the unit's previous %d", u.Model, hw(u.Window), c.Fence, c.Unit.Fence, u.Fence)
		}
		u.Status = state.Running
		u.LeaseOwner = req.Worker
		u.LeaseUntil = ptr(req.Now.Add(req.Lease))
		u.RunID = req.RunID
		u.UpdatedAt = req.Now
		u.Fence = c.Fence
		for _, d := range diffUnit(c.Unit, *u) {
			rt.Errorf("claimed unit %s %s: %s", u.Model, hw(u.Window), d)
		}
		m.claims = append(m.claims, &smClaim{c: c})
		want = append(want, state.Change{Model: u.Model, Window: u.Window, From: state.Pending, To: state.Running, Count: 1, At: req.Now, RunID: req.RunID})
	}
	m.expectChanges(rt, "Claim", want, true)
}

// checkClaimChoice checks that got is what a claim of req may take from the
// model's state before it: oldest claimable windows first, as many as
// limit allows, never a flexible unit overlapping a running one or another
// one of the same claim. Units with the same since may be taken in either
// order (the package doc orders claims by since only).
func (m *smMachine) checkClaimChoice(rt *rapid.T, req state.ClaimRequest, got []state.Claim) {
	inScope := func(md *smModel) bool { return len(req.Models) == 0 || slices.Contains(req.Models, md.name) }
	left := map[int64]state.Claim{}
	for _, c := range got {
		if _, dup := left[c.Unit.ID]; dup {
			rt.Errorf("Claim handed out unit %d twice", c.Unit.ID)
		}
		left[c.Unit.ID] = c
	}
	busy := map[string][]state.Window{} // running or taken, per flexible model
	for _, md := range m.models {
		for _, u := range md.running() {
			busy[md.name] = append(busy[md.name], u.Window)
		}
	}
	taken := map[int64]bool{}
	for n := 0; n < req.Limit; n++ {
		var tie []*state.Unit
		for _, name := range []string{smFixed, smFlex} {
			md := m.models[name]
			if !inScope(md) {
				continue
			}
			for _, u := range md.sorted() {
				if u.Status != state.Pending || taken[u.ID] {
					continue
				}
				if !req.Window.IsZero() && !u.Window.Overlaps(req.Window) {
					continue
				}
				if md.flexible && slices.ContainsFunc(busy[md.name], u.Window.Overlaps) {
					continue
				}
				if len(tie) > 0 && u.Window.Since.After(tie[0].Window.Since) {
					break
				}
				if len(tie) > 0 && u.Window.Since.Before(tie[0].Window.Since) {
					tie = tie[:0]
				}
				tie = append(tie, u)
			}
		}
		if len(tie) == 0 {
			break
		}
		var pick *state.Unit
		for _, u := range tie {
			if _, ok := left[u.ID]; ok {
				pick = u
				break
			}
		}
		if pick == nil {
			var ws []string
			for _, u := range tie {
				ws = append(ws, u.Model+" "+hw(u.Window))
			}
			rt.Fatalf("Claim (limit %d) took %v but not the claimable %s, which is older than what it took or within its limit", req.Limit, claimBriefs(got), strings.Join(ws, " or "))
		}
		delete(left, pick.ID)
		taken[pick.ID] = true
		if m.models[pick.Model].flexible {
			busy[pick.Model] = append(busy[pick.Model], pick.Window)
		}
	}
	for _, c := range left {
		rt.Fatalf("Claim (limit %d) took %s, which was not claimable then (or not among the oldest); it took %v", req.Limit, claimLabel(c), claimBriefs(got))
	}
}

// ow prints an operation's window: the zero one is "all".
func ow(w state.Window) string {
	if w.IsZero() {
		return "all"
	}
	return hw(w)
}

// pickClaim skips the step when cs is empty ("no " + label); otherwise it
// moves the clock on and draws one of cs under label.
func (m *smMachine) pickClaim(rt *rapid.T, cs []*smClaim, label string) *smClaim {
	if len(cs) == 0 {
		rt.Skip("no " + label)
	}
	m.tick(rt)
	return cs[rapid.IntRange(0, len(cs)-1).Draw(rt, label)]
}

// Heartbeat extends a live claim's lease to 1 to 30 minutes from now.
func (m *smMachine) Heartbeat(rt *rapid.T) {
	c := m.pickClaim(rt, m.live(), "live claim")
	until := m.now.Add(time.Duration(rapid.IntRange(1, 30).Draw(rt, "until min")) * time.Minute)
	err := m.s.Heartbeat(m.ctx, c.c, until)
	rt.Logf("%s Heartbeat %s until +%s -> %v", m.at(), claimLabel(c.c), until.Sub(m.now), err)
	if err != nil {
		rt.Fatalf("Heartbeat of a live claim: %v", err)
	}
	// A heartbeat is not a transition: it moves the lease end and nothing
	// else, UpdatedAt included, and records no change.
	m.unitByID(c.c.Unit.Model, c.c.Unit.ID).LeaseUntil = ptr(until)
	m.expectChanges(rt, "Heartbeat", nil, true)
}

// Complete records a live claim's outcome: applied, failed, blocked or
// released unrun (pending).
func (m *smMachine) Complete(rt *rapid.T) {
	c := m.pickClaim(rt, m.live(), "live claim")
	o := m.drawOutcome(rt)
	err := m.s.Complete(m.ctx, c.c, o)
	rt.Logf("%s Complete %s as %s -> %v", m.at(), claimLabel(c.c), o.Status, err)
	if err != nil {
		rt.Fatalf("Complete of a live claim: %v", err)
	}
	ch := m.record(m.unitByID(c.c.Unit.Model, c.c.Unit.ID), o)
	m.expectChanges(rt, "Complete", []state.Change{ch}, true)
}

// record moves the model's running unit u to outcome o, as Complete does,
// and returns the change the store must record for it.
func (m *smMachine) record(u *state.Unit, o state.Outcome) state.Change {
	u.Status = o.Status
	u.AppliedAt, u.Error, u.BlockedReason, u.Fingerprint = nil, "", "", ""
	switch o.Status {
	case state.Applied:
		u.AppliedAt, u.Fingerprint = ptr(o.At), o.Fingerprint
	case state.Failed:
		u.Error = o.Error
	case state.Blocked:
		u.BlockedReason = o.BlockedReason
	}
	if o.Status != state.Pending {
		u.Attempts++
	}
	u.LeaseOwner, u.LeaseUntil = "", nil
	u.UpdatedAt = o.At
	return state.Change{Model: u.Model, Window: u.Window, From: state.Running, To: o.Status, Count: 1, At: o.At, RunID: u.RunID}
}

// CompleteBatch records several outcomes in one call, as a worker's group
// commit does: some live claims in any order, now and then a stale claim
// among them and now and then a claim named a second time. The items are
// judged one after another, as Completes would be: a claim still holding
// its unit records its outcome; one that does not is ErrLeaseLost for that
// item alone, unless it repeats the status the unit has under its fence
// (a no-op), which is also what a second item on a unit just recorded is.
func (m *smMachine) CompleteBatch(rt *rapid.T) {
	live, stale := m.live(), m.stale()
	if len(live) == 0 {
		rt.Skip("no live claim")
	}
	m.tick(rt)
	order := rapid.Permutation(live).Draw(rt, "live claims")
	picks := order[:rapid.IntRange(1, len(order)).Draw(rt, "how many")]
	if len(stale) > 0 && rapid.IntRange(0, 2).Draw(rt, "with a stale claim") == 0 {
		c := stale[rapid.IntRange(0, len(stale)-1).Draw(rt, "stale claim")]
		picks = slices.Insert(slices.Clone(picks), rapid.IntRange(0, len(picks)).Draw(rt, "stale at"), c)
	}
	if rapid.IntRange(0, 3).Draw(rt, "a claim twice") == 0 {
		picks = append(slices.Clone(picks), picks[rapid.IntRange(0, len(picks)-1).Draw(rt, "twice")])
	}
	items := make([]state.Completion, len(picks))
	for i, c := range picks {
		items[i] = state.Completion{Claim: c.c, Outcome: m.drawOutcome(rt)}
	}
	errs, err := m.s.CompleteBatch(m.ctx, items)
	rt.Logf("%s CompleteBatch of %d -> %v, %v", m.at(), len(items), errs, err)
	if err != nil {
		rt.Fatalf("CompleteBatch: %v", err)
	}
	if len(errs) != len(items) {
		rt.Fatalf("CompleteBatch answered for %d of %d items", len(errs), len(items))
	}
	var want []state.Change
	for i, it := range items {
		u := m.unitByID(it.Claim.Unit.Model, it.Claim.Unit.ID)
		rt.Logf("  %s as %s -> %v", claimLabel(it.Claim), it.Outcome.Status, errs[i])
		switch {
		case m.holds(it.Claim):
			if errs[i] != nil {
				rt.Fatalf("batch item %d, a live claim: %v", i, errs[i])
			}
			want = append(want, m.record(u, it.Outcome))
		case u != nil && u.Fence == it.Claim.Fence && u.Status == it.Outcome.Status:
			if errs[i] != nil {
				rt.Errorf("batch item %d repeats the unit's status under its fence: %v, want a no-op", i, errs[i])
			}
		default:
			if !errors.Is(errs[i], state.ErrLeaseLost) {
				rt.Errorf("batch item %d, a claim that no longer holds its unit: err = %v, want ErrLeaseLost", i, errs[i])
			}
		}
	}
	m.expectChanges(rt, "CompleteBatch", want, true)
}

func (m *smMachine) drawOutcome(rt *rapid.T) state.Outcome {
	st := rapid.SampledFrom([]state.UnitStatus{state.Applied, state.Failed, state.Blocked, state.Pending}).Draw(rt, "outcome")
	o := state.Outcome{Status: st, At: m.now}
	switch st {
	case state.Applied:
		o.RowsWritten = ptr(int64(rapid.IntRange(0, 3).Draw(rt, "rows")))
		// Two definitions and an unknown one, so applied_counts is
		// checked across fingerprints of one model.
		o.Fingerprint = rapid.SampledFrom([]string{"", "00000000000000a1", "00000000000000b2"}).Draw(rt, "fingerprint")
	case state.Failed:
		o.Error = "exit status 1"
	case state.Blocked:
		o.BlockedReason = "up (WHOLE): not applied"
	}
	return o
}

// Crash kills a live claim's worker: it never heartbeats or completes, and
// its lease runs out.
func (m *smMachine) Crash(rt *rapid.T) {
	live := m.live()
	if len(live) == 0 {
		rt.Skip("no live claim")
	}
	c := live[rapid.IntRange(0, len(live)-1).Draw(rt, "live claim")]
	c.crashed = true
	rt.Logf("%s Crash of the worker of %s", m.at(), claimLabel(c.c))
}

// Expire moves the clock past leases — to a running unit's lease end plus
// -1 to 5 minutes (the end itself releases nothing), or on by 1 to 40
// minutes — and releases what expired.
func (m *smMachine) Expire(rt *rapid.T) {
	var running []*state.Unit
	for _, name := range []string{smFixed, smFlex} {
		running = append(running, m.models[name].running()...)
	}
	if len(running) > 0 && rapid.Bool().Draw(rt, "to a lease end") {
		u := running[rapid.IntRange(0, len(running)-1).Draw(rt, "running unit")]
		to := u.LeaseUntil.Add(time.Duration(rapid.IntRange(-1, 5).Draw(rt, "past end min")) * time.Minute)
		if to.After(m.now) {
			m.now = to
		}
	} else {
		m.now = m.now.Add(time.Duration(rapid.IntRange(1, 40).Draw(rt, "min")) * time.Minute)
	}
	n, err := m.s.ReleaseExpired(m.ctx, m.now)
	rt.Logf("%s ReleaseExpired -> %d, %v", m.at(), n, err)
	if err != nil {
		rt.Fatalf("ReleaseExpired: %v", err)
	}
	var want []state.Change
	released := 0
	for _, name := range []string{smFixed, smFlex} {
		var g *state.Change
		for _, u := range m.models[name].running() {
			if !u.LeaseUntil.Before(m.now) {
				continue
			}
			if g == nil {
				g = &state.Change{Model: name, From: state.Running, To: state.Pending, At: m.now}
			}
			g.Count++
			g.Window = state.Hull(g.Window, u.Window)
			g.RunID = max(g.RunID, u.RunID)
			u.Status = state.Pending
			u.Attempts++
			u.LeaseOwner, u.LeaseUntil = "", nil
			u.UpdatedAt = m.now
			released++
		}
		if g != nil {
			want = append(want, *g)
		}
	}
	if n != released {
		rt.Errorf("ReleaseExpired released %d, want %d", n, released)
	}
	m.expectChanges(rt, "ReleaseExpired", want, true)
}

// Stale brings back a zombie: a worker whose claim no longer holds its unit
// heartbeats or completes it. Heartbeat is ErrLeaseLost; Complete is too,
// except that repeating the status the unit has under the claim's fence is a
// successful no-op. Either way nothing changes.
func (m *smMachine) Stale(rt *rapid.T) {
	c := m.pickClaim(rt, m.stale(), "stale claim")
	u := m.unitByID(c.c.Unit.Model, c.c.Unit.ID)
	now := "gone"
	if u != nil {
		now = fmt.Sprintf("%s under fence %d", u.Status, u.Fence)
	}
	if rapid.Bool().Draw(rt, "heartbeat") {
		err := m.s.Heartbeat(m.ctx, c.c, m.now.Add(10*time.Minute))
		rt.Logf("%s stale Heartbeat %s (unit now %s) -> %v", m.at(), claimLabel(c.c), now, err)
		if !errors.Is(err, state.ErrLeaseLost) {
			rt.Errorf("stale Heartbeat: err = %v, want ErrLeaseLost", err)
		}
	} else {
		o := m.drawOutcome(rt)
		err := m.s.Complete(m.ctx, c.c, o)
		rt.Logf("%s stale Complete %s as %s (unit now %s) -> %v", m.at(), claimLabel(c.c), o.Status, now, err)
		if u != nil && u.Fence == c.c.Fence && u.Status == o.Status {
			if err != nil {
				rt.Errorf("Complete repeating the unit's status under its fence: %v, want a no-op", err)
			}
		} else if !errors.Is(err, state.ErrLeaseLost) {
			rt.Errorf("stale Complete: err = %v, want ErrLeaseLost", err)
		}
	}
	m.expectChanges(rt, "a stale claim's call", nil, true)
}

// Bulldozer re-pends a model's applied, blocked and failed units inside a
// window; the engine refuses while a unit of the model overlapping the window
// is running, and so does the machine.
func (m *smMachine) Bulldozer(rt *rapid.T) {
	m.tick(rt)
	md := m.drawModel(rt)
	w := drawOpWindow(rt, "window")
	if r := runningIn(md, w); r != nil {
		rt.Logf("%s Bulldozer %s %s refused: %s %s is running", m.at(), md.name, ow(w), md.name, hw(r.Window))
		return
	}
	m.setStatus(rt, "Bulldozer", state.StatusChange{Model: md.name, Window: w,
		From: []state.UnitStatus{state.Applied, state.Blocked, state.Failed}, To: state.Pending,
		RunID: rapid.SampledFrom(m.runs).Draw(rt, "run"), Now: m.now})
}

// Mark is an operator's mark: a model's units inside a window, of some of
// pending, applied, blocked and failed, to applied (at a drawn time or now)
// or to pending. Running units are never in From, so none is touched.
func (m *smMachine) Mark(rt *rapid.T) {
	m.tick(rt)
	md := m.drawModel(rt)
	w := drawOpWindow(rt, "window")
	req := state.StatusChange{Model: md.name, Window: w, Now: m.now, RunID: rapid.SampledFrom(m.runs).Draw(rt, "run")}
	if rapid.Bool().Draw(rt, "to applied") {
		req.To = state.Applied
		if back := rapid.IntRange(-1, 120).Draw(rt, "applied min ago"); back >= 0 {
			req.AppliedAt = m.now.Add(-time.Duration(back) * time.Minute)
		}
	} else {
		req.To = state.Pending
	}
	for _, st := range []state.UnitStatus{state.Pending, state.Applied, state.Blocked, state.Failed} {
		if rapid.Bool().Draw(rt, "from "+string(st)) {
			req.From = append(req.From, st)
		}
	}
	if len(req.From) == 0 {
		req.From = []state.UnitStatus{state.Failed}
	}
	m.setStatus(rt, "Mark", req)
}

func (m *smMachine) setStatus(rt *rapid.T, what string, req state.StatusChange) {
	md := m.models[req.Model]
	n, err := m.s.SetStatus(m.ctx, req)
	appliedAt := ""
	if req.To == state.Applied && !req.AppliedAt.IsZero() {
		appliedAt = fmt.Sprintf(" at %s", req.AppliedAt.Sub(m.now))
	}
	rt.Logf("%s %s %s %s %v -> %s%s run=%d -> %d, %v", m.at(), what, md.name, ow(req.Window), req.From, req.To, appliedAt, req.RunID, n, err)
	if err != nil {
		rt.Fatalf("SetStatus: %v", err)
	}
	groups := map[state.UnitStatus]*state.Change{}
	moved := 0
	for _, u := range md.sorted() {
		if !inside(req.Window, u.Window) || u.Status == req.To || !slices.Contains(req.From, u.Status) {
			continue
		}
		g := groups[u.Status]
		if g == nil {
			g = &state.Change{Model: md.name, From: u.Status, To: req.To, At: req.Now, RunID: req.RunID}
			groups[u.Status] = g
		}
		g.Count++
		g.Window = state.Hull(g.Window, u.Window)
		moved++
		u.Status = req.To
		u.AppliedAt, u.Fingerprint = nil, ""
		if req.To == state.Applied {
			at := req.AppliedAt
			if at.IsZero() {
				at = req.Now
			}
			u.AppliedAt = ptr(at)
		}
		u.Error, u.BlockedReason = "", ""
		u.LeaseOwner, u.LeaseUntil = "", nil
		u.RunID = req.RunID
		u.UpdatedAt = req.Now
	}
	if n != moved {
		rt.Errorf("SetStatus moved %d units, want %d", n, moved)
	}
	m.expectChanges(rt, "SetStatus", groupChanges(groups), true)
}

// runningIn returns a running unit of md overlapping w (any when w is
// zero), or nil.
func runningIn(md *smModel, w state.Window) *state.Unit {
	for _, u := range md.running() {
		if w.IsZero() || u.Window.Overlaps(w) {
			return u
		}
	}
	return nil
}

// inside reports whether u lies inside w (the zero w is everything).
func inside(w, u state.Window) bool { return w.IsZero() || w.Covers(u) }

func groupChanges(groups map[state.UnitStatus]*state.Change) []state.Change {
	var out []state.Change
	for _, g := range groups {
		out = append(out, *g)
	}
	return out
}

// Torch removes a model's units in a window: Delete on the fixed grid,
// Uncover on the flexible model. The engine refuses torch while any unit of
// the model is running, and so does the machine.
func (m *smMachine) Torch(rt *rapid.T) {
	m.tick(rt)
	md := m.drawModel(rt)
	w := drawOpWindow(rt, "window")
	runID := rapid.SampledFrom(m.runs).Draw(rt, "run")
	if r := md.running(); len(r) > 0 {
		rt.Logf("%s Torch %s %s refused: %s %s is running", m.at(), md.name, ow(w), md.name, hw(r[0].Window))
		return
	}
	if md.flexible {
		m.uncover(rt, md, w, runID)
		return
	}
	n, err := m.s.Delete(m.ctx, state.RemoveRequest{Model: md.name, Window: w, RunID: runID, Now: m.now})
	rt.Logf("%s Torch (Delete) %s %s run=%d -> %d, %v", m.at(), md.name, ow(w), runID, n, err)
	if err != nil {
		rt.Fatalf("Delete: %v", err)
	}
	groups := map[state.UnitStatus]*state.Change{}
	deleted := 0
	for k, u := range md.units {
		if !inside(w, u.Window) {
			continue
		}
		addGone(groups, md.name, u.Status, u.Window, m.now, runID)
		delete(md.units, k)
		deleted++
	}
	if n != deleted {
		rt.Errorf("Delete removed %d units, want %d", n, deleted)
	}
	m.expectChanges(rt, "Delete", groupChanges(groups), true)
}

func addGone(groups map[state.UnitStatus]*state.Change, model string, st state.UnitStatus, w state.Window, now time.Time, runID int64) {
	g := groups[st]
	if g == nil {
		g = &state.Change{Model: model, From: st, At: now, RunID: runID}
		groups[st] = g
	}
	g.Count++
	g.Window = state.Hull(g.Window, w)
}

// uncover runs Uncover on the flexible model. Units inside w go, units
// crossing an edge of w are trimmed to their part outside it (keeping their
// id), a unit spanning w is split in two (one part keeps the id, the other
// gets a fresh one); every part keeps status, applied_at, attempts, fence and
// run, and its UpdatedAt becomes now.
//
// When a remaining part would land on the window of another unit — possible
// only with overlapping units, which the engine never prefills but the Store
// accepts — the package doc does not say what happens. The machine then
// accepts either a refusal that changes nothing or any outcome that keeps
// one unit per window, takes the store's units as the model's, and lets the
// invariants (coverage equal to the applied units, and the rest) judge it.
func (m *smMachine) uncover(rt *rapid.T, md *smModel, w state.Window, runID int64) {
	type part struct {
		w    state.Window
		from *state.Unit
	}
	var (
		parts   []part
		groups  = map[state.UnitStatus]*state.Change{}
		touched = 0
		gone    = map[smKey]bool{}
	)
	for _, u := range md.sorted() {
		if !w.IsZero() && !u.Window.Overlaps(w) {
			continue
		}
		touched++
		gone[keyOf(u.Window)] = true
		removed := u.Window
		if !w.IsZero() {
			removed = state.Window{Since: state.Later(u.Window.Since, w.Since), Until: state.Earlier(u.Window.Until, w.Until)}
			if u.Window.Since.Before(w.Since) {
				parts = append(parts, part{state.Window{Since: u.Window.Since, Until: w.Since}, u})
			}
			if u.Window.Until.After(w.Until) {
				parts = append(parts, part{state.Window{Since: w.Until, Until: u.Window.Until}, u})
			}
		}
		addGone(groups, md.name, u.Status, removed, m.now, runID)
	}
	collide := map[smKey]int{}
	for k := range md.units {
		if !gone[k] {
			collide[k]++
		}
	}
	collision := ""
	for _, p := range parts {
		if collide[keyOf(p.w)]++; collide[keyOf(p.w)] > 1 && collision == "" {
			collision = hw(p.w)
		}
	}

	n, err := m.s.Uncover(m.ctx, state.RemoveRequest{Model: md.name, Window: w, RunID: runID, Now: m.now})
	rt.Logf("%s Torch (Uncover) %s %s run=%d -> %d, %v", m.at(), md.name, ow(w), runID, n, err)
	if collision != "" {
		rt.Logf("  (a part left by the uncover lands on %s, where another unit is: undocumented)", collision)
		if err != nil {
			m.expectChanges(rt, "a refused Uncover", nil, true)
			return
		}
		m.resync(rt, md)
		m.expectChanges(rt, "Uncover", nil, false)
		return
	}
	if err != nil {
		rt.Fatalf("Uncover: %v", err)
	}
	for k := range gone {
		delete(md.units, k)
	}
	split := map[int64][]state.Window{}
	for _, p := range parts {
		nu := *p.from
		nu.Window = p.w
		nu.UpdatedAt = m.now
		md.units[keyOf(p.w)] = &nu
		split[p.from.ID] = append(split[p.from.ID], p.w)
	}
	for _, ws := range split {
		if len(ws) == 2 {
			orig := *md.units[keyOf(ws[0])]
			m.adopt(rt, md, ws, &orig)
		}
	}
	if n != touched {
		rt.Errorf("Uncover touched %d units, want %d", n, touched)
	}
	m.expectChanges(rt, "Uncover", groupChanges(groups), true)
}

// resync takes the store's units of md as the model's, after a step whose
// outcome the package doc leaves open; new ids must still be fresh.
func (m *smMachine) resync(rt *rapid.T, md *smModel) {
	old := map[int64]bool{}
	for _, u := range md.units {
		old[u.ID] = true
	}
	md.units = map[smKey]*state.Unit{}
	for _, u := range m.scan(rt, state.UnitQuery{Model: md.name}) {
		if !old[u.ID] && m.ids[u.ID] {
			rt.Errorf("unit %s %s has id %d, which the store handed out before", md.name, hw(u.Window), u.ID)
		}
		m.ids[u.ID] = true
		u := u
		md.units[keyOf(u.Window)] = &u
	}
}

// ---------------------------------------------------------------- invariants

// Check runs after every step: the store equals the model and keeps its
// invariants. It draws nothing, so that shrinking only has the steps to
// work on: the window and statuses its filtered reads use rotate with the
// step count instead.
func (m *smMachine) Check(rt *rapid.T) {
	m.step++
	qw := smQueryWindows[m.step%len(smQueryWindows)]
	var some, rest []state.UnitStatus
	for i, st := range state.Statuses {
		if (m.step>>i)&1 == 1 {
			some = append(some, st)
		} else {
			rest = append(rest, st)
		}
	}
	for _, name := range []string{smFixed, smFlex} {
		m.checkModel(rt, m.models[name], qw, some, rest)
	}
	m.checkFingerprintCounts(rt)
	m.checkSummaries(rt)
}

// checkSummaries: Summaries, of every model and of each, equals a
// from-scratch summary of the model's units (counts by status, newest
// applied_at, merged coverage), which Check has already found equal to the
// store's own scan.
func (m *smMachine) checkSummaries(rt *rapid.T) {
	var want []string
	for _, name := range []string{smFixed, smFlex} { // in name order
		var units []state.Unit
		for _, u := range m.models[name].sorted() {
			units = append(units, *u)
		}
		want = append(want, summaryText(summaryOfUnits(name, units)))
		one, err := m.s.Summaries(m.ctx, "", name)
		if err != nil {
			rt.Fatalf("Summaries of %s: %v", name, err)
		}
		if got := summaryTexts(one); !slices.Equal(got, want[len(want)-1:]) {
			rt.Errorf("Summaries of %s = %q, want %q", name, got, want[len(want)-1:])
		}
	}
	all, err := m.s.Summaries(m.ctx, "", "")
	if err != nil {
		rt.Fatalf("Summaries: %v", err)
	}
	if got := summaryTexts(all); !slices.Equal(got, want) {
		rt.Errorf("Summaries = %q, want %q", got, want)
	}
	if err := countsAgree(m.ctx, m.s, "", all); err != "" {
		rt.Error(err)
	}
}

// checkFingerprintCounts: FingerprintCounts, of every model and of each,
// equals the model's applied units grouped by model and fingerprint, which
// Check has already found equal to the store's own scan.
func (m *smMachine) checkFingerprintCounts(rt *rapid.T) {
	var want []state.FingerprintCount
	for _, name := range []string{smFixed, smFlex} {
		var fps []string
		for _, u := range m.models[name].units {
			if u.Status == state.Applied {
				fps = append(fps, u.Fingerprint)
			}
		}
		one := countFingerprints(name, fps)
		got, err := m.s.FingerprintCounts(m.ctx, "", name)
		if err != nil {
			rt.Fatalf("FingerprintCounts of %s: %v", name, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(one) {
			rt.Errorf("FingerprintCounts of %s = %v, want %v", name, got, one)
		}
		want = append(want, one...)
	}
	sort.SliceStable(want, func(i, j int) bool { return want[i].Model < want[j].Model })
	got, err := m.s.FingerprintCounts(m.ctx, "", "")
	if err != nil {
		rt.Fatalf("FingerprintCounts: %v", err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		rt.Errorf("FingerprintCounts = %v, want %v", got, want)
	}
}

// smQueryWindows are the windows Check reads through, one per step in turn:
// on the grid, across unit edges, a sliver, the whole day.
var smQueryWindows = []state.Window{
	win(5, 9), winD(30*time.Minute, 13*time.Hour+30*time.Minute), win(0, 24),
	winD(150*time.Minute, 180*time.Minute), win(12, 24), winD(0, 90*time.Minute), win(20, 21),
}

func (m *smMachine) checkModel(rt *rapid.T, md *smModel, qw state.Window, some, rest []state.UnitStatus) {
	us := m.scan(rt, state.UnitQuery{Model: md.name})
	want := md.sorted()

	// One unit per window and per id, in window order, each in one status
	// with exactly the fields that status carries.
	ids := map[int64]string{}
	wins := map[smKey]bool{}
	for i, u := range us {
		if prev, ok := ids[u.ID]; ok {
			rt.Errorf("%s: unit id %d appears twice: %s and %s", md.name, u.ID, prev, hw(u.Window))
		}
		ids[u.ID] = hw(u.Window)
		if wins[keyOf(u.Window)] {
			rt.Errorf("%s: two units have window %s", md.name, hw(u.Window))
		}
		wins[keyOf(u.Window)] = true
		if i > 0 && !windowLess(us[i-1].Window, u.Window) {
			rt.Errorf("%s: ScanUnits returned %s before %s", md.name, hw(us[i-1].Window), hw(u.Window))
		}
		for _, p := range statusFieldProblems(u) {
			rt.Errorf("%s %s: %s", md.name, hw(u.Window), p)
		}
	}

	// The store equals the model.
	got := map[smKey]state.Unit{}
	for _, u := range us {
		got[keyOf(u.Window)] = u
	}
	for _, w := range want {
		g, ok := got[keyOf(w.Window)]
		if !ok {
			rt.Errorf("%s: the store has no unit %s; the model has it %s", md.name, hw(w.Window), w.Status)
			continue
		}
		for _, d := range diffUnit(g, *w) {
			rt.Errorf("%s %s: %s", md.name, hw(w.Window), d)
		}
		delete(got, keyOf(w.Window))
	}
	for _, u := range got {
		rt.Errorf("%s: the store has unit %s %s (id %d), which the model does not", md.name, hw(u.Window), u.Status, u.ID)
	}

	// The filtered reads, one kind per step in turn (each costs a query or
	// two, and under the race detector SQLite's are slow):
	kind := m.step % 3
	switch kind {
	case 0:
		// Every window in exactly one status: the units of some statuses
		// and those of the rest partition the model. (An empty Statuses
		// means every status, so an empty half is skipped.)
		for _, sts := range [][]state.UnitStatus{some, rest} {
			if len(sts) == 0 {
				continue
			}
			eqStrings(rt, md.name+" units of "+fmt.Sprint(sts), unitLines(m.scan(rt, state.UnitQuery{Model: md.name, Statuses: sts})),
				unitLines(filterUnits(us, func(u state.Unit) bool { return slices.Contains(sts, u.Status) })))
		}
	case 1:
		eqStrings(rt, md.name+" units overlapping "+hw(qw), unitLines(m.scan(rt, state.UnitQuery{Model: md.name, Window: qw})),
			unitLines(filterUnits(us, func(u state.Unit) bool { return u.Window.Overlaps(qw) })))
	}

	st, err := m.s.Stats(m.ctx, "", md.name)
	if err != nil {
		rt.Fatalf("Stats(%s): %v", md.name, err)
	}
	counts := map[state.UnitStatus]int{}
	var last *time.Time
	for _, st := range state.Statuses {
		counts[st] = 0
	}
	var applied []state.Unit
	for _, u := range us {
		counts[u.Status]++
		if u.Status == state.Applied {
			applied = append(applied, u)
			if u.AppliedAt != nil && (last == nil || u.AppliedAt.After(*last)) {
				last = u.AppliedAt
			}
		}
	}
	if fmt.Sprint(st.Counts) != fmt.Sprint(counts) {
		rt.Errorf("%s: Stats counts %v, the units are %v", md.name, st.Counts, counts)
	}
	if !sameTimePtr(st.LastAppliedAt, last) {
		rt.Errorf("%s: Stats LastAppliedAt %s, want %s", md.name, fmtPtr(st.LastAppliedAt), fmtPtr(last))
	}

	// No two running units of a flexible model overlap.
	if md.flexible {
		run := filterUnits(us, func(u state.Unit) bool { return u.Status == state.Running })
		for i := range run {
			for j := i + 1; j < len(run); j++ {
				if run[i].Window.Overlaps(run[j].Window) {
					rt.Errorf("%s: running units %s and %s overlap", md.name, hw(run[i].Window), hw(run[j].Window))
				}
			}
		}
	}

	// Coverage is the union of the applied windows; Applied lists them.
	var aw []state.Window
	var rows, rowsIn []string
	for _, u := range applied {
		aw = append(aw, u.Window)
		r := fmt.Sprintf("%s@%s", hw(u.Window), fmtPtr(u.AppliedAt))
		rows = append(rows, r)
		if u.Window.Overlaps(qw) {
			rowsIn = append(rowsIn, r)
		}
	}
	union := state.NewIntervalSet(aw...)
	m.checkCoverage(rt, md, state.Window{}, union)
	switch kind {
	case 1:
		m.checkCoverage(rt, md, qw, union)
	case 2:
		m.checkApplied(rt, md, state.Window{}, rows)
		m.checkApplied(rt, md, qw, rowsIn)
	}
}

// checkCoverage compares Coverage within w (everything when zero) with the
// union of the applied windows.
func (m *smMachine) checkCoverage(rt *rapid.T, md *smModel, w state.Window, union state.IntervalSet) {
	cov, err := m.s.Coverage(m.ctx, "", md.name, w)
	if err != nil {
		rt.Fatalf("Coverage(%s, %s): %v", md.name, ow(w), err)
	}
	want := union
	if !w.IsZero() {
		want = union.Intersect(w)
	}
	if !cov.Equal(want) {
		rt.Errorf("%s: Coverage(%s) = %s, but the union of the applied windows there is %s", md.name, ow(w), hws(cov.Windows()), hws(want.Windows()))
	}
}

// checkApplied compares Applied within w with the applied units.
func (m *smMachine) checkApplied(rt *rapid.T, md *smModel, w state.Window, want []string) {
	ar, err := m.s.Applied(m.ctx, "", md.name, w)
	if err != nil {
		rt.Fatalf("Applied(%s, %s): %v", md.name, ow(w), err)
	}
	var got []string
	for _, r := range ar {
		got = append(got, fmt.Sprintf("%s@%s", hw(r.Window), r.AppliedAt))
	}
	eqStrings(rt, fmt.Sprintf("%s: Applied(%s)", md.name, ow(w)), got, want)
}

// statusFieldProblems checks the fields a unit's status carries: AppliedAt
// only while applied, LeaseOwner and LeaseUntil only while running, Error
// only while failed, BlockedReason only while blocked (the machine always
// gives a failure an error and a block a reason).
func statusFieldProblems(u state.Unit) []string {
	var out []string
	is := func(st state.UnitStatus) bool { return u.Status == st }
	if (u.AppliedAt != nil) != is(state.Applied) {
		out = append(out, fmt.Sprintf("%s with AppliedAt %s", u.Status, fmtPtr(u.AppliedAt)))
	}
	if (u.LeaseOwner != "") != is(state.Running) || (u.LeaseUntil != nil) != is(state.Running) {
		out = append(out, fmt.Sprintf("%s with LeaseOwner %q, LeaseUntil %s", u.Status, u.LeaseOwner, fmtPtr(u.LeaseUntil)))
	}
	if (u.Error != "") != is(state.Failed) {
		out = append(out, fmt.Sprintf("%s with Error %q", u.Status, u.Error))
	}
	if (u.BlockedReason != "") != is(state.Blocked) {
		out = append(out, fmt.Sprintf("%s with BlockedReason %q", u.Status, u.BlockedReason))
	}
	return out
}

// diffUnit lists how got differs from want, RowsWritten aside (the package
// doc says nothing of it).
func diffUnit(got, want state.Unit) []string {
	var out []string
	f := func(name string, g, w any) {
		if fmt.Sprint(g) != fmt.Sprint(w) {
			out = append(out, fmt.Sprintf("%s = %v, want %v", name, g, w))
		}
	}
	f("ID", got.ID, want.ID)
	f("Env", got.Env, want.Env)
	f("Model", got.Model, want.Model)
	if !got.Window.Equal(want.Window) {
		out = append(out, fmt.Sprintf("Window = %s, want %s", hw(got.Window), hw(want.Window)))
	}
	f("Status", got.Status, want.Status)
	if !sameTimePtr(got.AppliedAt, want.AppliedAt) {
		out = append(out, fmt.Sprintf("AppliedAt = %s, want %s", fmtPtr(got.AppliedAt), fmtPtr(want.AppliedAt)))
	}
	f("BlockedReason", got.BlockedReason, want.BlockedReason)
	f("Error", got.Error, want.Error)
	f("Attempts", got.Attempts, want.Attempts)
	f("RunID", got.RunID, want.RunID)
	f("LeaseOwner", got.LeaseOwner, want.LeaseOwner)
	if !sameTimePtr(got.LeaseUntil, want.LeaseUntil) {
		out = append(out, fmt.Sprintf("LeaseUntil = %s, want %s", fmtPtr(got.LeaseUntil), fmtPtr(want.LeaseUntil)))
	}
	f("Fence", got.Fence, want.Fence)
	f("Fingerprint", got.Fingerprint, want.Fingerprint)
	if !got.UpdatedAt.Equal(want.UpdatedAt) {
		out = append(out, fmt.Sprintf("UpdatedAt = %s, want %s", got.UpdatedAt, want.UpdatedAt))
	}
	for _, t := range []*time.Time{got.AppliedAt, got.LeaseUntil, &got.UpdatedAt} {
		if t != nil && !t.IsZero() && t.Location() != time.UTC {
			out = append(out, fmt.Sprintf("time %s is not in UTC", t))
		}
	}
	return out
}

func sameTimePtr(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func filterUnits(us []state.Unit, keep func(state.Unit) bool) []state.Unit {
	var out []state.Unit
	for _, u := range us {
		if keep(u) {
			out = append(out, u)
		}
	}
	return out
}

func unitLines(us []state.Unit) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = fmt.Sprintf("%d %s %s", u.ID, hw(u.Window), u.Status)
	}
	return out
}

func eqStrings(rt *rapid.T, what string, got, want []string) {
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		rt.Errorf("%s:\n got  %v\n want %v", what, got, want)
	}
}

// ---------------------------------------------------------------- store access

func (m *smMachine) scan(rt *rapid.T, q state.UnitQuery) []state.Unit {
	var out []state.Unit
	if err := m.s.ScanUnits(m.ctx, q, func(u state.Unit) error { out = append(out, u); return nil }); err != nil {
		rt.Fatalf("ScanUnits(%+v): %v", q, err)
	}
	return out
}

func (m *smMachine) lastSeq(rt *rapid.T) int64 {
	cs, err := m.s.Changes(m.ctx, 0, 0)
	if err != nil {
		rt.Fatalf("Changes: %v", err)
	}
	if len(cs) == 0 {
		return 0
	}
	return cs[len(cs)-1].Seq
}

// expectChanges compares the changes recorded since the last step with want,
// in any order; with check false it only moves past them, for a step whose
// outcome the package doc leaves open.
func (m *smMachine) expectChanges(rt *rapid.T, what string, want []state.Change, check bool) {
	cs, err := m.s.Changes(m.ctx, m.seq, 0)
	if err != nil {
		rt.Fatalf("Changes(%d): %v", m.seq, err)
	}
	if len(cs) > 0 {
		m.seq = cs[len(cs)-1].Seq
	}
	if !check {
		return
	}
	line := func(c state.Change) string {
		return fmt.Sprintf("%s %s %s->%s x%d at=t+%s run=%d", c.Model, hw(c.Window), c.From, c.To, c.Count, c.At.Sub(clock(0)), c.RunID)
	}
	var got, exp []string
	for _, c := range cs {
		got = append(got, line(c))
	}
	for _, c := range want {
		exp = append(exp, line(c))
	}
	sort.Strings(got)
	sort.Strings(exp)
	eqStrings(rt, what+": changes recorded", got, exp)
}

// hullOf is the hull of ws, the zero Window when there are none.
func hullOf(ws []state.Window) state.Window {
	var h state.Window
	for _, w := range ws {
		h = state.Hull(h, w)
	}
	return h
}
