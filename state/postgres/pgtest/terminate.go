package pgtest

// Losing the database for real: a test names its store's connections with
// an application_name no other test uses, then ends exactly those backends
// with pg_terminate_backend — what a server restart or a failover does to a
// client — while every other test on the shared server goes on untouched.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ApplicationName returns prefix followed by random hex: a name for one
// test's connections that no other test uses.
func ApplicationName(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// WithApplicationName returns dsn with its application_name set to app, in
// a postgres:// URL or a keyword/value DSN alike. A store opened on it
// names every connection it makes app, its change-feed listener included.
func WithApplicationName(dsn, app string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			q := u.Query()
			q.Set("application_name", app)
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	// Keyword/value: a later keyword wins over an earlier one.
	quoted := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(app)
	return dsn + " application_name='" + quoted + "'"
}

// terminateSQL ends every backend of the current database named $1 except
// the caller's own, and counts the ones it ended.
const terminateSQL = `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
	WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()`

// Terminate ends, once, every backend of dsn's database whose
// application_name is app, and returns how many it ended.
func Terminate(dsn, app string) (int, error) {
	var n int
	err := QueryRow(dsn, terminateSQL, []any{app}, &n)
	return n, err
}

// Terminator keeps ending the backends named app, every few milliseconds,
// until Stop: a database that is down for as long as the test says, since
// each connection the client makes meanwhile is ended within moments.
type Terminator struct {
	t        testing.TB
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	mu       sync.Mutex
	ended    int
	rounds   int
	firstErr error
}

// StartTerminating starts a Terminator on a connection of its own (which it
// never ends) that runs a round every `every`. It is stopped when t ends at
// the latest; an error of any round fails t then.
func StartTerminating(t testing.TB, dsn, app string, every time.Duration) *Terminator {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), WithApplicationName(dsn, ApplicationName("bollhav_terminator_")))
	if err != nil {
		t.Fatalf("pgtest: connecting the terminator: %v", err)
	}
	k := &Terminator{t: t, stop: make(chan struct{}), done: make(chan struct{})}
	go k.loop(conn, app, every)
	t.Cleanup(func() { k.Stop() })
	return k
}

func (k *Terminator) loop(conn *pgx.Conn, app string, every time.Duration) {
	defer close(k.done)
	defer conn.Close(context.Background())
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var n int
		err := conn.QueryRow(ctx, terminateSQL, app).Scan(&n)
		cancel()
		k.mu.Lock()
		k.rounds++
		k.ended += n
		if err != nil && k.firstErr == nil {
			k.firstErr = err
		}
		k.mu.Unlock()
		select {
		case <-k.stop:
			return
		case <-tick.C:
		}
	}
}

// Ended is how many backends the Terminator has ended so far.
func (k *Terminator) Ended() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ended
}

// Rounds is how many rounds of terminations have run so far.
func (k *Terminator) Rounds() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.rounds
}

// Stop ends the terminations and waits for the last round; from its return
// on, connections named app live again. It returns how many backends were
// ended in all, and fails t if a round could not run. Calling it again does
// nothing more.
func (k *Terminator) Stop() int {
	k.once.Do(func() {
		close(k.stop)
		<-k.done
		if k.firstErr != nil {
			k.t.Errorf("pgtest: terminating backends: %v", k.firstErr)
		}
	})
	return k.Ended()
}
