package postgres

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/storetest"
)

// TestUpgradeToAttemptHistory: a schema written by the release before the
// attempt history (version 3), holding a failed unit and a running one,
// opens in this release: migration 0004 adds the history, the units are
// kept as they were, the failed unit's history starts empty (its earlier
// errors were never kept one by one), the running unit's expired lease is
// logged in it, and marking the failed unit pending logs its error there
// before clearing it.
func TestUpgradeToAttemptHistory(t *testing.T) {
	ctx := t.Context()
	lease := t0.Add(48 * time.Hour)
	s, pool, schema := upgradeFrom(t, 3, func(exec func(string, ...any)) {
		exec(`INSERT INTO {schema}.units (env, model, flexible, since, until, status, error, attempts, updated_at)
		VALUES ('', 'a', false, $1, $2, 'failed', 'exit status 1: boom', 2, $1)`, t0, t0.Add(time.Hour))
		exec(`INSERT INTO {schema}.units (env, model, flexible, since, until, status, lease_owner, lease_until, fence, updated_at)
		VALUES ('', 'a', false, $1, $2, 'running', 'host:42', $3, 1, $1)`, t0.Add(time.Hour), t0.Add(2*time.Hour), lease)
	})
	var ids []int64
	var failed, running state.Unit
	rows, err := pool.Query(ctx, sqlFor(schema, `SELECT id, status, error, attempts, lease_owner FROM {schema}.units ORDER BY since`))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u state.Unit
		if err := rows.Scan(&u.ID, &u.Status, &u.Error, &u.Attempts, &u.LeaseOwner); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
		if u.Status == state.Failed {
			failed = u
		} else {
			running = u
		}
	}
	rows.Close()
	if len(ids) != 2 || failed.Error != "exit status 1: boom" || failed.Attempts != 2 || running.Status != state.Running || running.LeaseOwner != "host:42" {
		t.Fatalf("units after the upgrade: failed %+v, running %+v", failed, running)
	}
	// The units above were written without a registration of their model:
	// a's comes before the mark.
	storetest.UpgradedAttemptHistory(t, s, failed.ID, running.ID, t0, lease, func() {
		def := `{"name": "a", "chunking": {"interval": "1h", "start": "` + state.FormatTime(t0) + `"}}`
		if _, err := s.Register(ctx, "", []state.ModelRecord{{Name: "a", Pipeline: "p", Temporality: "temporal", Flexibility: "fix",
			Interval: "1h", Timezone: "UTC", Start: t0, Definition: []byte(def), ContentHash: "h"}}, nil, t0); err != nil {
			t.Fatal(err)
		}
	})
}
