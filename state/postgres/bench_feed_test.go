package postgres_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
)

// feedCommitsEnv overrides how many transitions each writer of
// BenchmarkFeedContention commits (default 300).
const feedCommitsEnv = "BOLLHAV_BENCH_FEED_COMMITS"

// BenchmarkFeedContention is issue 21's contention figure for the change
// feed: n writers, each a store handle of its own (as n worker processes),
// commit small transitions as fast as they can — one unit of a model of
// their own toggled between pending and blocked, one feed row per commit,
// no applied counts. Nothing but the store's own ordering of the feed can
// make them wait on each other, so commits/s across writer counts shows
// whether commits are serialised (flat) or overlap (rising with writers
// until the server's fsyncs or the cores are the limit).
func BenchmarkFeedContention(b *testing.B) {
	perWriter := 300
	if v := os.Getenv(feedCommitsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: want a positive commit count", feedCommitsEnv, v)
		}
		perWriter = n
	}
	dsn := pgtest.DSN(b)
	for _, run := range []struct {
		writers  int
		follower bool
	}{{1, false}, {4, false}, {8, false}, {8, true}} {
		name := fmt.Sprintf("writers=%d", run.writers)
		if run.follower {
			name += "/follower"
		}
		b.Run(name, func(b *testing.B) {
			var perSecond float64
			for range b.N {
				perSecond = contend(b, dsn, run.writers, perWriter, run.follower)
			}
			b.ReportMetric(perSecond, "commits/s")
		})
	}
}

// follow reads s's feed after seq as a UI does (state.Follower, woken by
// each commit) until it has seen want changes, and reports a change seen
// twice or out of seq order; a change skipped shows as one never seen.
func follow(ctx context.Context, s state.Store, after int64, want int) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		last, n := after, 0
		for c := range (state.Follower{Store: s, After: after, Poll: time.Second}).Follow(ctx) {
			if c.Seq <= last {
				done <- fmt.Errorf("seq %d after %d", c.Seq, last)
				return
			}
			last, n = c.Seq, n+1
			if n == want {
				done <- nil
				return
			}
		}
		done <- fmt.Errorf("the follower saw %d of %d changes", n, want)
	}()
	return done
}

// contend opens writers handles on a fresh schema, gives each a model with
// one pending unit, and times perWriter status toggles by each at once;
// with follower, a follower on a handle of its own reads the feed meanwhile
// and must see every toggle once, in seq order.
func contend(b *testing.B, dsn string, writers, perWriter int, follower bool) float64 {
	b.StopTimer()
	ctx := b.Context()
	schema := pgtest.Schema(b, dsn)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := state.MustWindow(t0, t0.Add(time.Hour))
	stores := make([]state.Store, writers)
	var recs []state.ModelRecord
	for i := range stores {
		stores[i] = openStore(b, dsn, schema)
		recs = append(recs, state.ModelRecord{Name: fmt.Sprintf("w%d", i), Temporality: "temporal", Flexibility: "fix", Interval: "1h", Start: t0})
	}
	if _, err := stores[0].Register(ctx, "", recs, nil, t0); err != nil {
		b.Fatal(err)
	}
	for _, r := range recs {
		if _, err := stores[0].Prefill(ctx, state.PrefillRequest{Model: r.Name, Windows: []state.Window{w}, Now: t0}); err != nil {
			b.Fatal(err)
		}
	}
	var followed <-chan error
	if follower {
		r := openStore(b, dsn, schema)
		after, err := state.LatestSeq(ctx, r)
		if err != nil {
			b.Fatal(err)
		}
		followed = follow(ctx, r, after, writers*perWriter)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	b.StartTimer()
	started := time.Now()
	for i, s := range stores {
		wg.Go(func() {
			from, to := state.Pending, state.Blocked
			for range perWriter {
				n, err := s.SetStatus(ctx, state.StatusChange{Model: recs[i].Name, Window: w, From: []state.UnitStatus{from}, To: to, Now: t0})
				if err == nil && n != 1 {
					err = fmt.Errorf("%s: %d units moved %s->%s, want 1", recs[i].Name, n, from, to)
				}
				if err != nil {
					errs <- err
					return
				}
				from, to = to, from
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(started)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	if followed != nil {
		select {
		case err := <-followed:
			if err != nil {
				b.Fatal(err)
			}
		case <-time.After(time.Minute): // a bound on a hang, not a speed
			b.Fatal("the follower did not see every change within a minute of the last commit")
		}
	}
	return float64(writers*perWriter) / elapsed.Seconds()
}
