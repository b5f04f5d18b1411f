package storetest

import (
	"testing"

	"github.com/bollhav/bollhav/state"
)

// fingerprintTests pin how a unit records the definition it was built
// under: set only with an applied outcome, cleared when the unit leaves
// applied, unknown when an operator marks it, and counted per model in one
// read.
var fingerprintTests = []test{
	{"AppliedOutcomeRecordsIt", testFingerprintRecorded},
	{"LeavingAppliedClearsIt", testFingerprintCleared},
	{"CountsByModelAndFingerprint", testFingerprintCounts},
	{"UncoverKeepsItOnBothParts", testFingerprintUncover},
	{"DataJobRecordsIt", testFingerprintDataJob},
	{"CountsKeptInStepWithUnits", testFingerprintCountsKept},
}

// testFingerprintRecorded: Complete and CompleteBatch record an applied
// outcome's fingerprint; a failed or blocked outcome records none even when
// one is given; an applied outcome without one records it unknown.
func testFingerprintRecorded(t *testing.T, s state.Store, _ *config) {
	modelM(t, s, 0, 5)
	cs := claimExactly(t, s, "", "m", 5, clock(1))
	must(t, "Complete", s.Complete(t.Context(), cs[0], state.Outcome{Status: state.Applied, At: clock(2), Fingerprint: "aaaa000011112222"}))
	errs, err := s.CompleteBatch(t.Context(), []state.Completion{
		{Claim: cs[1], Outcome: state.Outcome{Status: state.Applied, At: clock(2), Fingerprint: "bbbb000011112222"}},
		{Claim: cs[2], Outcome: state.Outcome{Status: state.Failed, Error: "boom", At: clock(2), Fingerprint: "cccc000011112222"}},
		{Claim: cs[3], Outcome: state.Outcome{Status: state.Blocked, BlockedReason: "x", At: clock(2), Fingerprint: "dddd000011112222"}},
		{Claim: cs[4], Outcome: state.Outcome{Status: state.Applied, At: clock(2)}},
	})
	must(t, "CompleteBatch", err)
	for _, e := range errs {
		must(t, "CompleteBatch item", e)
	}
	want := []string{"aaaa000011112222", "bbbb000011112222", "", "", ""}
	for i, c := range cs {
		u := unit(t, s, "", "m", c.Unit.Window)
		eq(t, brief(u)+" fingerprint", u.Fingerprint, want[i])
	}
	// Applied, what the gate reads, carries them too: hours 0, 1 and 4.
	rows, err := s.Applied(t.Context(), "", "m", state.Window{})
	must(t, "Applied", err)
	var got []string
	for _, r := range rows {
		got = append(got, hw(r.Window)+" "+r.Fingerprint)
	}
	eq(t, "applied rows", got, []string{"[0h,1h) aaaa000011112222", "[1h,2h) bbbb000011112222", "[4h,5h) "})
	rows, err = s.Applied(t.Context(), "", "m", win(1, 2))
	must(t, "Applied in a window", err)
	eq(t, "applied rows in [1h,2h)", len(rows) == 1 && rows[0].Fingerprint == "bbbb000011112222", true)
	// A repeat of the recorded outcome (a lost acknowledgement) changes nothing.
	must(t, "repeated Complete", s.Complete(t.Context(), cs[0], state.Outcome{Status: state.Applied, At: clock(3), Fingerprint: "eeee000011112222"}))
	eq(t, "fingerprint after a repeated outcome", unit(t, s, "", "m", cs[0].Unit.Window).Fingerprint, "aaaa000011112222")
}

// testFingerprintCleared: re-pending an applied unit (a bulldozer) clears its
// fingerprint; an operator's mark records it unknown; a mark that finds
// the unit applied already leaves it alone.
func testFingerprintCleared(t *testing.T, s state.Store, _ *config) {
	modelM(t, s, 0, 2)
	cs := claim(t, s, "", "m", 2, clock(1))
	for _, c := range cs {
		must(t, "Complete", s.Complete(t.Context(), c, state.Outcome{Status: state.Applied, At: clock(2), Fingerprint: "aaaa000011112222"}))
	}
	n, err := s.SetStatus(t.Context(), state.StatusChange{Model: "m", Window: win(0, 1), From: []state.UnitStatus{state.Applied}, To: state.Pending, Now: clock(3)})
	must(t, "SetStatus → pending", err)
	eq(t, "re-pended", n, 1)
	eq(t, "re-pended unit's fingerprint", unit(t, s, "", "m", win(0, 1)).Fingerprint, "")
	markApplied(t, s, "", "m", win(0, 1), clock(4))
	eq(t, "marked unit's fingerprint", unit(t, s, "", "m", win(0, 1)).Fingerprint, "")
	n, err = s.SetStatus(t.Context(), state.StatusChange{Model: "m", From: []state.UnitStatus{state.Pending, state.Applied}, To: state.Applied, Now: clock(5)})
	must(t, "SetStatus → applied over applied units", err)
	eq(t, "moved", n, 0)
	eq(t, "applied unit's fingerprint after a mark over it", unit(t, s, "", "m", win(1, 2)).Fingerprint, "aaaa000011112222")
}

