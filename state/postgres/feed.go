package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

// change is one row of the change feed, written in the transaction of the
// transition it records.
type change struct {
	env, model string
	window     state.Window
	from, to   state.UnitStatus
	count      int
	at         time.Time
	runID      int64
	// applied is what the transition does to the model's applied counts
	// per fingerprint; record adds it to applied_counts.
	applied []appliedDelta
	// units, when not nil, is what the transition does to the model's
	// counts by status, where from, to and count do not say it (see
	// unitDeltas); record adds it to status_counts.
	units []statusDelta
	// appliedAt is the applied_at a completion gave its unit; zero for
	// every other change, which makes record recount the model's newest.
	appliedAt time.Time
}

// write runs fn in a transaction and appends the changes it returns to the
// feed in that same transaction, so a transition and its record commit or
// roll back together. After the commit it sends the wake-up hint.
func (s *Store) write(ctx context.Context, fn func(tx pgx.Tx) ([]change, error)) error {
	var seq int64
	err := pgx.BeginTxFunc(ctx, s.pool, s.begin, func(tx pgx.Tx) error {
		chs, err := fn(tx)
		if err != nil {
			return err
		}
		seq, err = s.record(ctx, tx, chs)
		return err
	})
	if err != nil {
		return err
	}
	if seq > 0 {
		s.notify(ctx, seq)
	}
	return nil
}

// record appends chs to the feed, adds their applied deltas to
// applied_counts and keeps the summary (summaryCTEs) in the same
// statement, and returns the last seq. It must be the last statement of
// its transaction.
//
// Seqs come from a sequence, so they are handed out in the order record
// runs, not in commit order: a transaction that took seq 10 may commit after
// one that took seq 11. Before it takes any, record takes the feed's lock in
// shared mode, held until commit; writers never wait on each other for it.
// A reader that sees a seq missing below one it can see takes the lock
// exclusively for an instant (settle), which waits until every transaction
// that took a seq by then has committed or rolled back, so no reader ever
// moves past a seq that is still to come (see Changes).
//
// Then, in the same round trip, it takes the summary locks of the models
// whose applied units chs move (summaryLocks), so the statement that keeps
// their summary sees every other commit of theirs. The feed's shared lock
// comes first: a writer waiting for a model's lock already holds it, and a
// settle waits for both writers instead of queueing between them.
//
// The applied_counts rows are updated in key order (countDeltas), in the
// transaction's last statement: two commits touching the same models' counts
// lock them in the same order and cannot deadlock.
func (s *Store) record(ctx context.Context, tx pgx.Tx, chs []change) (int64, error) {
	if len(chs) == 0 {
		return 0, nil
	}
	if err := s.lockFeed(ctx, tx, s.summaryLocks(chs)); err != nil {
		return 0, err
	}
	n := len(chs)
	var (
		envs, models, froms, tos = make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		sinces, untils, ats      = make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n)
		counts                   = make([]int32, n)
		runs                     = make([]int64, n)
	)
	for i, c := range chs {
		envs[i], models[i], froms[i], tos[i] = c.env, c.model, string(c.from), string(c.to)
		sinces[i], untils[i] = windowBounds(c.window)
		ats[i], counts[i], runs[i] = nullTime(c.at), int32(c.count), c.runID
	}
	args := []any{envs, models, sinces, untils, froms, tos, counts, ats, runs}
	counted := ""
	if deltas := countDeltas(chs); len(deltas[0].([]string)) > 0 {
		// Only transitions into or out of applied pay for the counts.
		args, counted = append(args, deltas...), `, counted AS (
		    `+countsInsert+`
		)`
	}
	args, summarized := summaryCTEs(chs, args)
	var last int64
	err := tx.QueryRow(ctx, s.sql(`
		WITH appended AS (
		    INSERT INTO {schema}.changes (env, model, since, until, from_status, to_status, count, at, run_id)
		    SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[],
		                         $5::text[], $6::text[], $7::int[], $8::timestamptz[], $9::bigint[])
		    RETURNING seq
		)`+counted+summarized+`
		SELECT max(seq) FROM appended`), args...).Scan(&last)
	return last, err
}

// lockFeed takes the feed's lock in shared mode and then, exclusively and
// in order, the summary locks given, in one round trip (a pipeline of two
// statements, run one after the other).
func (s *Store) lockFeed(ctx context.Context, tx pgx.Tx, summary []int64) error {
	if len(summary) == 0 {
		_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1)`, s.feedKey())
		return err
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT pg_advisory_xact_lock_shared($1)`, s.feedKey())
	// unnest yields the sorted keys in array order, each lock taken as
	// its row is produced.
	b.Queue(`SELECT count(pg_advisory_xact_lock(k)) FROM unnest($1::bigint[]) AS k`, summary)
	return tx.SendBatch(ctx, b).Close()
}

