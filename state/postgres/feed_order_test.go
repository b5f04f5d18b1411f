package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bollhav/bollhav/state"
)

// openRecord begins a transaction and records one change of model in it,
// as the last statement of a write does, leaving it open: its seq is taken
// and not yet committed.
func openRecord(t *testing.T, s *Store, model string, h int) (pgx.Tx, int64) {
	t.Helper()
	tx, err := s.pool.BeginTx(t.Context(), s.begin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	seq, err := s.record(t.Context(), tx, []change{{model: model, window: state.MustWindow(at(h), at(h+1)), to: state.Pending, count: 1, at: at(0)}})
	if err != nil {
		t.Fatalf("record %s: %v", model, err)
	}
	return tx, seq
}

// waitForSettling returns once some session waits for the feed's lock in
// exclusive mode — a reader settling — or fails t when got delivers a read
// first that moved past the seq still in flight. The minute only bounds a
// broken build's hang.
func waitForSettling(t *testing.T, s *Store, inFlight int64, got <-chan readResult) {
	t.Helper()
	key := uint64(s.feedKey())
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case r := <-got:
			t.Fatalf("a read returned %v (err %v) while seq %d was still in flight: a reader resuming from it skips %d",
				seqs(r.cs), r.err, inFlight, inFlight)
		default:
		}
		var waiting bool
		err := s.pool.QueryRow(t.Context(), `SELECT EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory'
			AND NOT granted AND mode = 'ExclusiveLock' AND classid = $1 AND objid = $2 AND objsubid = 1)`,
			uint32(key>>32), uint32(key)).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no reader ever waited for the transaction in flight")
}

type readResult struct {
	cs  []state.Change
	err error
}

func seqs(cs []state.Change) []int64 {
	out := []int64{}
	for _, c := range cs {
		out = append(out, c.Seq)
	}
	return out
}

// readAsync runs Changes(after, 0) and delivers its result.
func readAsync(s *Store, ctx context.Context, after int64) <-chan readResult {
	got := make(chan readResult, 1)
	go func() {
		cs, err := s.Changes(ctx, after, 0)
		got <- readResult{cs, err}
	}()
	return got
}

// TestFeedNeverSkipsASmallerSeqCommittedLater is the race commit-order seqs
// used to rule out with a lock around every commit: transaction A takes
// seq a, transaction B takes b > a and commits first, and a reader reads
// in between. Writers no longer wait on each other (B commits while A is
// open), so the reader must not return b before a is final: it waits for
// A, and then returns a and b in seq order — or only b when A rolls back.
func TestFeedNeverSkipsASmallerSeqCommittedLater(t *testing.T) {
	for _, commitA := range []bool{true, false} {
		t.Run(fmt.Sprintf("A commits=%v", commitA), func(t *testing.T) {
			s, _ := openTest(t, Options{})
			txA, a := openRecord(t, s, "a", 0)
			txB, b := openRecord(t, s, "b", 1)
			if b <= a {
				t.Fatalf("B took seq %d, not after A's %d", b, a)
			}
			if err := txB.Commit(t.Context()); err != nil {
				t.Fatalf("B cannot commit while A is open: %v", err)
			}
			got := readAsync(s, t.Context(), 0)
			waitForSettling(t, s, a, got)
			want := []int64{a, b}
			if commitA {
				if err := txA.Commit(t.Context()); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := txA.Rollback(t.Context()); err != nil {
					t.Fatal(err)
				}
				want = []int64{b}
			}
			r := <-got
			if r.err != nil {
				t.Fatal(r.err)
			}
			if !slices.Equal(seqs(r.cs), want) {
				t.Errorf("read while A was open: seqs %v, want %v", seqs(r.cs), want)
			}
			// A reader starting now (A is final) reads the same, without waiting.
			again, err := s.Changes(t.Context(), 0, 0)
			if err != nil || !slices.Equal(seqs(again), want) {
				t.Errorf("read after: seqs %v (%v), want %v", seqs(again), err, want)
			}
			latest, err := s.LatestSeq(t.Context())
			if err != nil || latest != b {
				t.Errorf("LatestSeq: %d (%v), want %d", latest, err, b)
			}
		})
	}
}

