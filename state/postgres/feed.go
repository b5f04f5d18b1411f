package postgres

import (
	"context"
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
// its transaction: it takes a lock held until commit, so
// seqs are handed out in commit order. Without it, a transaction that took
// seq 10 could commit after one that took seq 11, and a reader that had
// already moved past 11 would never see 10.
func (s *Store) record(ctx context.Context, tx pgx.Tx, chs []change) (int64, error) {
	if len(chs) == 0 {
		return 0, nil
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockKey("bollhav.changes:"+s.schema)); err != nil {
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

// Changes returns the changes after seq, oldest first; limit <= 0 means all.
func (s *Store) Changes(ctx context.Context, after int64, limit int) ([]state.Change, error) {
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
