package tick

import (
	"context"
	"testing"
	"time"
)

// A step that asks to stop is not called again, and Every returns.
func TestEveryStopsWhenTheStepSaysSo(t *testing.T) {
	calls := 0
	Every(context.Background(), time.Millisecond, func() bool {
		calls++
		return calls < 3
	})
	if calls != 3 {
		t.Fatalf("step called %d times, want 3: the third said stop", calls)
	}
}

// An ended context ends the loop without another step, even when the step
// would go on forever.
func TestEveryReturnsWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	calls := 0
	go func() {
		Every(ctx, time.Millisecond, func() bool {
			calls++
			if calls == 2 {
				cancel()
			}
			return true
		})
		done <- calls
	}()
	if got := <-done; got != 2 {
		t.Fatalf("step called %d times, want 2: the context ended in the second", got)
	}
}