// TestFeedReadUpToASeqInFlight: rows right after the reader's seq, with
// none missing, come back at once even while a later seq is in flight —
// only a gap below a row the reader can see makes it wait — and a read
// limited to rows before the gap never waits either.
func TestFeedReadUpToASeqInFlight(t *testing.T) {
	s, _ := openTest(t, Options{})
	tx1, first := openRecord(t, s, "a", 0)
	if err := tx1.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	open, inFlight := openRecord(t, s, "b", 1)
	defer open.Rollback(context.Background())
	cs, err := s.Changes(t.Context(), 0, 0)
	if err != nil || !slices.Equal(seqs(cs), []int64{first}) {
		t.Fatalf("with seq %d in flight and nothing after it: %v (%v), want [%d]", inFlight, seqs(cs), err, first)
	}
	tx3, third := openRecord(t, s, "c", 2)
	if err := tx3.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	cs, err = s.Changes(t.Context(), 0, 1)
	if err != nil || !slices.Equal(seqs(cs), []int64{first}) {
		t.Fatalf("limit 1 with seq %d in flight: %v (%v), want [%d]", inFlight, seqs(cs), err, first)
	}
	got := readAsync(s, t.Context(), first)
	waitForSettling(t, s, inFlight, got)
	if err := open.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || !slices.Equal(seqs(r.cs), []int64{inFlight, third}) {
		t.Errorf("after %d: %v (%v), want [%d %d]", first, seqs(r.cs), r.err, inFlight, third)
	}
}

// TestConcurrentAppliedCountsNeverDeadlock: commits that move units of the
// same models into and out of applied, in batches naming the models in
// different orders, update the same applied_counts rows at once — nothing
// serialises them but the order record locks those rows in. None may fail
// with a deadlock, and the counts must add up.
func TestConcurrentAppliedCountsNeverDeadlock(t *testing.T) {
	s, _ := openTest(t, Options{})
	models := []string{"m0", "m1", "m2", "m3"}
	registerFlex(t, s, models...)
	const writers, rounds, perModel = 4, 41, 2
	for _, m := range models {
		var ws []state.Window
		for h := range writers * perModel {
			ws = append(ws, state.MustWindow(at(h), at(h+1)))
		}
		if _, err := s.Prefill(t.Context(), state.PrefillRequest{Model: m, Windows: ws, Now: at(0)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 21))
			// Each writer owns perModel windows of every model and moves
			// them all between applied and pending in one transaction.
			var mine []state.Window
			for k := range perModel {
				h := w*perModel + k
				mine = append(mine, state.MustWindow(at(h), at(h+1)))
			}
			for r := range rounds {
				from, to := state.Pending, state.Applied
				if r%2 == 1 {
					from, to = to, from
				}
				order := slices.Clone(models)
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				err := s.write(t.Context(), func(tx pgx.Tx) ([]change, error) {
					var chs []change
					for _, m := range order {
						for _, win := range mine {
							tag, err := tx.Exec(t.Context(), s.sql(`UPDATE {schema}.units SET status = $1, applied_at = CASE WHEN $1 = 'applied' THEN now() END
								WHERE env = '' AND model = $2 AND since = $3 AND status = $4`), string(to), m, win.Since, string(from))
							if err != nil {
								return nil, err
							}
							if tag.RowsAffected() != 1 {
								return nil, fmt.Errorf("%s %s: %d rows %s->%s", m, win, tag.RowsAffected(), from, to)
							}
							d := 1
							if to != state.Applied {
								d = -1
							}
							chs = append(chs, change{model: m, window: win, from: from, to: to, count: 1, at: at(0),
								applied: []appliedDelta{{n: d}}})
						}
					}
					return chs, nil
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d round %d: %w", w, r, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// An odd number of rounds leaves every writer's units applied.
	for _, m := range models {
		var n int64
		if err := s.pool.QueryRow(t.Context(), s.sql(`SELECT coalesce(sum(units), 0) FROM {schema}.applied_counts WHERE model = $1`), m).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != writers*perModel {
			t.Errorf("%s: applied_counts says %d, want %d", m, n, writers*perModel)
		}
	}
	// The kept summary too: the writers' windows touch one another, so
	// each commit rebuilt islands next to another writer's, under the
	// model's summary lock; without it a rebuild from a snapshot missing
	// the other's units leaves holes or doubled islands.
	sums, err := s.Summaries(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	want := state.NewIntervalSet(state.MustWindow(at(0), at(writers*perModel)))
	for _, sum := range sums {
		if got := sum.Counts[state.Applied]; got != writers*perModel || sum.Counts[state.Pending] != 0 {
			t.Errorf("%s: summary counts %v, want %d applied", sum.Model, sum.Counts, writers*perModel)
		}
		if !reflect.DeepEqual(sum.Coverage.Windows(), want.Windows()) {
			t.Errorf("%s: summary coverage %v, want %v", sum.Model, sum.Coverage.Windows(), want.Windows())
		}
	}
	var islands int
	if err := s.pool.QueryRow(t.Context(), s.sql(`SELECT count(*) FROM {schema}.coverage`)).Scan(&islands); err != nil {
		t.Fatal(err)
	}
	if islands != len(models) {
		t.Errorf("%d coverage islands kept, want one a model (%d)", islands, len(models))
	}
}
