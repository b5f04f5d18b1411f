package engine

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// heldExec runs no unit until released, counting the units it holds.
type heldExec struct {
	started atomic.Int32
	release chan struct{}
}

func (h *heldExec) Execute(ctx context.Context, u executor.UnitRun) (executor.Result, error) {
	h.started.Add(1)
	select {
	case <-h.release:
	case <-ctx.Done():
		return executor.Result{}, ctx.Err()
	}
	return executor.Result{}, nil
}

// A run over a wave of 40 models on PostgreSQL — every task running at
// once — listens for other workers' changes on one connection, not one a
// task: 40 LISTEN connections were 40 of the server's 100.
func TestRunListensOnceForAWholeWave(t *testing.T) {
	s := enginetest.Open(t, enginetest.Postgres)
	schema := s.(interface{ Schema() string }).Schema()
	var b strings.Builder
	b.WriteString("models:\n")
	const models = 40
	for i := range models {
		fmt.Fprintf(&b, "  - name: raw.m%02d\n    pipeline: p\n    chunking: {interval: 1h, start: \"2026-01-01T00:00:00Z\"}\n    run: {command: [\"true\"]}\n", i)
	}
	e := runEngine(t, s, b.String())
	exec := &heldExec{release: make(chan struct{})}
	w := hours(0, 1)
	done := make(chan error, 1)
	go func() {
		_, err := e.Run(t.Context(), RunRequest{Window: &w}, exec, nil)
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second) // a bound on a hang, not a speed
	for exec.started.Load() < models {
		if time.Now().After(deadline) {
			close(exec.release)
			t.Fatalf("only %d of %d tasks started", exec.started.Load(), models)
		}
		time.Sleep(10 * time.Millisecond)
	}
	conn, err := pgx.Connect(t.Context(), pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var listening int
	err = conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND query LIKE '%' || $1 || '%'`, schema).Scan(&listening)
	close(exec.release)
	if err != nil {
		t.Fatal(err)
	}
	if listening != 1 {
		t.Errorf("%d LISTEN connections on the schema's channel while %d tasks run, want 1 for the run", listening, models)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := statuses(t, s, "raw.m00"); c[state.Applied] != 1 {
		t.Errorf("raw.m00 %v, want its hour applied", c)
	}
}
