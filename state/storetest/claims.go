package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

var claimTests = []test{
	{"RetryOutcomeWaitsItsTurn", testRetryOutcome},
	{"WaitOutcomeKeepsItsReasonAndCountsNoAttempt", testWaitOutcome},
	{"LeasesExpire", testLeasesExpire},
	{"HeartbeatExtendsLease", testHeartbeatExtendsLease},
	{"StaleFenceRefused", testStaleFenceRefused},
	{"CompleteRepeatIsNoOp", testCompleteRepeatIsNoOp},
	{"Scoping", testClaimScoping},
	{"UnregisteredModel", testClaimUnregisteredModel},
	{"ManyModels", testClaimManyModels},
	{"FlexibleOverlapRefused", testFlexibleOverlapRefused},
	{"ConcurrentClaimersNeverShare", testConcurrentClaimers},
	{"ConcurrentFlexibleNeverOverlap", testConcurrentFlexible},
}

// testLeasesExpire: a worker that dies leaves a lease that ends; the unit
// returns to pending with one more attempt and is claimable again.
func testLeasesExpire(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 2, clock(1))
	cs := claimExactly(t, s, "", "a", 2, clock(0)) // leases end at clock(10)
	must(t, "Heartbeat", s.Heartbeat(ctx, cs[1], clock(30)))

	n, err := s.ReleaseExpired(ctx, clock(10))
	must(t, "ReleaseExpired at the lease end", err)
	eq(t, "released at exactly the lease end", n, 0)
	n, err = s.ReleaseExpired(ctx, clock(10).Add(time.Second))
	must(t, "ReleaseExpired", err)
	eq(t, "released a second later", n, 1)

	u := unit(t, s, "", "a", win(0, 1))
	eq(t, "expired", brief(u), "a [0h,1h) pending")
	eq(t, "expired Attempts", u.Attempts, 1)
	eq(t, "expired LeaseOwner", u.LeaseOwner, "")
	eqTimePtr(t, "expired LeaseUntil", u.LeaseUntil, nil)
	eqTime(t, "expired UpdatedAt", u.UpdatedAt, clock(10).Add(time.Second))
	eq(t, "heartbeaten unit", brief(unit(t, s, "", "a", win(1, 2))), "a [1h,2h) running")

	again := claim(t, s, "", "a", 5, clock(11)) // lease ends at clock(21)
	eq(t, "claimable again", claimBriefs(again), []string{"a [0h,1h) running"})
	n, err = s.ReleaseExpired(ctx, clock(31))
	must(t, "ReleaseExpired", err)
	eq(t, "released both", n, 2)
	eq(t, "attempts of [0h,1h)", unit(t, s, "", "a", win(0, 1)).Attempts, 2)
	eq(t, "attempts of [1h,2h)", unit(t, s, "", "a", win(1, 2)).Attempts, 1)
}

// testHeartbeatExtendsLease: a live worker keeps its unit past the first
// lease end.
func testHeartbeatExtendsLease(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 1, clock(1))
	cs := claimExactly(t, s, "", "a", 1, clock(0))
	must(t, "Heartbeat", s.Heartbeat(ctx, cs[0], clock(25)))
	eqTimePtr(t, "LeaseUntil", unit(t, s, "", "a", win(0, 1)).LeaseUntil, ptr(clock(25)))
	n, err := s.ReleaseExpired(ctx, clock(20))
	must(t, "ReleaseExpired", err)
	eq(t, "released", n, 0)
	must(t, "Complete after the first lease end", s.Complete(ctx, cs[0], state.Outcome{Status: state.Applied, At: clock(21)}))
}

