package storetest

import (
	"fmt"
	"sort"
	"testing"

	"github.com/bollhav/bollhav/state"
)

// countFingerprints is what FingerprintCounts reads for one model whose
// applied units carry fps (one a unit): a count a fingerprint, in
// fingerprint order.
func countFingerprints(model string, fps []string) []state.FingerprintCount {
	n := map[string]int{}
	for _, fp := range fps {
		n[fp]++
	}
	keys := make([]string, 0, len(n))
	for fp := range n {
		keys = append(keys, fp)
	}
	sort.Strings(keys)
	var out []state.FingerprintCount
	for _, fp := range keys {
		out = append(out, state.FingerprintCount{Model: model, Fingerprint: fp, Count: n[fp]})
	}
	return out
}

// countsMatchScan fails t unless FingerprintCounts of env, for every model
// and for each one, equals env's applied units counted from a scan, grouped
// by model and fingerprint: the kept counts never drift from the units.
func countsMatchScan(t *testing.T, s state.Store, step, env string, models ...string) {
	t.Helper()
	var want []state.FingerprintCount
	for _, m := range models {
		var fps []string
		for _, u := range scanQ(t, s, state.UnitQuery{Env: env, Model: m, Statuses: []state.UnitStatus{state.Applied}}) {
			fps = append(fps, u.Fingerprint)
		}
		one := countFingerprints(m, fps)
		got, err := s.FingerprintCounts(t.Context(), env, m)
		must(t, "FingerprintCounts", err)
		if fmt.Sprint(got) != fmt.Sprint(one) {
			t.Errorf("after %s: FingerprintCounts(%q, %s) = %v; a scan counts %v", step, env, m, got, one)
		}
		want = append(want, one...)
	}
	sort.SliceStable(want, func(i, j int) bool { return want[i].Model < want[j].Model })
	got, err := s.FingerprintCounts(t.Context(), env, "")
	must(t, "FingerprintCounts", err)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after %s: FingerprintCounts(%q) = %v; a scan counts %v", step, env, got, want)
	}
}

