package cli

import (
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
)

func recheck(t *testing.T, world []string) map[string]enginetest.RecheckRow {
	t.Helper()
	code, out, errOut := run(t, append([]string{"blocked", "--recheck", "-o", "json"}, world...)...)
	if code != 0 || errOut != "" {
		t.Fatalf("blocked --recheck: code %d, stderr %q", code, errOut)
	}
	var got struct {
		AsOf   string                  `json:"as_of"`
		Models []enginetest.RecheckRow `json:"models"`
	}
	wbDecode(t, out, &got)
	if got.AsOf != "2026-01-03T00:00:00Z" {
		t.Errorf("as_of %q, want the --as-of time", got.AsOf)
	}
	rows := map[string]enginetest.RecheckRow{}
	for _, r := range got.Models {
		rows[r.Model] = r
	}
	return rows
}

// TestBlockedRecheckSeesAReleasedUnit: a blocked reason dates from the last
// run, --recheck judges the gate now. In wbWorld mart.daily's day 0 waits on
// raw.orders' failed hour 05 and report.snapshot on the whole of
// mart.daily; once an operator marks hour 05 applied, day 0 is ready —
// released, as it is still stored blocked — while the snapshot still waits.
// The recheck itself changes nothing.
func TestBlockedRecheckSeesAReleasedUnit(t *testing.T) {
	world := wbWorld(t)
	before := recheck(t, world)
	want := map[string]enginetest.RecheckRow{
		"mart.daily":      {Model: "mart.daily", Pipeline: "core", Outstanding: 1, Waiting: 1},
		"report.snapshot": {Model: "report.snapshot", Pipeline: "reports", Outstanding: 1, Waiting: 1},
	}
	for name, w := range want {
		if before[name] != w {
			t.Errorf("before the mark, %s = %+v, want %+v", name, before[name], w)
		}
	}

	mark := []string{"mark", "raw.orders", "--since", "2026-01-01T05:00:00Z", "--until", "2026-01-01T06:00:00Z", "--status", "applied"}
	// The world's --as-of makes the engine read-only; a mark is made now.
	args := append(mark, world[:4]...)
	if code, _, errOut := run(t, args...); code != 0 {
		t.Fatalf("mark: code %d, %s", code, errOut)
	}
	after := recheck(t, world)
	if got, w := after["mart.daily"], (enginetest.RecheckRow{Model: "mart.daily", Pipeline: "core", Outstanding: 1, Ready: 1, Released: 1}); got != w {
		t.Errorf("after the mark, mart.daily = %+v, want %+v", got, w)
	}
	if got := after["report.snapshot"]; got.Waiting != 1 || got.Ready != 0 {
		t.Errorf("after the mark, report.snapshot = %+v, want still waiting on mart.daily", got)
	}

	// Rechecking moved nothing: mart.daily's day 0 is still stored blocked.
	code, out, _ := run(t, append([]string{"blocked"}, world...)...)
	if code != 0 || !strings.Contains(out, "mart.daily ") {
		t.Errorf("after --recheck the stored blocked unit is gone:\n%s", out)
	}
}

// TestBlockedRecheckCountsAnOutdatedWaitApart: core.daily reads raw.orders
// with require_current. Day one's hours are loaded, then the loader's
// command changes, so they are applied under an earlier definition; day two
// has no hour loaded at all. A run of core.daily holds both days — one on
// an outdated upstream, one on a missing range — and --recheck must tell
// them apart: nothing is missing for day one. On both stores.
func TestBlockedRecheckCountsAnOutdatedWaitApart(t *testing.T) {
	odEach(t, func(t *testing.T, w odWorld) {
		current := strings.Replace(odSpec, "contract: encapsulate}", "contract: encapsulate, require_current: true}", 1)
		w.write(t, current)
		w.ok(t, w.args("run", "raw.orders", "--since", "2026-01-01", "--until", "2026-01-02")...)
		w.write(t, strings.Replace(current, `"v1"`, `"v2"`, 1))
		w.ok(t, w.args("run", "core.daily", "--since", "2026-01-01", "--until", "2026-01-03")...)
		if st := w.ok(t, w.args("units", "core.daily", "--status", "blocked")...); !strings.Contains(st, "applied under an earlier definition") ||
			!strings.Contains(st, "missing [2026-01-02T00:00:00Z, 2026-01-03T00:00:00Z)") {
			t.Fatalf("the run did not hold day one on the outdated hours and day two on the missing ones:\n%s", st)
		}

		var got struct {
			Models []enginetest.RecheckRow `json:"models"`
		}
		wbDecode(t, w.ok(t, w.args("blocked", "--recheck", "-o", "json")...), &got)
		want := enginetest.RecheckRow{Model: "core.daily", Pipeline: "shop", Outstanding: 2, Waiting: 1, Outdated: 1}
		if len(got.Models) != 1 || got.Models[0] != want {
			t.Errorf("blocked --recheck -o json: %+v, want only %+v", got.Models, want)
		}

		text := w.ok(t, w.args("blocked", "--recheck")...)
		for _, line := range []string{
			"MODEL       PIPELINE  NOT APPLIED  READY  RELEASED  WAITING  OUTDATED  STALE  ERRORS",
			"core.daily  shop      2            0      0         1        1         0      0",
			"2 units not applied as of ",
			": 0 ready (0 of them blocked, now released), 1 waiting on an upstream, 1 on an outdated upstream, 0 stale, 0 failing the gate",
		} {
			if !strings.Contains(text, line) {
				t.Errorf("blocked --recheck lacks %q:\n%s", line, text)
			}
		}
	})
}