// testStaleFenceRefused: a worker whose lease expired and whose unit was
// claimed by another worker can neither extend nor complete it.
func testStaleFenceRefused(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 1, clock(1))
	old := claimExactly(t, s, "", "a", 1, clock(0))
	// A fence the unit never had is refused outright.
	wantLeaseLost(t, "Heartbeat with a made-up fence", s.Heartbeat(ctx, state.Claim{Unit: old[0].Unit, Fence: old[0].Fence + 100}, clock(12)))

	_, err := s.ReleaseExpired(ctx, clock(11))
	must(t, "ReleaseExpired", err)
	wantLeaseLost(t, "Heartbeat after expiry", s.Heartbeat(ctx, old[0], clock(30)))
	cur, err := s.Claim(ctx, state.ClaimRequest{Models: []string{"a"}, Worker: "w2", Lease: 10 * time.Minute, Limit: 1, Now: clock(12)})
	must(t, "Claim", err)
	if len(cur) != 1 {
		t.Fatalf("reclaimed %v", claimBriefs(cur))
	}
	if cur[0].Fence <= old[0].Fence {
		t.Errorf("new fence %d is not above the old %d", cur[0].Fence, old[0].Fence)
	}
	before := unit(t, s, "", "a", win(0, 1))
	seq := lastSeq(t, s)

	wantLeaseLost(t, "Heartbeat with the stale fence", s.Heartbeat(ctx, old[0], clock(40)))
	wantLeaseLost(t, "Complete with the stale fence", s.Complete(ctx, old[0], state.Outcome{Status: state.Applied, At: clock(13)}))
	wantLeaseLost(t, "Complete failed with the stale fence", s.Complete(ctx, old[0], state.Outcome{Status: state.Failed, At: clock(13), Error: "x"}))
	after := unit(t, s, "", "a", win(0, 1))
	eq(t, "unit after stale calls", after, before)
	eq(t, "owner", after.LeaseOwner, "w2")
	eq(t, "changes after stale calls", changeBriefs(changes(t, s, seq)), []string{})

	must(t, "Complete with the current fence", s.Complete(ctx, cur[0], state.Outcome{Status: state.Applied, At: clock(14)}))
}

// testCompleteRepeatIsNoOp: a worker that lost the commit acknowledgement
// retries; the retry must neither fail nor record the outcome twice.
func testCompleteRepeatIsNoOp(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	modelA(t, s, 1, clock(1))
	cs := claimExactly(t, s, "", "a", 1, clock(2))
	o := state.Outcome{Status: state.Applied, At: clock(3), RowsWritten: ptr(int64(5))}
	must(t, "Complete", s.Complete(ctx, cs[0], o))
	before := unit(t, s, "", "a", win(0, 1))
	seq := lastSeq(t, s)

	must(t, "Complete repeated", s.Complete(ctx, cs[0], o))
	later := o
	later.At = clock(9)
	must(t, "Complete repeated with a later time", s.Complete(ctx, cs[0], later))
	eq(t, "unit after repeats", unit(t, s, "", "a", win(0, 1)), before)
	eq(t, "changes after repeats", changeBriefs(changes(t, s, seq)), []string{})

	wantLeaseLost(t, "Complete with another outcome", s.Complete(ctx, cs[0], state.Outcome{Status: state.Failed, At: clock(4), Error: "late"}))
	eq(t, "unit after a conflicting repeat", unit(t, s, "", "a", win(0, 1)), before)
}

