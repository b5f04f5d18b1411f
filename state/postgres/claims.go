package postgres

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/bollhav/bollhav/state"
)

const (
	// claimAttempts bounds how often Claim starts over after losing a race.
	claimAttempts = 10
	// claimRounds bounds the candidate queries of one claim; each round
	// claims a unit or rules candidates out for the next.
	claimRounds = 100
)

// Claim moves up to req.Limit pending units to running under a lease, oldest
// window first, each with a new fencing token.
//
// Concurrent claimers stay out of each other's way in three ways. Candidates
// are locked FOR UPDATE SKIP LOCKED, so claimers pass each other by instead
// of queueing. A flexible model's pending unit overlapping a running one is
// filtered out with NOT EXISTS. And claims of one flexible model are
// serialized by a transaction-scoped advisory lock, taken without waiting: a
// claimer that finds another one claiming the same flexible model leaves
// that model to its next call. Without that lock, two claimers picking
// overlapping units at once would both reach the exclusion constraint, which
// makes the second wait for the first and then fail — or, when each waits
// for the other, deadlock both for a second. The exclusion constraint stays
// the guarantee; should a claim still run into it, Claim starts over.
func (s *Store) Claim(ctx context.Context, req state.ClaimRequest) ([]state.Claim, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	var err error
	for range claimAttempts {
		var claims []state.Claim
		claims, err = s.claimOnce(ctx, req)
		if err == nil || !retryable(err) {
			return claims, err
		}
	}
	return nil, fmt.Errorf("claim: still losing races to other claimers after %d attempts: %w", claimAttempts, err)
}

// candidate is a pending unit Claim may take.
type candidate struct {
	id       int64
	model    string
	flexible bool
	window   state.Window
}

// claimRound is what one claim transaction knows of the flexible models it
// met: which ones it holds the claim lock of, which ones another claimer
// holds, and which windows of each it has claimed.
type claimRound struct {
	held  map[string]bool
	busy  []string
	taken map[string][]state.Window
}

func (s *Store) claimOnce(ctx context.Context, req state.ClaimRequest) ([]state.Claim, error) {
	var claims []state.Claim
	err := s.write(ctx, func(tx pgx.Tx) ([]change, error) {
		claims = nil
		if err := s.claimModelsRegistered(ctx, tx, req); err != nil {
			return nil, err
		}
		r := claimRound{held: map[string]bool{}, taken: map[string][]state.Window{}}
		for range claimRounds {
			if len(claims) == req.Limit {
				break
			}
			cands, err := s.claimCandidates(ctx, tx, req, req.Limit-len(claims), r.busy)
			if err != nil {
				return nil, err
			}
			if len(cands) == 0 {
				break
			}
			if cands, err = s.lockFlexible(ctx, tx, req.Env, cands, &r); err != nil {
				return nil, err
			}
			var ids []int64
			for _, c := range cands {
				if c.flexible && slices.ContainsFunc(r.taken[c.model], c.window.Overlaps) {
					continue // left pending; the next round's NOT EXISTS skips it
				}
				ids = append(ids, c.id)
				if c.flexible {
					r.taken[c.model] = append(r.taken[c.model], c.window)
				}
			}
			got, err := s.markRunning(ctx, tx, req, ids)
			if err != nil {
				return nil, err
			}
			claims = append(claims, got...)
		}
		sort.SliceStable(claims, func(i, j int) bool { return unitBefore(claims[i].Unit, claims[j].Unit) })
		chs := make([]change, len(claims))
		for i, c := range claims {
			chs[i] = change{env: c.Unit.Env, model: c.Unit.Model, window: c.Unit.Window, from: state.Pending, to: state.Running, count: 1, at: req.Now, runID: req.RunID}
		}
		return chs, nil
	})
	if err != nil {
		return nil, err
	}
	return claims, nil
}

// claimModelsRegistered refuses a claim naming a model that is not
// registered in its environment, as SQLite does: the first such name is the
// error (state.ModelNotFound). A claim of every model names none.
func (s *Store) claimModelsRegistered(ctx context.Context, tx pgx.Tx, req state.ClaimRequest) error {
	if len(req.Models) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, s.sql(`SELECT name FROM {schema}.models WHERE env = $1 AND name = ANY($2)`), req.Env, req.Models)
	if err != nil {
		return fmt.Errorf("postgres: claim: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("postgres: claim: %w", err)
	}
	if len(names) == len(req.Models) {
		return nil // names are unique in an env; a claim's list is too, in practice
	}
	found := make(map[string]bool, len(names))
	for _, n := range names {
		found[n] = true
	}
	for _, name := range req.Models {
		if !found[name] {
			return state.ModelNotFound(req.Env, name)
		}
	}
	return nil
}

