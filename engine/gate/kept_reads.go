package gate

import (
	"sync"
	"sync/atomic"
)

// keptReads keeps what an incidents trace read whole, by key, up to a
// bound on the items kept in all: the trace answers hundreds of windowed
// questions about a handful of models (1,215 reads of the applied rows of
// 22 upstreams for 500 traced units at 1M units, 1,135 of 9 at 10M, and
// as many reads of outstanding units), so it reads each model once and
// filters in memory. Only a report keeps reads, never a run, whose gate
// must see rows applied a moment ago. Safe for concurrent use.
type keptReads[T any] struct {
	max  int
	mu   sync.Mutex
	kept map[string][]T
	n    int
}

func newKeptReads[T any](max int) *keptReads[T] {
	return &keptReads[T]{max: max, kept: map[string][]T{}}
}

// get is key's items, read whole by readAll the first time; ok is false
// when they are not kept and the bound is reached: the caller then reads
// the window it wants itself.
func (k *keptReads[T]) get(key string, readAll func() ([]T, error)) (items []T, ok bool, err error) {
	k.mu.Lock()
	items, ok = k.kept[key]
	full := k.n >= k.max
	k.mu.Unlock()
	if ok {
		return items, true, nil
	}
	if full {
		return nil, false, nil
	}
	if items, err = readAll(); err != nil {
		return nil, false, err
	}
	k.mu.Lock()
	k.kept[key], k.n = items, k.n+len(items)
	k.mu.Unlock()
	return items, true, nil
}

// windowedReads turns keptReads off: a test holds the report to the one
// made from windowed reads. Any other test running meanwhile reads
// windowed too, and gets the same answers.
var windowedReads atomic.Bool

// Bounds on what a trace keeps: applied rows are about 100 bytes each,
// units about 200.
const (
	maxKeptApplied     = 1_000_000
	maxKeptOutstanding = 500_000
)
