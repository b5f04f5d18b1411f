package engine

import (
	"errors"
	"fmt"
)

// MaxWorkers is the most units one process runs at once: `run --workers`,
// a retry's workers and `bollhav worker --workers`. Each worker is a
// goroutine that runs a unit (a command, a SQL transaction) and the queue
// in front of them holds a unit per worker, so an absurd count — a typo
// of 10,000,000 — once took tens of gigabytes before a single unit ran
// and left the process deaf to SIGTERM while it swapped. More than this
// many at once belongs to several `bollhav worker` processes sharing the
// store.
const MaxWorkers = 1024

// ErrWorkers marks a worker count the engine refuses (bad input: the CLI
// exits 2 on it).
var ErrWorkers = errors.New("bad worker count")

// CheckWorkers refuses a worker count the engine will not start (Plan,
// Run, Retry and Work call it; a front end may call it first): below
// zero (zero means one) or above MaxWorkers, before anything is recorded.
// The error names the ceiling.
func CheckWorkers(n int) error {
	if n < 0 || n > MaxWorkers {
		return fmt.Errorf("%w: --workers %d: a process runs 1 to %d units at once; for more, start several `bollhav worker` processes on the same store", ErrWorkers, n, MaxWorkers)
	}
	return nil
}
