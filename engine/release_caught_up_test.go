package engine

import (
	"errors"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// TestARepairReleasesWhatItFixed: raw.orders' hour 05 fails, so the
// run leaves mart.daily's day blocked ("missing 05"). A retry reruns only
// the failed task; once the hour is applied the day's stored reason no
// longer holds, so the retry sends it back to pending, reason cleared, and
// says so — it is not left blocked until someone runs a discover.
func TestARepairReleasesWhatItFixed(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, chainSpec)
		bad := hours(5, 6)
		failing := &fakeExec{fail: func(model string, w *state.Window) error {
			if model == "raw.orders" && w.Equal(bad) {
				return errors.New("exit status 1: source down")
			}
			return nil
		}}
		res, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, failing, nil)
		if err != nil {
			t.Fatal(err)
		}
		if u := unit(t, s, "mart.daily", *firstDay()); u.Status != state.Blocked || len(res.Released) != 0 {
			t.Fatalf("after the failing run mart.daily's day is %s, released %v: want blocked, nothing released", u.Status, res.Released)
		}
		res2, err := e.Retry(t.Context(), res.RunID, &fakeExec{}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		u := unit(t, s, "mart.daily", *firstDay())
		if u.Status != state.Pending || u.BlockedReason != "" {
			t.Errorf("after the repair mart.daily's day is %s (%q): want pending, its stale reason cleared", u.Status, u.BlockedReason)
		}
		if len(res2.Released) != 1 || res2.Released[0].Model != "mart.daily" || res2.Released[0].Units != 1 || !res2.Released[0].Span.Equal(*firstDay()) {
			t.Errorf("the retry released %+v, want mart.daily's one day", res2.Released)
		}
		// The next run applies it.
		if _, err := e.Run(t.Context(), RunRequest{Models: []string{"mart.daily"}, Window: firstDay(), Mode: "discover"}, &fakeExec{}, nil); err != nil {
			t.Fatal(err)
		}
		if u := unit(t, s, "mart.daily", *firstDay()); u.Status != state.Applied {
			t.Errorf("after the discover run mart.daily's day is %s, want applied", u.Status)
		}
	})
}
