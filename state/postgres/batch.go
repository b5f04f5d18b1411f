package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

// batchAttempts bounds how often CompleteBatch starts over after PostgreSQL
// aborted it to break a deadlock. One statement updating many rows locks
// them in an order of its choosing, so two batches, or a batch and a bulk
// transition, can each hold a row the other waits for; that takes a stale
// claim on the same unit as a live one, and is rare.
const batchAttempts = 5

// CompleteBatch records many claimed units' outcomes in one transaction: one
// UPDATE … FROM unnest(…) moves every unit that is still running under its
// claim's fence, one query looks at the few that were not (a repeat of an
// outcome already recorded, or a lost lease), and one append records a
// change per unit. A unit named twice is recorded in a later round of the
// same transaction, so items behave as if completed one after another.
func (s *Store) CompleteBatch(ctx context.Context, items []state.Completion) ([]error, error) {
	errs := make([]error, len(items))
	vals := make([]outcomeColumns, len(items))
	var valid []int
	for i, it := range items {
		v, err := columnsOf(it.Claim, it.Outcome)
		if err != nil {
			errs[i] = err
			continue
		}
		vals[i], valid = v, append(valid, i)
	}
	if len(valid) == 0 {
		return errs, nil
	}
	rounds := distinctUnitRounds(items, valid)
	var err error
	for range batchAttempts {
		err = s.write(ctx, func(tx pgx.Tx) ([]change, error) {
			var chs []change
			for _, round := range rounds {
				got, err := s.completeRound(ctx, tx, items, vals, round, errs)
				if err != nil {
					return nil, err
				}
				chs = append(chs, got...)
			}
			return chs, nil
		})
		if code := pgCode(err); code != codeDeadlockDetected && code != codeSerializationFailure {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return errs, nil
}

// distinctUnitRounds splits the items at idx into rounds in which no unit
// appears twice, keeping their order: one UPDATE can change a row only
// once, so a unit's second outcome must come in a statement of its own,
// after the first.
func distinctUnitRounds(items []state.Completion, idx []int) [][]int {
	var rounds [][]int
	seen := map[int64]int{} // unit id → rounds it already appears in
	for _, i := range idx {
		id := items[i].Claim.Unit.ID
		r := seen[id]
		seen[id] = r + 1
		if r == len(rounds) {
			rounds = append(rounds, nil)
		}
		rounds[r] = append(rounds[r], i)
	}
	return rounds
}

// completeRound records the outcomes of the items at round, whose units are
// distinct, and sets errs for each of them.
func (s *Store) completeRound(ctx context.Context, tx pgx.Tx, items []state.Completion, vals []outcomeColumns, round []int, errs []error) ([]change, error) {
	n := len(round)
	var (
		ids, fences             = make([]int64, n), make([]int64, n)
		statuses, texts, reason = make([]string, n), make([]string, n), make([]string, n)
		applied, ats            = make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n)
		notBefore               = make([]pgtype.Timestamptz, n)
		fingerprints            = make([]pgtype.Text, n)
		rows                    = make([]pgtype.Int8, n)
		attempts, order         = make([]int32, n), make([]int32, n)
	)
	for k, i := range round {
		c, o, v := items[i].Claim, items[i].Outcome, vals[i]
		ids[k], fences[k] = c.Unit.ID, c.Fence
		statuses[k], texts[k], reason[k] = string(o.Status), v.errText, v.reason
		applied[k], ats[k] = v.applied, pgtype.Timestamptz{Time: o.At, Valid: true}
		if o.RowsWritten != nil {
			rows[k] = pgtype.Int8{Int64: *o.RowsWritten, Valid: true}
		}
		attempts[k], order[k] = int32(v.attempt), int32(k)
		notBefore[k] = v.notBefore
		fingerprints[k] = v.fingerprint
	}
	res, err := tx.Query(ctx, s.sql(`
		UPDATE {schema}.units u
		SET status = i.status, applied_at = i.applied_at, error = i.error, blocked_reason = i.reason,
		    rows_written = i.rows_written, attempts = u.attempts + i.attempt,
		    lease_owner = '', lease_until = NULL, updated_at = i.at, not_before = i.not_before,
		    fingerprint = i.fingerprint
		FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::timestamptz[], $5::text[], $6::text[],
		            $7::bigint[], $8::int[], $9::timestamptz[], $10::int[], $11::timestamptz[], $12::text[])
		     AS i (id, fence, status, applied_at, error, reason, rows_written, attempt, at, k, not_before, fingerprint)
		WHERE u.id = i.id AND u.status = 'running' AND u.fence = i.fence
		RETURNING i.k, u.env, u.model, u.since, u.until, u.run_id, u.attempts`),
		ids, fences, statuses, applied, texts, reason, rows, attempts, ats, order, notBefore, fingerprints)
	if err != nil {
		return nil, err
	}
	done := make([]*change, n)
	var (
		k            int32
		env, model   string
		since, until pgtype.Timestamptz
		runID        int64
		number       int32
		failed       failedAttempts
	)
	_, err = pgx.ForEachRow(res, []any{&k, &env, &model, &since, &until, &runID, &number}, func() error {
		if k < 0 || int(k) >= n || done[k] != nil {
			return errBatchShape
		}
		i := round[k]
		o := items[i].Outcome
		done[k] = &change{env: env, model: model, window: windowOf(since, until), from: state.Running,
			to: o.Status, count: 1, at: o.At, runID: runID, applied: appliedBy(o), appliedAt: appliedAtOf(o)}
		if isFailedAttempt(o) {
			failed.add(items[i].Claim.Unit.ID, number, o.Try, o.Error, o.At, runID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// A round of successes pays nothing for the history.
	if err := s.logAttempts(ctx, tx, &failed); err != nil {
		return nil, err
	}
	var missed []int
	chs := make([]change, 0, n)
	for k, c := range done {
		if c == nil {
			missed = append(missed, k)
			continue
		}
		errs[round[k]] = nil
		chs = append(chs, *c)
	}
	if len(missed) > 0 {
		if err := s.repeatedOutcomes(ctx, tx, items, round, missed, errs); err != nil {
			return nil, err
		}
	}
	return chs, nil
}

// repeatedOutcomes settles the items (positions missed of round) whose unit
// was not running under their fence, as repeatedOutcome settles one: nil
// when the unit still carries the fence and already has the outcome's
// status, ErrLeaseLost otherwise.
func (s *Store) repeatedOutcomes(ctx context.Context, tx pgx.Tx, items []state.Completion, round, missed []int, errs []error) error {
	ids := make([]int64, len(missed))
	for j, k := range missed {
		ids[j] = items[round[k]].Claim.Unit.ID
	}
	res, err := tx.Query(ctx, s.sql(`SELECT id, status, fence FROM {schema}.units WHERE id = ANY($1)`), ids)
	if err != nil {
		return err
	}
	type now struct {
		status string
		fence  int64
	}
	units := map[int64]now{}
	var (
		id int64
		u  now
	)
	if _, err := pgx.ForEachRow(res, []any{&id, &u.status, &u.fence}, func() error { units[id] = u; return nil }); err != nil {
		return err
	}
	for _, k := range missed {
		it := items[round[k]]
		got, ok := units[it.Claim.Unit.ID]
		if ok && got.fence == it.Claim.Fence && got.status == string(it.Outcome.Status) {
			errs[round[k]] = nil
			continue
		}
		errs[round[k]] = state.LeaseLost(it.Claim)
	}
	return nil
}

// errBatchShape guards against a driver answering for rows it was not asked
// about; it never happens with a correct query.
var errBatchShape = errors.New("complete batch: the update returned a row it was not given")
