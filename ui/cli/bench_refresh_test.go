package cli

import (
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/bollhav/bollhav/engine"
	uimetrics "github.com/bollhav/bollhav/ui/metrics"
)

// metricsRefresh times what `serve --metrics` does every minute: a full
// refresh of its snapshot (every model's counts, the blocked counts and the
// incidents report) over e, in this process. heapMB is the most Go heap
// the refresh held above what was live before it, sampled every 5 ms: the
// benchmark's own process holds the fixture's engine, so its resident set
// would not say what a serve process needs; this is what the refresh adds
// to one.
func metricsRefresh(ctx context.Context, e *engine.Engine) (took time.Duration, heapMB float64, err error) {
	mon, err := uimetrics.NewMonitor(ctx, uimetrics.Config{Engine: e})
	if err != nil {
		return 0, 0, err
	}
	runtime.GC()
	base := heapBytes()
	var (
		peak uint64
		wg   sync.WaitGroup
	)
	done := make(chan struct{})
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			peak = max(peak, heapBytes())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	start := time.Now()
	err = mon.Refresh(ctx)
	took = time.Since(start)
	close(done)
	wg.Wait()
	return took, float64(peak-min(peak, base)) / (1 << 20), err
}

// heapBytes is the Go heap's live and not yet swept objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