// testFingerprintCounts: applied units only, per model of the environment
// asked for, unknown as "", ordered by model and fingerprint.
func testFingerprintCounts(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	got, err := s.FingerprintCounts(ctx, "", "")
	must(t, "FingerprintCounts of an empty store", err)
	eq(t, "counts of an empty store", len(got), 0)

	register(t, s, "", fixModel("a"), fixModel("b"), timelessModel("c"))
	register(t, s, "dev", fixModel("a"))
	prefill(t, s, "", "a", hourly(0, 6), clock(0))
	prefill(t, s, "", "b", hourly(0, 2), clock(0))
	prefill(t, s, "", "c", []state.Window{{}}, clock(0))
	prefill(t, s, "dev", "a", hourly(0, 2), clock(0))
	apply := func(env, model string, n int, fp string) {
		t.Helper()
		cs := claim(t, s, env, model, n, clock(1))
		if len(cs) != n {
			t.Fatalf("claimed %d units of %s, want %d", len(cs), model, n)
		}
		for _, c := range cs {
			must(t, "Complete", s.Complete(ctx, c, state.Outcome{Status: state.Applied, At: clock(2), Fingerprint: fp}))
		}
	}
	apply("", "a", 3, "00000000000000f1") // [0,3)
	apply("", "a", 1, "00000000000000f2") // [3,4)
	apply("", "b", 1, "00000000000000f1")
	apply("", "c", 1, "00000000000000c1")
	apply("dev", "a", 2, "00000000000000f9")
	markApplied(t, s, "", "a", win(4, 5), clock(3))                              // unknown
	claim(t, s, "", "b", 1, clock(4))                                            // running: not counted
	complete(t, s, claim(t, s, "", "a", 1, clock(4))[0], state.Failed, clock(5)) // failed: not counted

	got, err = s.FingerprintCounts(ctx, "", "")
	must(t, "FingerprintCounts", err)
	eq(t, "counts", got, []state.FingerprintCount{
		{Model: "a", Fingerprint: "", Count: 1},
		{Model: "a", Fingerprint: "00000000000000f1", Count: 3},
		{Model: "a", Fingerprint: "00000000000000f2", Count: 1},
		{Model: "b", Fingerprint: "00000000000000f1", Count: 1},
		{Model: "c", Fingerprint: "00000000000000c1", Count: 1},
	})
	got, err = s.FingerprintCounts(ctx, "dev", "")
	must(t, "FingerprintCounts of dev", err)
	eq(t, "dev counts", got, []state.FingerprintCount{{Model: "a", Fingerprint: "00000000000000f9", Count: 2}})
	got, err = s.FingerprintCounts(ctx, "", "b")
	must(t, "FingerprintCounts of one model", err)
	eq(t, "counts of b", got, []state.FingerprintCount{{Model: "b", Fingerprint: "00000000000000f1", Count: 1}})
}

// testFingerprintUncover: a flexible unit split or trimmed by Uncover keeps
// the fingerprint on what is left, like its status and applied_at.
func testFingerprintUncover(t *testing.T, s state.Store, _ *config) {
	register(t, s, "", flexModel("f"))
	prefill(t, s, "", "f", []state.Window{win(0, 10)}, clock(1))
	cs := claim(t, s, "", "f", 1, clock(2))
	must(t, "Complete", s.Complete(t.Context(), cs[0], state.Outcome{Status: state.Applied, At: clock(3), Fingerprint: "aaaa000011112222"}))
	_, err := s.Uncover(t.Context(), state.RemoveRequest{Model: "f", Window: win(3, 4), Now: clock(4)})
	must(t, "Uncover", err)
	us := scan(t, s, "", "f")
	eq(t, "units", briefs(us), []string{"f [0h,3h) applied", "f [4h,10h) applied"})
	for _, u := range us {
		eq(t, hw(u.Window)+" fingerprint", u.Fingerprint, "aaaa000011112222")
	}
}

// testFingerprintDataJob: a data job that applies its unit records the
// job's fingerprint in the same transaction.
func testFingerprintDataJob(t *testing.T, s state.Store, _ *config) {
	ds, schema := dataStore(t, s)
	setupSource(t, ds, schema, s)
	exec(t, ds, schema, `CREATE TABLE {t:dst} (n INTEGER)`)
	c := runningUnit(t, s, 0, 1)
	job := state.DataJob{Kind: state.DataStatements, Window: c.Unit.Window, Fingerprint: "abcd000011112222",
		Statements: tables(t, ds, schema, `INSERT INTO {t:dst} VALUES (1)`)}
	_, err := ds.RunData(t.Context(), job, &c, clock(2))
	must(t, "RunData", err)
	u := unit(t, s, "", "m", c.Unit.Window)
	eq(t, "status", u.Status, state.Applied)
	eq(t, "fingerprint", u.Fingerprint, "abcd000011112222")
	countsMatchScan(t, s, "a data job", "", "m")
	summariesMatchScan(t, s, "a data job", "", "m")
}