// testClaimScoping: execution is window-scoped and model-scoped, and an
// environment only hands out its own units.
func testClaimScoping(t *testing.T, s state.Store, _ *config) {
	register(t, s, "", fixModel("a"), fixModel("b"), fixModel("c"))
	register(t, s, "pr1", fixModel("a"))
	for _, m := range []string{"a", "b", "c"} {
		prefill(t, s, "", m, hourly(0, 3), clock(1))
	}
	prefill(t, s, "pr1", "a", hourly(0, 3), clock(1))

	cs, err := s.Claim(t.Context(), state.ClaimRequest{Models: []string{"a", "b"}, Window: win(1, 2), Worker: "w", Lease: time.Minute, Limit: 10, Now: clock(2)})
	must(t, "Claim [1h,2h) of a, b", err)
	got := claimBriefs(cs)
	sort.Strings(got)
	eq(t, "claims in [1h,2h)", got, []string{"a [1h,2h) running", "b [1h,2h) running"})

	eq(t, "claims of b", claimBriefs(claim(t, s, "", "b", 10, clock(3))), []string{"b [0h,1h) running", "b [2h,3h) running"})
	eq(t, "limit 1, oldest first", claimBriefs(claim(t, s, "", "a", 1, clock(4))), []string{"a [0h,1h) running"})

	// A window crossing unit edges keeps every unit it overlaps.
	cs, err = s.Claim(t.Context(), state.ClaimRequest{Models: []string{"c"}, Window: winD(30*time.Minute, 90*time.Minute), Worker: "w", Lease: time.Minute, Limit: 10, Now: clock(5)})
	must(t, "Claim [30m,90m) of c", err)
	eq(t, "claims of c in [30m,90m)", claimBriefs(cs), []string{"c [0h,1h) running", "c [1h,2h) running"})

	got = claimBriefs(claim(t, s, "", "", 10, clock(6)))
	sort.Strings(got)
	eq(t, "claims of every model", got, []string{"a [2h,3h) running", "c [2h,3h) running"})
	eq(t, "nothing left", claimBriefs(claim(t, s, "", "", 10, clock(7))), []string{})

	st, err := s.Stats(t.Context(), "pr1", "a")
	must(t, "Stats pr1", err)
	eq(t, "pr1 untouched", st.Counts[state.Pending], 3)
}

// testClaimUnregisteredModel: a claim naming a model that is not
// registered in its environment is an error that names it (ErrNotFound),
// on every store — whether or not the models beside it have pending units
// — and claims nothing. (PostgreSQL once returned no claims and no error.)
func testClaimUnregisteredModel(t *testing.T, s state.Store, _ *config) {
	register(t, s, "", fixModel("a"))
	register(t, s, "pr1", fixModel("ghost"))
	prefill(t, s, "", "a", hourly(0, 2), clock(1))
	for _, models := range [][]string{{"ghost"}, {"a", "ghost"}} {
		cs, err := s.Claim(t.Context(), state.ClaimRequest{Models: models, Worker: "w", Lease: time.Minute, Limit: 10, Now: clock(2)})
		if !errors.Is(err, state.ErrNotFound) || !strings.Contains(fmt.Sprint(err), "ghost") || len(cs) != 0 {
			t.Errorf("Claim %v: %d claims, %v; want ErrNotFound naming ghost and no claim", models, len(cs), err)
		}
	}
	st, err := s.Stats(t.Context(), "", "a")
	must(t, "Stats a", err)
	eq(t, "a's units untouched", st.Counts[state.Pending], 2)
}

// testFlexibleOverlapRefused: two running units of one flexible model never
// overlap, while units that only touch run side by side.
func testFlexibleOverlapRefused(t *testing.T, s state.Store, _ *config) {
	register(t, s, "", flexModel("f"))
	prefill(t, s, "", "f", []state.Window{win(0, 2), win(1, 3), win(3, 4)}, clock(1))

	first := claim(t, s, "", "f", 10, clock(2))
	eq(t, "first claim skips [1h,3h)", claimBriefs(first), []string{"f [0h,2h) running", "f [3h,4h) running"})
	eq(t, "while [0h,2h) runs", claimBriefs(claim(t, s, "", "f", 10, clock(3))), []string{})
	if len(first) != 2 {
		t.FailNow()
	}
	complete(t, s, first[0], state.Applied, clock(4))
	eq(t, "after [0h,2h) is applied", claimBriefs(claim(t, s, "", "f", 10, clock(5))), []string{"f [1h,3h) running"})

	// Touching units of a flexible model do not overlap.
	register(t, s, "", flexModel("h"))
	prefill(t, s, "", "h", hourly(0, 3), clock(6))
	eq(t, "touching units", claimBriefs(claim(t, s, "", "h", 10, clock(7))), []string{"h [0h,1h) running", "h [1h,2h) running", "h [2h,3h) running"})

	// An expired lease frees the window for an overlapping unit.
	register(t, s, "", flexModel("k"))
	prefill(t, s, "", "k", []state.Window{win(0, 2), win(1, 3)}, clock(8))
	eq(t, "k first", claimBriefs(claim(t, s, "", "k", 10, clock(8))), []string{"k [0h,2h) running"})
	_, err := s.ReleaseExpired(t.Context(), clock(19))
	must(t, "ReleaseExpired", err)
	eq(t, "k after expiry, oldest first", claimBriefs(claim(t, s, "", "k", 1, clock(20))), []string{"k [0h,2h) running"})
}

