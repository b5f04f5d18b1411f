package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

func TestMarkAudited(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		n, err := e.Mark(t.Context(), "w.fixed", win("2:00-4:00"), state.Applied)
		if err != nil || n != 2 {
			t.Fatalf("Mark applied = %d, %v; want the failed and the blocked unit", n, err)
		}
		if got := rowsString(snapshot(t, e, "w.fixed")); got != "00:00-01:00:applied 01:00-02:00:applied 02:00-03:00:applied 03:00-04:00:applied 04:00-05:00:pending" {
			t.Errorf("after: %s", got)
		}
		log, err := s.AuditLog(t.Context(), 1)
		if err != nil || len(log) != 1 {
			t.Fatal(log, err)
		}
		a := log[0]
		if a.Action != "mark" || a.Actor != "tester" || a.Outcome != "ok: 2 units" || a.Args["model"] != "w.fixed" ||
			a.Args["status"] != "applied" || a.Args["window"] != win("2:00-4:00").String() {
			t.Errorf("audit entry %+v", a)
		}

		if n, err := e.Mark(t.Context(), "w.fixed", win("0:00-1:00"), state.Pending); err != nil || n != 1 {
			t.Errorf("Mark pending = %d, %v", n, err)
		}
		// A flexible model's window need not align.
		seed(t, e, "w.flex", flexState)
		if n, err := e.Mark(t.Context(), "w.flex", win("3:30-5:00"), state.Applied); err != nil || n != 1 {
			t.Errorf("Mark flexible = %d, %v", n, err)
		}
		// A timeless model's existence row is the zero window.
		seed(t, e, "w.config", map[string]state.UnitStatus{"": state.Failed})
		if n, err := e.Mark(t.Context(), "w.config", state.Window{}, state.Applied); err != nil || n != 1 {
			t.Errorf("Mark timeless = %d, %v", n, err)
		}
	})
}

func TestMarkRefusesBadInput(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		e := fixedWorld(t, s)
		before := storeState(t, e)
		for _, c := range []struct {
			model  string
			w      state.Window
			status state.UnitStatus
			want   string
		}{
			{"w.fixed", win("0:00-1:00"), state.Failed, "applied or pending"},
			{"w.fixed", win("0:00-1:00"), state.Running, "applied or pending"},
			{"w.fixed", win("0:30-1:00"), state.Applied, "not aligned"},
			{"w.fixed", state.Window{Since: hm("2:00"), Until: hm("1:00")}, state.Applied, "empty"},
			{"w.fixd", win("0:00-1:00"), state.Applied, "did you mean w.fixed"},
			{"w.config", win("0:00-1:00"), state.Applied, "timeless"},
		} {
			_, err := e.Mark(t.Context(), c.model, c.w, c.status)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Mark(%s, %s, %s) = %v, want %q", c.model, c.w, c.status, err, c.want)
			}
		}
		if after := storeState(t, e); after != before {
			t.Error("refused marks changed units")
		}
		log, _ := s.AuditLog(t.Context(), 1)
		if len(log) != 1 || log[0].Action != "mark" || !strings.HasPrefix(log[0].Outcome, "error: ") {
			t.Errorf("a refused mark is audited with its error: %+v", log)
		}
	})
}

// TestReadOnlyRefusalsAreAudited: an action refused by a read-only engine
// (a viewer over SSH, --read-only) is recorded with the actor and what was
// asked, and changes nothing else.
func TestReadOnlyRefusalsAreAudited(t *testing.T) {
	s := enginetest.Open(t, enginetest.SQLite)
	e := runEngine(t, s, chainSpec)
	if _, err := e.Run(t.Context(), RunRequest{Window: firstDay()}, &fakeExec{}, nil); err != nil {
		t.Fatal(err)
	}
	before := statuses(t, s, "raw.orders")
	e.opts.ReadOnly, e.opts.Actor = true, "ssh:viewer"
	if _, err := e.Mark(t.Context(), "raw.orders", hours(0, 1), state.Pending); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Mark = %v, want ErrReadOnly", err)
	}
	if _, err := e.Run(t.Context(), RunRequest{Models: []string{"raw.orders"}, Mode: spec.Torch}, &fakeExec{}, nil); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Run = %v, want ErrReadOnly", err)
	}
	log, err := s.AuditLog(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	for _, a := range log {
		if a.Outcome == "refused: read-only" && a.Actor == "ssh:viewer" {
			refused = append(refused, a.Action+" "+a.Args["model"]+a.Args["models"]+" "+a.Args["mode"])
		}
	}
	if len(refused) != 2 || refused[0] != "run raw.orders torch" || refused[1] != "mark raw.orders " {
		t.Errorf("refusals in the audit log (newest first) = %q, want the torch run and the mark", refused)
	}
	if after := statuses(t, s, "raw.orders"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("units changed by refused actions: %v → %v", before, after)
	}
}
