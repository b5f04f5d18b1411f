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
	if got := commands["status"].memoryLimit; got != 0 {
		t.Errorf("status: memory limit %d, want none of its own", got)
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