// testConcurrentClaimers: workers claiming at once never receive the same
// unit. With a reopen hook half of them use a second Store, as a second
// process would.
func testConcurrentClaimers(t *testing.T, s state.Store, c *config) {
	const units, workers = 120, 8
	modelA(t, s, units, clock(1))

	var mu sync.Mutex
	seen := map[int64]string{}
	var dup []string
	concurrently(t, s, c, workers, func(st state.Store, name string) error {
		for {
			cs, err := st.Claim(t.Context(), state.ClaimRequest{Models: []string{"a"}, Worker: name, Lease: time.Hour, Limit: 3, Now: clock(2)})
			if err != nil {
				return fmt.Errorf("%s: Claim: %w", name, err)
			}
			if len(cs) == 0 {
				return nil
			}
			mu.Lock()
			for _, cl := range cs {
				if prev, ok := seen[cl.Unit.ID]; ok {
					dup = append(dup, fmt.Sprintf("%s to %s and %s", hw(cl.Unit.Window), prev, name))
				}
				seen[cl.Unit.ID] = name
			}
			mu.Unlock()
		}
	})
	if len(dup) > 0 {
		t.Errorf("units handed to two claimers: %v", dup)
	}
	eq(t, "distinct units claimed", len(seen), units)
	st, err := s.Stats(t.Context(), "", "a")
	must(t, "Stats", err)
	eq(t, "running", st.Counts[state.Running], units)
}

// testConcurrentFlexible: many workers on one flexible model whose pending
// units each overlap their neighbours; at no moment do two running units
// overlap, and in the end the model is covered gap-free.
func testConcurrentFlexible(t *testing.T, s state.Store, c *config) {
	const units, workers = 40, 6
	register(t, s, "", flexModel("f"))
	ws := make([]state.Window, units)
	for k := range ws {
		ws[k] = win(k, k+2) // [k h, k+2 h) overlaps [k+1 h, k+3 h)
	}
	prefill(t, s, "", "f", ws, clock(1))

	var mu sync.Mutex
	running := map[int64]state.Window{} // a subset of what the store has running
	var overlaps []string
	concurrently(t, s, c, workers, func(st state.Store, name string) error {
		for idle := 0; idle < 2000; {
			cs, err := st.Claim(t.Context(), state.ClaimRequest{Models: []string{"f"}, Worker: name, Lease: time.Hour, Limit: 2, Now: clock(2)})
			if err != nil {
				return fmt.Errorf("%s: Claim: %w", name, err)
			}
			if len(cs) == 0 {
				stats, err := st.Stats(t.Context(), "", "f")
				if err != nil {
					return fmt.Errorf("%s: Stats: %w", name, err)
				}
				if stats.Counts[state.Pending] == 0 {
					return nil
				}
				idle++
				time.Sleep(time.Millisecond)
				continue
			}
			mu.Lock()
			for _, cl := range cs {
				for id, other := range running {
					if other.Overlaps(cl.Unit.Window) {
						overlaps = append(overlaps, fmt.Sprintf("%s (unit %d) and %s (unit %d)", hw(cl.Unit.Window), cl.Unit.ID, hw(other), id))
					}
				}
				running[cl.Unit.ID] = cl.Unit.Window
			}
			mu.Unlock()
			for _, cl := range cs {
				// Forget the unit before completing it, so the set
				// never holds a unit the store has already released.
				mu.Lock()
				delete(running, cl.Unit.ID)
				mu.Unlock()
				if err := st.Complete(t.Context(), cl, state.Outcome{Status: state.Applied, At: clock(3)}); err != nil {
					return fmt.Errorf("%s: Complete: %w", name, err)
				}
			}
		}
		return fmt.Errorf("%s: gave up waiting for claimable units", name)
	})
	if len(overlaps) > 0 {
		t.Errorf("overlapping running units of a flexible model: %v", overlaps)
	}
	st, err := s.Stats(t.Context(), "", "f")
	must(t, "Stats", err)
	eq(t, "applied", st.Counts[state.Applied], units)
	eq(t, "coverage", coverage(t, s, "", "f", state.Window{}), "[0h,41h)")
}