// claimCandidates locks up to limit pending units, oldest first, skipping
// units other claimers hold, the flexible models in busy, and flexible units
// overlapping a running one (this transaction's claims included).
func (s *Store) claimCandidates(ctx context.Context, tx pgx.Tx, req state.ClaimRequest, limit int, busy []string) ([]candidate, error) {
	if len(req.Models) > 0 && len(req.Models) <= claimPerModelMax {
		return s.claimCandidatesPerModel(ctx, tx, req, limit, busy)
	}
	where := filter{args: []any{limit}}
	envArg := where.add("u.env = $%d", req.Env)
	longest := fmt.Sprintf(`SELECT coalesce(max(longest_unit), 0) FROM {schema}.models WHERE env = $%d`, envArg)
	where.add("u.status = $%d", string(state.Pending))
	// A failed unit waiting for its retry is not claimable before then.
	where.add("(u.not_before IS NULL OR u.not_before <= $%d)", req.Now)
	if len(req.Models) > 0 {
		longest += fmt.Sprintf(" AND name = ANY($%d)", where.add("u.model = ANY($%d)", req.Models))
	}
	if !req.Window.IsZero() {
		where.addOverlap("u", req.Window, longest)
	}
	if len(busy) > 0 {
		where.add("u.model <> ALL($%d)", busy)
	}
	if len(req.Models) > 0 {
		// A generic plan (PostgreSQL's choice after a statement has run a
		// few times) cannot see how many models the list holds, takes it
		// for a few, and reads each one's units from units_status to sort
		// them all: 2.6 s a claim over 1,000 models × 1,000 pending units,
		// where reading units_pending_claim_order in order takes 8 ms. A
		// plan made for each claim's list costs well under a millisecond.
		if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_custom_plan`); err != nil {
			return nil, err
		}
	}
	rows, err := tx.Query(ctx, s.sql(`
		SELECT u.id, u.model, u.flexible, u.since, u.until FROM {schema}.units u
		WHERE `+where.sql()+`
		  AND NOT (u.flexible AND EXISTS (`+runningOverlap+`))
		ORDER BY u.since, u.until, u.model, u.id
		LIMIT $1
		FOR UPDATE OF u SKIP LOCKED`), where.args...)
	if err != nil {
		return nil, err
	}
	return collectCandidates(rows)
}

func collectCandidates(rows pgx.Rows) ([]candidate, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (candidate, error) {
		var (
			c            candidate
			since, until pgtype.Timestamptz
		)
		err := row.Scan(&c.id, &c.model, &c.flexible, &since, &until)
		c.window = windowOf(since, until)
		return c, err
	})
}

// claimPerModelMax is the most models a claim may name for its candidates to
// be read model by model (claimCandidatesPerModel); a claim of more models,
// or of every model, sorts all their pending units instead.
const claimPerModelMax = 8

// claimCandidatesPerModel is claimCandidates for a claim naming a few
// models, the common case (a run's task names one, a small spec's worker
// a few): each model's oldest pending units are read in order from an
// index, up to limit of them, and the models' lists merged. Sorting every
// pending unit of the models instead, as claimCandidates does, makes each
// claim cost in proportion to the backlog (tens of milliseconds for 20,000
// pending units), and a busy worker claims many times a second. The price is
// that up to limit units of each model are locked until the claim commits,
// not limit in all, hence claimPerModelMax.
//
// The inner ORDER BY is exactly an index's order, so that no plan needs a
// sort, whatever the statistics say (right after a prefill they count
// nothing, and the planner would happily sort a model's whole backlog): the
// status matched as the range pending..pending, and ordered on, leaves
// units_status (env, model, status, since) the one index that returns the
// units in order, where status = 'pending' would let the planner walk
// units_window_key and step over every applied unit of the model's history.
// Inside a window the status is matched by equality, so that the window's
// bounds on since limit the index range read. Units of one model starting
// at the same instant come in index order, not by until.
func (s *Store) claimCandidatesPerModel(ctx context.Context, tx pgx.Tx, req state.ClaimRequest, limit int, busy []string) ([]candidate, error) {
	where := filter{args: []any{limit}}
	where.add("m.env = $%d", req.Env)
	where.add("m.name = ANY($%d)", req.Models)
	if len(busy) > 0 {
		where.add("m.name <> ALL($%d)", busy)
	}
	pending, order := "u.status >= 'pending' AND u.status <= 'pending'", "u.status, u.since"
	where.args = append(where.args, req.Now)
	notBefore := fmt.Sprintf(" AND (u.not_before IS NULL OR u.not_before <= $%d)", len(where.args))
	if !req.Window.IsZero() {
		where.args = append(where.args, req.Window.Since, req.Window.Until)
		since, until := len(where.args)-1, len(where.args)
		pending = fmt.Sprintf("u.status = 'pending' AND u.since < $%[2]d AND u.until > $%[1]d"+
			" AND u.since >= $%[1]d - m.longest_unit * interval '1 microsecond'", since, until)
		order = "u.since"
	}
	rows, err := tx.Query(ctx, s.sql(`
		SELECT c.id, c.model, c.flexible, c.since, c.until
		FROM {schema}.models m
		CROSS JOIN LATERAL (
		    SELECT u.id, u.model, u.flexible, u.since, u.until FROM {schema}.units u
		    WHERE u.env = m.env AND u.model = m.name AND `+pending+notBefore+`
		      AND NOT (u.flexible AND EXISTS (`+runningOverlap+`))
		    ORDER BY `+order+`
		    LIMIT $1
		    FOR UPDATE OF u SKIP LOCKED
		) c
		WHERE `+where.sql()+`
		ORDER BY c.since, c.until, c.model, c.id
		LIMIT $1`), where.args...)
	if err != nil {
		return nil, err
	}
	return collectCandidates(rows)
}

// runningOverlap finds a running unit of u's flexible model overlapping u,
// through the exclusion constraint's index.
const runningOverlap = `
	SELECT 1 FROM {schema}.units r
	WHERE r.env = u.env AND r.model = u.model AND r.status = 'running' AND r.flexible AND r.span && u.span`

// lockFlexible takes the claim lock of every flexible model among cands that
// this transaction does not hold yet, without waiting. It drops the
// candidates of models another claimer holds (and records those models as
// busy), then checks the flexible candidates again against running units:
// the candidate query ran before the lock, and a claimer that held it may
// have committed an overlapping unit since.
func (s *Store) lockFlexible(ctx context.Context, tx pgx.Tx, env string, cands []candidate, r *claimRound) ([]candidate, error) {
	var names []string
	var keys []int64
	for _, c := range cands {
		if c.flexible && !r.held[c.model] && !slices.Contains(names, c.model) {
			names = append(names, c.model)
			keys = append(keys, lockKey("bollhav.claim:"+s.schema+"\x00"+env+"\x00"+c.model))
		}
	}
	if len(names) == 0 {
		return cands, nil
	}
	rows, err := tx.Query(ctx, `SELECT m FROM unnest($1::text[], $2::bigint[]) AS t (m, k) WHERE pg_try_advisory_xact_lock(k)`, names, keys)
	if err != nil {
		return nil, err
	}
	locked, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	for _, m := range names {
		if slices.Contains(locked, m) {
			r.held[m] = true
		} else {
			r.busy = append(r.busy, m)
		}
	}
	var flexIDs []int64
	for _, c := range cands {
		if c.flexible && r.held[c.model] {
			flexIDs = append(flexIDs, c.id)
		}
	}
	free := map[int64]bool{}
	if len(flexIDs) > 0 {
		rows, err := tx.Query(ctx, s.sql(`
			SELECT u.id FROM {schema}.units u
			WHERE u.id = ANY($1) AND NOT EXISTS (`+runningOverlap+`)`), flexIDs)
		if err != nil {
			return nil, err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			free[id] = true
		}
	}
	out := cands[:0]
	for _, c := range cands {
		if !c.flexible || free[c.id] {
			out = append(out, c)
		}
	}
	return out, nil
}

func (s *Store) markRunning(ctx context.Context, tx pgx.Tx, req state.ClaimRequest, ids []int64) ([]state.Claim, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := tx.Query(ctx, s.sql(`
		UPDATE {schema}.units u
		SET status = 'running', lease_owner = $2, lease_until = $3, run_id = $4, updated_at = $5,
		    fence = nextval('{schema}.fences'), applied_at = NULL, error = '', blocked_reason = '', not_before = NULL,
		    fingerprint = NULL
		WHERE u.id = ANY($1)
		RETURNING `+unitColumns), ids, req.Worker, req.Now.Add(req.Lease), req.RunID, req.Now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (state.Claim, error) {
		u, err := scanUnit(row)
		return state.Claim{Unit: u, Fence: u.Fence}, err
	})
}

// unitBefore orders units the way claims are handed out: oldest window
// first.
func unitBefore(a, b state.Unit) bool {
	if !a.Window.Since.Equal(b.Window.Since) {
		return a.Window.Since.Before(b.Window.Since)
	}
	if !a.Window.Until.Equal(b.Window.Until) {
		return a.Window.Until.Before(b.Window.Until)
	}
	if a.Model != b.Model {
		return a.Model < b.Model
	}
	return a.ID < b.ID
}