// notify tells listeners that the feed grew, after the commit: a NOTIFY
// carries only the seq, never row data, because a payload over 8,000 bytes
// would fail the transaction. It is a hint and may be lost (a connection
// dropping right now); readers re-read the feed whenever they reconnect, so
// a lost hint only delays them until the next change.
func (s *Store) notify(ctx context.Context, seq int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, s.channel, strconv.FormatInt(seq, 10))
}

// feedKey is the advisory lock key of the schema's change feed.
func (s *Store) feedKey() int64 { return lockKey("bollhav.changes:" + s.schema) }

// Changes returns the changes after seq, oldest first; limit <= 0 means all.
//
// Every seq up to the last one returned is final: it is in the result (or
// was before after), or the transaction that took it rolled back — none can
// commit later, so a reader resuming from the last seq never skips one.
// When the rows read have no seq missing, that holds already. When one is
// missing (a transaction that took it is still committing, or it rolled
// back), Changes settles the feed up to the last seq it saw and reads again:
// the wait is for commits under way (milliseconds), and blocks new commits
// for no longer than that.
func (s *Store) Changes(ctx context.Context, after int64, limit int) ([]state.Change, error) {
	cs, err := s.readChanges(ctx, after, limit)
	if err != nil || contiguous(after, cs) {
		return cs, err
	}
	seen := cs[len(cs)-1].Seq
	if err := s.settle(ctx); err != nil {
		return nil, fmt.Errorf("postgres: settling the change feed: %w", err)
	}
	if cs, err = s.readChanges(ctx, after, limit); err != nil {
		return nil, err
	}
	return settled(seen, cs), nil
}

// LatestSeq implements state.Store: the newest seq, once every seq up to it
// is final (settle), so an index built from reads made after it reflects
// every change up to it.
func (s *Store) LatestSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.pool.QueryRow(ctx, s.sql(`SELECT coalesce(max(seq), 0) FROM {schema}.changes`)).Scan(&seq); err != nil || seq == 0 {
		return seq, err
	}
	if err := s.settle(ctx); err != nil {
		return 0, fmt.Errorf("postgres: settling the change feed: %w", err)
	}
	return seq, nil
}

// settle returns once every transaction that had taken a seq when it was
// called has committed or rolled back, and its rows are visible to the
// caller's next statement. Each such transaction took the feed's lock in
// shared mode before its seqs (record) and holds it until its commit is
// visible, so taking the lock exclusively waits for exactly them. The
// statement is its own transaction, so the lock is released as it returns.
//
// Why the seqs a caller saw are then final: a transaction holding seq s
// below a seq n the caller saw committed took s before n was taken, hence
// took the lock before n committed, before the caller's read, before this
// call — so this call waits for it.
func (s *Store) settle(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, s.feedKey())
	return err
}

// contiguous reports whether cs are the seqs right after after, none
// missing.
func contiguous(after int64, cs []state.Change) bool {
	for i, c := range cs {
		if c.Seq != after+int64(i)+1 {
			return false
		}
	}
	return true
}

// settled keeps the rows of a read made after settle that are final: those
// up to seen, the last seq seen before settling, and after it those that
// follow with no seq missing.
func settled(seen int64, cs []state.Change) []state.Change {
	next := seen + 1
	for i, c := range cs {
		switch {
		case c.Seq <= seen:
		case c.Seq == next:
			next++
		default:
			return cs[:i]
		}
	}
	return cs
}

// readChanges reads the rows after seq as they are now.
func (s *Store) readChanges(ctx context.Context, after int64, limit int) ([]state.Change, error) {
	rows, err := s.pool.Query(ctx, s.sql(`
		SELECT seq, env, model, since, until, from_status, to_status, count, at, run_id
		FROM {schema}.changes WHERE seq > $1 ORDER BY seq LIMIT $2`), after, limitParam(limit))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (state.Change, error) {
		var (
			c            state.Change
			since, until pgtype.Timestamptz
			from, to     string
		)
		err := row.Scan(&c.Seq, &c.Env, &c.Model, &since, &until, &from, &to, &c.Count, &c.At, &c.RunID)
		c.Window = windowOf(since, until)
		c.From, c.To = state.UnitStatus(from), state.UnitStatus(to)
		c.At = c.At.UTC()
		return c, err
	})
}
