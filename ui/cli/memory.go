package cli

import (
	"os"
	"runtime/debug"
)

// batchMemoryLimit is the soft memory limit of apply, plan and run while
// they run (command.memoryLimit), unless GOMEMLIMIT sets another. What they
// hold is bounded by the spec (at most spec.MaxSize of it): at 60,000
// models, the largest spec that fits, about 100–160 MB is live at once —
// the decoded spec, the plan or the registration records, a run's task
// graph and the goroutines of its tasks in flight (docs/BENCHMARKS.md,
// "Memory of a 60,000-model spec"). Go's default lets the heap grow to
// twice what was live before collecting, which took a run of that spec to
// about 400 MB of RSS; under the limit the collector runs sooner instead
// (~245 MB). 200 MiB, not the UI's 256: the goal is 300 MB of RSS, and
// SQLite's page caches, the C heap of its driver and the binary are
// outside what the Go runtime counts. It is soft: a process that needs
// more gets more, at the cost of collecting more often.
const batchMemoryLimit = 200 << 20

// boundMemory sets limit as the process's soft memory limit, unless
// GOMEMLIMIT sets one (an operator's own limit is never overridden), and
// returns what puts the previous limit back: a command in a test process
// leaves it as it found it.
func boundMemory(limit int64) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	was := debug.SetMemoryLimit(limit)
	return func() { debug.SetMemoryLimit(was) }
}

// triageGCPercent is the collector's pace (GOGC) of the one-shot reads an
// on-call engineer runs first — status, units, blocked, incidents, why —
// while they run, unless GOGC sets another; they also run under
// batchMemoryLimit. Their garbage is the spec's parse (some 200 times its
// bytes) and their reads, and they end in seconds. At Go's default pace
// (100) the collector ran every time the heap doubled, a fifth of
// `incidents`' CPU at 10M units; at 400 it runs when the heap nears the
// soft limit instead, which also bounds the peak. At 10M units
// (docs/BENCHMARKS.md): `blocked`'s first line 1.74-1.80 s -> 1.46-1.59
// s, peak RSS 273-283 -> 232 MB; `incidents` 2.2-2.3 s -> 1.9-2.0 s.
// A read whose live heap passes the limit collects more often, as the
// batch commands do.
const triageGCPercent = 400

// boundGC sets percent as the collector's pace, unless GOGC sets one (an
// operator's own is never overridden), and returns what puts the previous
// pace back.
func boundGC(percent int) (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	was := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(was) }
}

// triageRead marks c one of the one-shot reads of triage: it runs under
// batchMemoryLimit and triageGCPercent.
func triageRead(c *command) *command {
	c.memoryLimit, c.gcPercent = batchMemoryLimit, triageGCPercent
	return c
}
