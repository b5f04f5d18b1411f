package cli

import (
	"math"
	"runtime/debug"
	"testing"
)

// apply, plan and run hold their heap under batchMemoryLimit while they
// run, and give the process its limit back after: the limit is set by
// the dispatcher for the commands that say so, and only for them.
func TestBatchCommandsBoundTheirMemory(t *testing.T) {
	for _, name := range []string{"apply", "plan", "run"} {
		if got := commands[name].memoryLimit; got != batchMemoryLimit {
			t.Errorf("%s: memory limit %d, want %d", name, got, batchMemoryLimit)
		}
	}
	if got := commands["watch"].memoryLimit; got != 0 {
		t.Errorf("watch: memory limit %d, want none of its own", got)
	}

	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "")
	restore := boundMemory(batchMemoryLimit)
	if got := debug.SetMemoryLimit(-1); got != batchMemoryLimit {
		t.Errorf("limit %d while bound, want %d", got, batchMemoryLimit)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d after, want the one before put back", got)
	}

	// An operator's own limit is never overridden.
	debug.SetMemoryLimit(1 << 30)
	t.Setenv("GOMEMLIMIT", "1GiB")
	restore = boundMemory(batchMemoryLimit)
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("limit %d with GOMEMLIMIT=1GiB, want the operator's 1 GiB kept", got)
	}
	restore()

	// Through the dispatcher: plan on a small spec leaves the limit as it
	// found it.
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(math.MaxInt64)
	if code, _, errs := run(t, "--spec", writeSpec(t, smallSpec), "--dsn", "sqlite://"+t.TempDir()+"/s.db", "plan"); code != ExitOK {
		t.Fatalf("plan: exit %d\n%s", code, errs)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d after plan, want the one before put back", got)
	}
}

// The one-shot reads of triage collect at triageGCPercent under
// batchMemoryLimit while they run, and give the process its pace back
// after; GOGC set by the operator is never overridden; a long-running
// command (watch, serve, the UI) keeps Go's pace.
func TestTriageReadsCollectRarely(t *testing.T) {
	for _, name := range []string{"status", "units", "blocked", "incidents", "why"} {
		c := commands[name]
		if c.gcPercent != triageGCPercent || c.memoryLimit != batchMemoryLimit {
			t.Errorf("%s: GC percent %d under limit %d, want %d under %d", name, c.gcPercent, c.memoryLimit, triageGCPercent, batchMemoryLimit)
		}
	}
	for _, name := range []string{"watch", "serve", "ui", "run"} {
		if got := commands[name].gcPercent; got != 0 {
			t.Errorf("%s: GC percent %d, want Go's own", name, got)
		}
	}

	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	t.Setenv("GOGC", "")
	restore := boundGC(triageGCPercent)
	if got := debug.SetGCPercent(triageGCPercent); got != triageGCPercent {
		t.Errorf("GC percent %d while bound, want %d", got, triageGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d after, want the 100 before put back", got)
	}

	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	restore = boundGC(triageGCPercent)
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("GC percent %d with GOGC=50, want the operator's 50 kept", got)
	}
	restore()

	// Through the dispatcher: status on a small spec leaves the pace and
	// the limit as it found them.
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetMemoryLimit(limit) })
	if code, _, errs := run(t, "--spec", writeSpec(t, smallSpec), "--dsn", "sqlite://"+t.TempDir()+"/s.db", "status"); code != ExitOK {
		t.Fatalf("status: exit %d\n%s", code, errs)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d after status, want the 100 before put back", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d after status, want the one before put back", got)
	}
}
