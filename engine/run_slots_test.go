package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/state"
)

// heldCounter is an executor that, at each unit, counts the units the
// store holds running — claimed, by any task, ahead of its workers or not
// — and the run's tasks in progress, and keeps the most of each it saw.
type heldCounter struct {
	s          state.Store
	mu         sync.Mutex
	most, busy int
	ran        int
}

func (h *heldCounter) Execute(ctx context.Context, u executor.UnitRun) (executor.Result, error) {
	counts, err := h.s.StatusCounts(ctx, "")
	if err != nil {
		return executor.Result{}, err
	}
	running := 0
	for _, c := range counts {
		running += c.Counts[state.Running]
	}
	log, err := h.s.TaskLog(ctx, u.RunID)
	if err != nil {
		return executor.Result{}, err
	}
	busy := 0
	for _, l := range log {
		if l.Status == "IN_PROGRESS" {
			busy++
		}
	}
	time.Sleep(time.Millisecond) // long enough for the other tasks to claim
	h.mu.Lock()
	defer h.mu.Unlock()
	h.most, h.busy, h.ran = max(h.most, running), max(h.busy, busy), h.ran+1
	one := int64(1)
	return executor.Result{RowsWritten: &one}, nil
}

// A run holds no more units at once than a process runs (the ceiling,
// lowered here to 4), however many of its tasks are ready and however far
// they would claim ahead: six independent tasks of twelve fast units each
// start four at a time (one worker each), and share the four units between
// them. Starting every ready task, each claiming ahead, a run of a
// 60,000-model spec held 11,000 units and 16,000 goroutines (issue 35).
func TestARunHoldsNoMoreUnitsThanTheCeiling(t *testing.T) {
	was := unitsAtOnce
	unitsAtOnce = 4
	t.Cleanup(func() { unitsAtOnce = was })
	var yaml strings.Builder
	yaml.WriteString("models:\n")
	for i := range 6 {
		fmt.Fprintf(&yaml, "  - name: raw.m%d\n    chunking: {interval: 1h, start: \"2026-01-01T00:00:00Z\"}\n    run: {command: [\"true\"]}\n", i)
	}
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := runEngine(t, s, yaml.String())
		h := &heldCounter{s: s}
		w := &state.Window{Since: t0, Until: t0.Add(12 * time.Hour)}
		res, err := e.Run(t.Context(), RunRequest{Window: w}, h, nil)
		if err != nil || res.Failed() {
			t.Fatalf("run: %v %+v", err, res)
		}
		if h.ran != 72 {
			t.Fatalf("ran %d units, want 72", h.ran)
		}
		if h.most > 4 {
			t.Errorf("the run held %d units at once, over the ceiling of 4", h.most)
		}
		if h.busy > 4 {
			t.Errorf("%d tasks were in progress at once; with one worker each, at most 4 fit under the ceiling", h.busy)
		}
		if h.most < 2 {
			t.Errorf("the run held at most %d unit at once: its tasks never ran side by side, so the bound was not tried", h.most)
		}
	})
}
