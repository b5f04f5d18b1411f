package cli

import (
	"math"
	"runtime/debug"
	"testing"
)

// The UI bounds its heap softly unless GOMEMLIMIT says otherwise: an
// operator's own limit is never overridden.
func TestUIMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "")
	boundUIMemory()
	if got := debug.SetMemoryLimit(-1); got != uiMemoryLimit {
		t.Errorf("limit %d without GOMEMLIMIT, want %d", got, uiMemoryLimit)
	}

	debug.SetMemoryLimit(1 << 30)
	t.Setenv("GOMEMLIMIT", "1GiB")
	boundUIMemory()
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("limit %d with GOMEMLIMIT=1GiB, want the operator's 1 GiB kept", got)
	}
}