// testFingerprintCountsKept: the counts FingerprintCounts reads, and the
// summaries Summaries reads (counts by status, newest applied_at, coverage),
// are kept in step with the units through every kind of transition — Complete,
// CompleteBatch (with a repeat and a lost lease), a data job, an expired
// lease, a bulldozer's re-pending, an operator's mark, Delete, Uncover
// trimming and splitting applied units — in two environments, and a
// transition that is refused changes no count.
func testFingerprintCountsKept(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	const fpA, fpB = "aaaa000000000001", "bbbb000000000002"
	register(t, s, "", fixModel("fix"), flexModel("flex"), timelessModel("once"))
	register(t, s, "dev", fixModel("fix"))
	check := func(step string) {
		t.Helper()
		countsMatchScan(t, s, step, "", "fix", "flex", "once")
		countsMatchScan(t, s, step, "dev", "fix")
		summariesMatchScan(t, s, step, "", "fix", "flex", "once")
		summariesMatchScan(t, s, step, "dev", "fix")
	}
	check("nothing")
	prefill(t, s, "", "fix", hourly(0, 12), clock(0))
	prefill(t, s, "", "flex", []state.Window{win(0, 6), win(6, 12)}, clock(0))
	prefill(t, s, "", "once", []state.Window{{}}, clock(0))
	prefill(t, s, "dev", "fix", hourly(0, 4), clock(0))
	check("prefill")

	applyAll := func(env, model string, n int, fp string, at int) []state.Claim {
		t.Helper()
		cs := claim(t, s, env, model, n, clock(at))
		for _, c := range cs {
			must(t, "Complete", s.Complete(ctx, c, state.Outcome{Status: state.Applied, At: clock(at + 1), Fingerprint: fp}))
		}
		return cs
	}
	applyAll("", "fix", 4, fpA, 1) // [0,4) under A
	applyAll("", "once", 1, fpA, 1)
	applyAll("", "flex", 2, fpA, 1) // [0,6) and [6,12) under A
	applyAll("dev", "fix", 2, fpB, 1)
	check("Complete")

	// A batch: two applied under B, one failed, a repeat of the first
	// (a no-op) and a stale claim (lease lost, nothing recorded).
	cs := claim(t, s, "", "fix", 3, clock(3))
	stale := cs[2]
	stale.Fence--
	errs, err := s.CompleteBatch(ctx, []state.Completion{
		{Claim: cs[0], Outcome: state.Outcome{Status: state.Applied, At: clock(4), Fingerprint: fpB}},
		{Claim: cs[1], Outcome: state.Outcome{Status: state.Applied, At: clock(4), Fingerprint: fpB}},
		{Claim: cs[0], Outcome: state.Outcome{Status: state.Applied, At: clock(4), Fingerprint: fpB}},
		{Claim: stale, Outcome: state.Outcome{Status: state.Applied, At: clock(4), Fingerprint: fpB}},
	})
	must(t, "CompleteBatch", err)
	must(t, "CompleteBatch item 1", errs[0])
	must(t, "CompleteBatch repeat", errs[2])
	wantLeaseLost(t, "CompleteBatch stale item", errs[3])
	check("CompleteBatch")
	// The stale claim's unit is still running: its lease expires.
	n, err := s.ReleaseExpired(ctx, clock(30))
	must(t, "ReleaseExpired", err)
	eq(t, "released", n, 1)
	check("ReleaseExpired")

	// A repeated Complete of an applied unit counts it once.
	must(t, "repeated Complete", s.Complete(ctx, cs[0], state.Outcome{Status: state.Applied, At: clock(31), Fingerprint: fpB}))
	check("a repeated Complete")

	// An operator marks two pending hours applied (unknown), then a
	// bulldozer re-pends [2,8): A's [2,4), B's [4,6), the marked [6,8).
	eq(t, "marked", markApplied(t, s, "", "fix", win(6, 8), clock(32)), 2)
	check("mark applied")
	n, err = s.SetStatus(ctx, state.StatusChange{Model: "fix", Window: win(2, 8), From: []state.UnitStatus{state.Applied, state.Pending},
		To: state.Pending, Now: clock(33)})
	must(t, "SetStatus", err)
	eq(t, "re-pended", n, 6)
	check("bulldozer")

	// Torch of [0,1) on the grid and the timeless row; Delete refused
	// while a unit is running changes no count.
	_, err = s.Delete(ctx, state.RemoveRequest{Model: "fix", Window: win(0, 1), Now: clock(34)})
	must(t, "Delete", err)
	_, err = s.Delete(ctx, state.RemoveRequest{Model: "once", Now: clock(34)})
	must(t, "Delete timeless", err)
	check("Delete")
	running := claim(t, s, "", "fix", 1, clock(35))
	if _, err := s.Delete(ctx, state.RemoveRequest{Model: "fix", Now: clock(35)}); err == nil {
		t.Fatal("Delete over a running unit succeeded")
	}
	check("a refused Delete")
	complete(t, s, running[0], state.Applied, clock(36)) // unknown: no fingerprint given
	check("an applied outcome without a fingerprint")

	// Uncover [4,7) trims [0,6) to [0,4) and [6,12) to [7,12); then
	// [8,10) splits [7,12) in two.
	_, err = s.Uncover(ctx, state.RemoveRequest{Model: "flex", Window: win(4, 7), Now: clock(37)})
	must(t, "Uncover trim", err)
	_, err = s.Uncover(ctx, state.RemoveRequest{Model: "flex", Window: win(8, 10), Now: clock(37)})
	must(t, "Uncover split", err)
	eq(t, "flex units", briefs(scan(t, s, "", "flex")), []string{"flex [0h,4h) applied", "flex [7h,8h) applied", "flex [10h,12h) applied"})
	check("Uncover")
	_, err = s.Uncover(ctx, state.RemoveRequest{Model: "flex", Now: clock(38)})
	must(t, "Uncover all", err)
	check("Uncover of everything")
}
