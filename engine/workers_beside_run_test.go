package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/sqlite"
)

// besideSpec: two hourly loads and a daily model gated ENCAPSULATE on both
// (issue 32 §6's shape).
const besideSpec = `models:
  - {name: raw.a, pipeline: raw, chunking: {interval: 1h, start: "2025-01-01"}, run: {command: ["true"]}}
  - {name: raw.b, pipeline: raw, chunking: {interval: 1h, start: "2025-01-01"}, run: {command: ["true"]}}
  - {name: core.c, pipeline: core, chunking: {interval: 1d, start: "2025-01-01"}, upstream: [{name: raw.a, contract: encapsulate}, {name: raw.b, contract: encapsulate}], run: {command: ["true"]}}
`

// Workers sharing the store with a run claim whatever is pending, so they
// gate core.c's days while the hours under them are still pending or
// running. Such a day is not blocked — the work it needs is under way — it
// waits and is applied once the hours are: every unit ends applied, none
// blocked, and the run's summary counts every unit of its tasks, whoever
// ran it. Before, all the days ended blocked ("raw.a (ENCAPSULATE):
// missing …") with both upstreams applied, and the run said "0 blocked" and
// counted only the units it ran itself.
func TestWorkersBesideARunWaitForUpstreamWorkUnderWay(t *testing.T) {
	for _, backend := range enginetest.Backends {
		t.Run(backend, func(t *testing.T) {
			open := sharedStoreOpener(t, backend)
			sp := enginetest.Parse(t, besideSpec)
			const days = 10
			ctx, stop := context.WithCancel(t.Context())
			done := make(chan error, 3)
			for range 3 {
				w := New(open(), sp, Options{Actor: "worker"})
				go func() {
					done <- w.Work(ctx, &fakeExec{delay: 2 * time.Millisecond}, WorkOptions{Workers: 3, Poll: 20 * time.Millisecond})
				}()
			}
			s := open()
			run := New(s, sp, Options{Actor: "test"})
			win := state.MustWindow(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 1, 1+days, 0, 0, 0, 0, time.UTC))
			res, err := run.Run(t.Context(), RunRequest{Window: &win, Workers: 3}, &fakeExec{delay: 2 * time.Millisecond}, nil)
			stop()
			for range 3 {
				if werr := <-done; werr != nil {
					t.Errorf("worker: %v", werr)
				}
			}
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			want := map[string]int{"raw.a": 24 * days, "raw.b": 24 * days, "core.c": days}
			for model, n := range want {
				c := enginetest.Statuses(t, s, model)
				if c[state.Applied] != n || c[state.Pending]+c[state.Running]+c[state.Blocked]+c[state.Failed] != 0 {
					t.Errorf("%s units %v, want all %d applied", model, c, n)
				}
			}
			enginetest.EachUnit(t, s, state.UnitQuery{Model: "core.c"}, func(u state.Unit) {
				if u.BlockedReason != "" || u.NotBefore != nil {
					t.Errorf("core.c %s keeps reason %q, not before %v after it was applied", u.Window, u.BlockedReason, u.NotBefore)
				}
			})
			for _, tr := range res.Tasks {
				if tr.Applied != want[tr.Model] || tr.Blocked != 0 || tr.Failed != 0 {
					t.Errorf("run summary for %s: %d applied, %d blocked, %d failed; want %d applied (whoever ran them), 0, 0",
						tr.Model, tr.Applied, tr.Blocked, tr.Failed, want[tr.Model])
				}
			}
		})
	}
}

// sharedStoreOpener returns a function that opens another handle on one
// fresh store of backend each time it is called — as separate processes
// would — each closed when t ends.
func sharedStoreOpener(t *testing.T, backend string) func() state.Store {
	t.Helper()
	var openOne func() (state.Store, error)
	switch backend {
	case enginetest.Postgres:
		dsn := pgtest.DSN(t)
		schema := pgtest.Schema(t, dsn)
		openOne = func() (state.Store, error) { return postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema}) }
	default:
		path := filepath.Join(t.TempDir(), "state.db")
		openOne = func() (state.Store, error) { return sqlite.Open(t.Context(), path) }
	}
	return func() state.Store {
		s, err := openOne()
		if err != nil {
			t.Fatalf("open %s store: %v", backend, err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}
