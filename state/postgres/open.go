package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bollhav/bollhav/state"
)

// Options configures Open.
type Options struct {
	// Schema is the schema the store lives in, DefaultSchema when empty.
	// Stores in different schemas of one database are independent, which is
	// how staging shares a server with production and how every test gets a
	// store of its own.
	Schema string

	// tracer sees every statement; tests use it to EXPLAIN what the store
	// runs.
	tracer pgx.QueryTracer
}

// Store is a state.Store in one schema of a PostgreSQL database. It is safe
// for concurrent use, and any number of processes may share a schema.
type Store struct {
	pool   *pgxpool.Pool
	schema string
	// begin is how the store begins its transactions (beginOptions).
	begin pgx.TxOptions
	// channel is the NOTIFY channel of this schema's change feed.
	channel string
	// known holds the models (env\x00name) a read found registered:
	// models are never deleted, so once registered is registered for
	// good, and registered need not ask again.
	known sync.Map

	// mu guards closed, so Wake never adds a listener Close is not waiting
	// for.
	mu        sync.Mutex
	closed    bool
	closing   chan struct{}
	listeners sync.WaitGroup
}

var _ state.Store = (*Store)(nil)

// connectTimeout bounds the first connection when the DSN sets none, so an
// unreachable server is an error in seconds, not after the kernel's TCP
// timeout of minutes.
const connectTimeout = 10 * time.Second

// Open connects to the database dsn names (a postgres:// URL or keyword/value
// string, as libpq takes) and creates or migrates the store's schema. A
// wrong DSN, an unreachable server and a refused login each come back as one
// line that never contains the password. A schema migrated by a newer bollhav
// is refused with an error wrapping state.ErrNewerSchema, and left unchanged.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	schema := opts.Schema
	if schema == "" {
		schema = DefaultSchema
	}
	if err := checkSchema(schema); err != nil {
		return nil, err
	}
	ms, err := embeddedMigrations()
	if err != nil {
		return nil, err
	}
	pool, cfg, err := connect(ctx, dsn, func(cfg *pgxpool.Config) {
		if opts.tracer != nil {
			cfg.ConnConfig.Tracer = opts.tracer
		}
	})
	if err != nil {
		return nil, err
	}
	if _, err := migrate(ctx, pool, schema, ms); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{
		pool:    pool,
		begin:   beginOptions(cfg),
		schema:  schema,
		channel: schema + channelSuffix,
		closing: make(chan struct{}),
	}, nil
}

// connect parses dsn, refuses a password the URL form would garble, sets
// the session defaults and then tune's settings, and opens a pool that has
// answered a ping: the connection both a store and a warehouse make, each
// error one line without the password.
func connect(ctx context.Context, dsn string, tune func(*pgxpool.Config)) (*pgxpool.Pool, *pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, nil, dsnError(dsn, err)
	}
	if err := checkURLPassword(dsn, cfg.ConnConfig.Password); err != nil {
		return nil, nil, err
	}
	sessionDefaults(cfg)
	tune(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, connectError(&cfg.ConnConfig.Config, dsn, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, nil, connectError(&cfg.ConnConfig.Config, dsn, err)
	}
	return pool, cfg, nil
}

// Backend names the implementation.
func (s *Store) Backend() string { return "postgres" }

// Schema is the schema the store lives in.
func (s *Store) Schema() string { return s.schema }

// SchemaVersion is the newest migration applied to the schema.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, s.sql(`SELECT coalesce(max(version), 0) FROM {schema}.schema_version`)).Scan(&v)
	return v, err
}

// Identity implements state.Store: the id migration 0011 made.
func (s *Store) Identity(ctx context.Context) (string, error) {
	var id string
	err := s.pool.QueryRow(ctx, s.sql(`SELECT id FROM {schema}.store_identity`)).Scan(&id)
	return id, err
}

// Close stops the change-feed listeners and closes the pool, waiting for
// connections in use to be returned.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	s.listeners.Wait()
	s.pool.Close()
	return nil
}

// sql qualifies a statement's tables with the store's schema.
func (s *Store) sql(q string) string { return sqlFor(s.schema, q) }
