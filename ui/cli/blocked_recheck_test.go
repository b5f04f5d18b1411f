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
