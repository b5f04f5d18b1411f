package gate_test

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// A failed root's age is the incident's, not its last try's: a unit that
// failed at 10:00 and again on its rerun at 16:00 has been failing since
// 10:00, in the glance and in the trace alike; a unit whose earlier
// failure was followed by a success has been failing since its newest
// failure alone.
func TestIncidentSinceIsWhenTheFailuresBegan(t *testing.T) {
	const spec = `models:
  - {name: raw.a, pipeline: p, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["false"]}}
  - {name: raw.b, pipeline: p, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["false"]}}
`
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		sp := enginetest.RegisterYAML(t, s, spec, t0)
		first, rerun, now := t0.Add(10*time.Hour), t0.Add(16*time.Hour), t0.Add(17*time.Hour)
		enginetest.Units(t, s,
			// raw.a: failed at 10:00, rerun at 16:00, failed again.
			enginetest.UnitOpts{Model: "raw.a", Window: hours(0, 1), Status: state.Failed, At: rerun, Error: "exit status 1",
				Tries: []enginetest.TryOpts{{Error: "exit status 1", At: first}}},
			// raw.b: failed at 10:00, then applied; rerun (a bulldozer)
			// and failed at 16:00.
			enginetest.UnitOpts{Model: "raw.b", Window: hours(0, 1), Status: state.Applied, At: first.Add(time.Hour),
				Tries: []enginetest.TryOpts{{Error: "exit status 1", At: first}}},
		)
		if n, err := s.SetStatus(t.Context(), state.StatusChange{Model: "raw.b", Window: hours(0, 1), From: []state.UnitStatus{state.Applied},
			To: state.Pending, Now: rerun}); err != nil || n != 1 {
			t.Fatalf("resetting raw.b: %d, %v", n, err)
		}
		claims, err := s.Claim(t.Context(), state.ClaimRequest{Models: []string{"raw.b"}, Worker: "w", Lease: time.Hour, Limit: 1, Now: rerun})
		if err != nil || len(claims) != 1 {
			t.Fatalf("claiming raw.b: %v, %v", claims, err)
		}
		if err := s.Complete(t.Context(), claims[0], state.Outcome{Status: state.Failed, At: rerun, Error: "exit status 1"}); err != nil {
			t.Fatal(err)
		}
		g := &gate.Reader{Store: s, Spec: sp, Now: at(now)}
		want := map[string]time.Time{"raw.a": first, "raw.b": rerun}
		for name, rep := range map[string]*gate.IncidentReport{"glance": mustGlance(t, g), "trace": mustIncidents(t, g)} {
			if len(rep.Incidents) != 2 {
				t.Fatalf("%s: %v, want raw.a and raw.b failed", name, incidentStrings(rep))
			}
			for _, inc := range rep.Incidents {
				if !inc.Since.Equal(want[inc.Model]) {
					t.Errorf("%s: %s since %s, want %s", name, inc.Model, inc.Since, want[inc.Model])
				}
			}
		}
	})
}

// StreakStart is the first of the failed attempts that end the history
// with no gap in their numbers, and nothing when the newest attempt did
// not fail.
func TestStreakStart(t *testing.T) {
	at := func(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }
	history := []state.Attempt{{Number: 1, At: at(1)}, {Number: 2, At: at(2)}, {Number: 4, At: at(4)}, {Number: 5, At: at(5)}}
	for _, c := range []struct {
		attempts int
		want     time.Time
	}{
		{5, at(4)},       // 3 succeeded: the streak is 4 and 5
		{6, time.Time{}}, // the 6th did not fail
		{2, time.Time{}}, // a history newer than the count: not this unit's streak
	} {
		if got := gate.StreakStart(history, c.attempts); !got.Equal(c.want) {
			t.Errorf("attempts %d: %s, want %s", c.attempts, got, c.want)
		}
	}
	if got := gate.StreakStart(history[:2], 2); !got.Equal(at(1)) {
		t.Errorf("two failures in a row: %s, want %s", got, at(1))
	}
}

// WhyCommand pastes into a shell: the unit's time as --at, --env in a dev
// environment, and a word a shell would split or expand quoted.
func TestWhyCommand(t *testing.T) {
	for _, c := range []struct {
		u      gate.UnitRef
		suffix string
		want   string
	}{
		{gate.UnitRef{Model: "raw.orders", Window: hours(5, 6)}, "", "bollhav why raw.orders --at 2026-01-01T05:00:00Z"},
		{gate.UnitRef{Model: "report.snapshot"}, "dev", "bollhav why report.snapshot --env dev"},
		{gate.UnitRef{Model: "odd name's"}, "", `bollhav why 'odd name'\''s'`},
		{gate.UnitRef{Model: "a;rm -rf x", Window: hours(0, 1)}, "$(x)", `bollhav why 'a;rm -rf x' --at 2026-01-01T00:00:00Z --env '$(x)'`},
	} {
		if got := c.u.WhyCommand(c.suffix); got != c.want {
			t.Errorf("WhyCommand(%+v, %q) = %q, want %q", c.u, c.suffix, got, c.want)
		}
	}
}
