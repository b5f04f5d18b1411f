package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/postgres/pgtest"
	"github.com/bollhav/bollhav/state/storetest"
)

// listenerPIDs are the server processes LISTENing on s's channel.
func listenerPIDs(t *testing.T, dsn string, s *Store) []int32 {
	t.Helper()
	var pids []int32
	err := pgtest.QueryRow(dsn, `SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity WHERE query = $1`,
		[]any{"LISTEN " + quoteIdent(s.channel)}, &pids)
	if err != nil {
		t.Fatal(err)
	}
	return pids
}

// quiet reports whether ch stays silent for a moment.
func quiet(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return false
	case <-time.After(300 * time.Millisecond):
		return true
	}
}

// TestWakeSurvivesLostConnection: the server ends the LISTEN connection (a
// restart, a failover, an administrator); the reader is woken once the
// listener is back, so it re-reads whatever changed while it was away, and
// later changes wake it as before.
func TestWakeSurvivesLostConnection(t *testing.T) {
	s, dsn := openTest(t, Options{})
	registerFlex(t, s, "f")
	ch, err := s.Wake(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	storetest.WaitWake(t, ch, "once listening")
	if !quiet(ch) {
		t.Fatal("woken without a change")
	}
	before := listenerPIDs(t, dsn, s)
	if len(before) != 1 {
		t.Fatalf("%d connections listen on %s, want 1", len(before), s.channel)
	}

	var ended bool
	if err := pgtest.QueryRow(dsn, `SELECT pg_terminate_backend($1)`, []any{before[0]}, &ended); err != nil || !ended {
		t.Fatalf("pg_terminate_backend = %v, %v", ended, err)
	}
	// Nothing changed, yet the reader is woken: the listener cannot know
	// what it missed while it was away, so the reader re-reads.
	storetest.WaitWake(t, ch, "after the listener reconnected")
	after := listenerPIDs(t, dsn, s)
	if len(after) != 1 || after[0] == before[0] {
		t.Fatalf("listeners after the reconnect: %v (before: %v); want one new one", after, before)
	}
	if !quiet(ch) {
		t.Fatal("woken again without a change")
	}

	if _, err := s.Prefill(t.Context(), state.PrefillRequest{Model: "f", Windows: []state.Window{state.MustWindow(at(1), at(2))}, Now: at(0)}); err != nil {
		t.Fatal(err)
	}
	storetest.WaitWake(t, ch, "after a change on the new connection")
}

// TestWakeEndsWithTheStore: closing the store closes every wake channel and
// its connection, so nothing outlives it.
func TestWakeEndsWithTheStore(t *testing.T) {
	s, dsn := openTest(t, Options{})
	var chs []<-chan struct{}
	for range 2 {
		ch, err := s.Wake(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		chs = append(chs, ch)
	}
	if n := len(listenerPIDs(t, dsn, s)); n != 2 {
		t.Fatalf("%d listeners, want 2", n)
	}
	s.Close()
	for i, ch := range chs {
		deadline := time.After(5 * time.Second)
	drain:
		for {
			select {
			case _, ok := <-ch:
				if !ok {
					break drain
				}
			case <-deadline:
				t.Fatalf("wake channel %d still open 5s after Close", i)
			}
		}
	}
	// The server notices a closed connection a moment later.
	for wait := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		pids := listenerPIDs(t, dsn, s)
		if len(pids) == 0 {
			break
		}
		if time.Now().After(wait) {
			t.Fatalf("listeners left 5s after Close: %v", pids)
		}
	}
	if _, err := s.Wake(context.Background()); err == nil {
		t.Error("Wake on a closed store succeeded")
	}
}
