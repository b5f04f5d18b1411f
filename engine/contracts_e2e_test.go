package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
)

// levelsSpec: an hourly upstream loaded by a real command that fails for one
// chosen hour (01-01 03:00), and one downstream per contract level in
// another pipeline, so the gate (not the task graph) settles each unit.
const levelsSpec = `models:
  - {name: raw.orders, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["./load.sh"]}}
  - {name: mart.exists, pipeline: marts, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: exists}], run: {command: ["./load.sh"]}}
  - {name: mart.exact, pipeline: marts, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: exact}], run: {command: ["./load.sh"]}}
  - {name: mart.encapsulate, pipeline: marts, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: encapsulate}], run: {command: ["./load.sh"]}}
  - {name: mart.through, pipeline: marts, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: through}], run: {command: ["./load.sh"]}}
  - {name: mart.whole, pipeline: marts, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     upstream: [{name: raw.orders, contract: whole}], run: {command: ["./load.sh"]}}
`

const levelsScript = `#!/bin/sh
if [ "$BOLLHAV_MODEL" = raw.orders ] && [ "$BOLLHAV_SINCE" = "2026-01-01T03:00:00Z" ]; then
  echo "source returned 503" >&2
  exit 1
fi
echo rows_written=1
`

// TestContractLevelsEndToEnd runs every contract level through a real
// run over two days in which one upstream hour failed. Worked by hand:
//   - EXISTS only needs raw.orders registered: both days apply.
//   - EXACT (hourly on hourly) needs the same hour: 47 apply, 03:00 blocks.
//   - ENCAPSULATE needs the day's 24 hours: day 1 blocks, day 2 applies.
//   - THROUGH needs every hour from the start through the day's end: both
//     days contain or follow the failed hour, so both block.
//   - WHOLE needs the upstream's whole contract range: both block.
func TestContractLevelsEndToEnd(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, levelsSpec)
		if err := os.WriteFile(filepath.Join(e.opts.SpecDir, "load.sh"), []byte(levelsScript), 0o755); err != nil {
			t.Fatal(err)
		}
		w := days(0, 2)
		if _, err := e.Run(t.Context(), RunRequest{Window: &w}, e.Executor(), nil); err != nil {
			t.Fatal(err)
		}
		want := map[string][2]int{ // applied, blocked
			"raw.orders":       {47, 0},
			"mart.exists":      {2, 0},
			"mart.exact":       {47, 1},
			"mart.encapsulate": {1, 1},
			"mart.through":     {0, 2},
			"mart.whole":       {0, 2},
		}
		for model, ab := range want {
			st := statuses(t, s, model)
			if st[state.Applied] != ab[0] || st[state.Blocked] != ab[1] {
				t.Errorf("%s: %v, want %d applied and %d blocked", model, st, ab[0], ab[1])
			}
		}
		if st := statuses(t, s, "raw.orders"); st[state.Failed] != 1 {
			t.Errorf("raw.orders %v, want the chosen hour failed", st)
		}
		// The blocked EXACT unit is exactly the failed hour; ENCAPSULATE's is day 1.
		blockedWindow := func(model string) state.Window {
			var w state.Window
			_ = s.ScanUnits(t.Context(), state.UnitQuery{Model: model, Statuses: []state.UnitStatus{state.Blocked}},
				func(u state.Unit) error { w = u.Window; return nil })
			return w
		}
		if got := blockedWindow("mart.exact"); !got.Equal(hours(3, 4)) {
			t.Errorf("mart.exact blocked %s, want 03:00-04:00", got)
		}
		if got := blockedWindow("mart.encapsulate"); !got.Equal(days(0, 1)) {
			t.Errorf("mart.encapsulate blocked %s, want day 1", got)
		}
	})
}
