package state

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeFeed is a Store whose change feed is a slice; only Changes and Wake
// are implemented (the embedded nil Store panics on anything else). fail
// makes the next reads fail; wakes are sent by the test.
type fakeFeed struct {
	Store
	mu      sync.Mutex
	changes []Change
	fail    int
	reads   int
	wake    chan struct{}
}

func (f *fakeFeed) add(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.changes = append(f.changes, Change{Seq: int64(len(f.changes) + 1), Model: "a", Count: 1})
	}
}

func (f *fakeFeed) Changes(_ context.Context, after int64, limit int) ([]Change, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.fail > 0 {
		f.fail--
		return nil, errors.New("connection refused")
	}
	var out []Change
	for _, c := range f.changes {
		if c.Seq > after && (limit <= 0 || len(out) < limit) {
			out = append(out, c)
		}
	}
	return out, nil
}

func (f *fakeFeed) Wake(ctx context.Context) (<-chan struct{}, error) {
	if f.wake == nil {
		return nil, errors.New("no wake-ups here")
	}
	return f.wake, nil
}

func (f *fakeFeed) readCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

// receive reads n changes from ch and returns their seqs.
func receive(t *testing.T, ch <-chan Change, n int) []int64 {
	t.Helper()
	var seqs []int64
	for len(seqs) < n {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatalf("feed closed after %v", seqs)
			}
			seqs = append(seqs, c.Seq)
		case <-time.After(5 * time.Second):
			t.Fatalf("only %v within 5s, want %d changes", seqs, n)
		}
	}
	return seqs
}

func eqSeqs(t *testing.T, got []int64, want ...int64) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("seqs %v, want %v", got, want)
	}
}

// TestFollowResumesInBatches: a follower resuming after seq 2 with a batch
// of 2 reads 3..7 in order, across several reads.
func TestFollowResumesInBatches(t *testing.T) {
	f := &fakeFeed{wake: make(chan struct{})}
	f.add(7)
	ch := Follower{Store: f, After: 2, Batch: 2, Poll: time.Hour}.Follow(t.Context())
	eqSeqs(t, receive(t, ch, 5), 3, 4, 5, 6, 7)
}

// TestFollowWakes: with a poll interval of an hour, a wake-up alone brings
// a new change.
func TestFollowWakes(t *testing.T) {
	f := &fakeFeed{wake: make(chan struct{}, 1)}
	ch := Follow(t.Context(), f, 0, time.Hour)
	time.Sleep(50 * time.Millisecond) // the first read finds nothing
	f.add(1)
	f.wake <- struct{}{}
	eqSeqs(t, receive(t, ch, 1), 1)
}

// TestFollowPollsWithoutWakeups: a store whose wake-ups never come (or were
// lost) still has its changes delivered, by the poll.
func TestFollowPollsWithoutWakeups(t *testing.T) {
	f := &fakeFeed{} // Wake fails
	ch := Follow(t.Context(), f, 0, 20*time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	f.add(2)
	eqSeqs(t, receive(t, ch, 2), 1, 2)
}

// TestFollowBacksOffAndRecovers: failed reads are reported, retried with
// growing pauses rather than in a tight loop, and cleared on success; no
// change is lost or repeated across the outage.
func TestFollowBacksOffAndRecovers(t *testing.T) {
	f := &fakeFeed{wake: make(chan struct{}, 1), fail: 4}
	f.add(3)
	var mu sync.Mutex
	var reported []string
	fl := Follower{Store: f, Poll: time.Millisecond, OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			reported = append(reported, "recovered")
		} else {
			reported = append(reported, err.Error())
		}
	}}
	start := time.Now()
	ch := fl.Follow(t.Context())
	eqSeqs(t, receive(t, ch, 3), 1, 2, 3)
	// 100 + 200 + 400 + 800 ms of backoff before the fifth read succeeds.
	if elapsed := time.Since(start); elapsed < 1400*time.Millisecond {
		t.Errorf("recovered after %v, want the backoff to have waited about 1.5s", elapsed)
	}
	if reads := f.readCount(); reads != 5 {
		t.Errorf("%d reads, want 4 failures and 1 success (no tight retry loop)", reads)
	}
	// The recovery is reported after the successful read has delivered its
	// changes, so it may trail the last one received: wait for it.
	want := []string{"connection refused", "connection refused", "connection refused", "connection refused", "recovered"}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(reported)
		mu.Unlock()
		if n >= len(want) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(reported, want) {
		t.Fatalf("OnError heard %q, want %q", reported, want)
	}
}

// TestFollowClosesWithContext: the stream ends when its context does.
func TestFollowClosesWithContext(t *testing.T) {
	f := &fakeFeed{wake: make(chan struct{})}
	f.add(1)
	ctx, cancel := context.WithCancel(t.Context())
	ch := Follow(ctx, f, 0, time.Hour)
	eqSeqs(t, receive(t, ch, 1), 1)
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("a change after the context ended")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the feed did not close within 5s of its context ending")
	}
}