// testClaimManyModels: a claim over more models than a store reads one by
// one (a worker over the whole platform) hands out the oldest windows
// across every model it names, keeps a flexible model's running units from
// overlapping, and stays inside its environment.
func testClaimManyModels(t *testing.T, s state.Store, _ *config) {
	var recs []state.ModelRecord
	var names []string
	for i := range 12 {
		recs = append(recs, fixModel(fmt.Sprintf("m%02d", i)))
		names = append(names, recs[i].Name)
	}
	recs = append(recs, flexModel("f"))
	names = append(names, "f")
	register(t, s, "", recs...)
	register(t, s, "pr1", fixModel("m00"))
	for i := range 12 {
		// Model i's windows start at hour i: the oldest windows belong to
		// the first models.
		prefill(t, s, "", names[i], hourly(i, i+3), clock(1))
	}
	prefill(t, s, "", "f", []state.Window{win(0, 2), win(1, 3)}, clock(1))
	prefill(t, s, "pr1", "m00", hourly(0, 3), clock(1))

	cs, err := s.Claim(t.Context(), state.ClaimRequest{Models: names, Worker: "w", Lease: time.Minute, Limit: 4, Now: clock(3)})
	must(t, "Claim of 13 models", err)
	got := claimBriefs(cs)
	sort.Strings(got)
	// Windows from hour 0: m00 [0h,1h) and f [0h,2h); from hour 1: m00 and
	// m01 [1h,2h), while f [1h,3h) overlaps f's running [0h,2h).
	eq(t, "the four oldest windows across 13 models", got, []string{"f [0h,2h) running", "m00 [0h,1h) running", "m00 [1h,2h) running", "m01 [1h,2h) running"})

	rest := claimBriefs(claim(t, s, "", "", 100, clock(4)))
	eq(t, "every model: the rest but f's overlapping unit", len(rest), 12*3-3)
	if slices.Contains(rest, "f [1h,3h) running") {
		t.Errorf("f [1h,3h) was claimed while f [0h,2h) runs: %v", rest)
	}
	st, err := s.Stats(t.Context(), "pr1", "m00")
	must(t, "Stats pr1", err)
	eq(t, "pr1 untouched", st.Counts[state.Pending], 3)
}

// concurrently runs work in workers goroutines at once, each named w<k> and
// on a store handle taken in turn from s and, where the backend can reopen
// one, a second handle; every error a worker returns fails t.
func concurrently(t *testing.T, s state.Store, c *config, workers int, work func(st state.Store, name string) error) {
	t.Helper()
	stores := []state.Store{s}
	if c.reopen != nil {
		stores = append(stores, c.reopen(t, s))
	}
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			if err := work(stores[w%len(stores)], fmt.Sprintf("w%d", w)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
