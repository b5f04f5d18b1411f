package tui

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A load of a view the user left is cancelled: going back from a view
// whose load is still running ends that load (at ten million units the
// Blocked queue's takes 40 s and 840 MB), while the load of the view shown
// runs on.
func TestLoadCancelledWhenItsViewLeaves(t *testing.T) {
	w := newWorld(t)
	a, err := newApp(t.Context(), w.e, withDefaults(Options{Theme: "none", View: "pipelines"}), standardRenderers())
	if err != nil {
		t.Fatal(err)
	}
	a.Update(a.startLoad(a.top())()) // the pipelines view loaded
	v := newBlocked(a.common)
	a.Update(pushMsg{view: v})
	if !v.loading {
		t.Fatal("opening the Blocked view started no load")
	}
	// The view's load, held until its context ends: made where the app
	// makes it, run off the loop as the program runs it.
	cmd := loadCmdWithin(a.common, v.id, v.gen, wholeLoadTimeout, func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	})
	ended := make(chan error, 1)
	go func() {
		_, err := cmd().(loaded[int]).answer()
		ended <- err
	}()
	select {
	case err := <-ended:
		t.Fatalf("the load ended before its view was left: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	a.Update(keyPress("esc"))
	if a.top() == view(v) {
		t.Fatal("esc did not leave the Blocked view")
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the left view's load ended with %v, want it cancelled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the load of the view the user left still runs")
	}
	if err := a.loadContext(a.top().base().id).Err(); err != nil {
		t.Fatalf("the shown view's load context ended too: %v", err)
	}
}

// A view that comes back with - loads again, and the answer of the load
// it had out when it left — cancelled, arriving late — is dropped rather
// than shown as an error.
func TestLateCancelledAnswerDroppedAfterComingBack(t *testing.T) {
	w := newWorld(t)
	a, err := newApp(t.Context(), w.e, withDefaults(Options{Theme: "none", View: "pipelines"}), standardRenderers())
	if err != nil {
		t.Fatal(err)
	}
	a.Update(a.startLoad(a.top())())
	low := newBlocked(a.common)
	a.Update(pushMsg{view: low})
	lowGen := low.gen
	lowDone := low.loading
	top := newRuns(a.common)
	a.Update(pushMsg{view: top})
	if !lowDone {
		t.Fatal("the Blocked view started no load")
	}
	a.Update(keyPress("1")) // to the pipelines: both leave the stack
	a.Update(keyPress("-")) // and back
	if a.top() != view(top) {
		t.Fatalf("- did not bring the stack back: top is %s", a.top().kind())
	}
	// The Blocked view's first load answers now, cancelled.
	a.Update(loaded[blockedData]{view: low.id, gen: lowGen, err: context.Canceled})
	if low.err != nil {
		t.Fatalf("a late answer to a load from before the jump was taken: %v", low.err)
	}
}
