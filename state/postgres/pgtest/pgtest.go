// Package pgtest gives tests a PostgreSQL server and a schema of their own,
// the same way in every package: the server comes from BOLLHAV_TEST_DSN
// (default DefaultDSN, the local server of a development machine), and a
// machine without one skips those tests with a one-line reason — unless
// BOLLHAV_REQUIRE_PG=1, which CI sets so that a broken server fails the build
// instead of passing as a run of skips.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultDSN is the server used when BOLLHAV_TEST_DSN is not set.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// DSN returns the test server's connection string, or skips t (fails it
// under BOLLHAV_REQUIRE_PG=1) when the server cannot be reached. The server
// is probed once per process.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("BOLLHAV_TEST_DSN")
	if dsn == "" {
		dsn = DefaultDSN
	}
	if err := probe(dsn); err != nil {
		if os.Getenv("BOLLHAV_REQUIRE_PG") == "1" {
			t.Fatalf("PostgreSQL is required (BOLLHAV_REQUIRE_PG=1) but unreachable: %v", err)
		}
		t.Skipf("no PostgreSQL (%v); set BOLLHAV_TEST_DSN to run these tests", err)
	}
	return dsn
}

var probes sync.Map // dsn → func() error

func probe(dsn string) error {
	once, _ := probes.LoadOrStore(dsn, sync.OnceValue(func() error { return reach(dsn) }))
	return once.(func() error)()
}

// reach connects once and reports why it could not, on one line and without
// the password.
func reach(dsn string) error {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return fmt.Errorf("BOLLHAV_TEST_DSN is not a valid connection string")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		var (
			pgErr *pgconn.PgError
			opErr *net.OpError
			msg   = strings.Join(strings.Fields(err.Error()), " ")
		)
		switch {
		case errors.As(err, &pgErr):
			msg = pgErr.Message
		case errors.As(err, &opErr):
			msg = opErr.Err.Error()
		}
		if cfg.Password != "" {
			msg = strings.ReplaceAll(msg, cfg.Password, "xxxxx")
		}
		return fmt.Errorf("%s: %s", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), msg)
	}
	return conn.Close(ctx)
}

// Schema returns a schema name no other test uses, and drops that schema
// with everything in it when t ends. Register the Close of a store opened in
// it after calling Schema, so the store closes before the drop.
func Schema(t testing.TB, dsn string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "bollhav_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		if err := Exec(dsn, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping test schema %s: %v", name, err)
		}
	})
	return name
}

// Exec runs sql on a connection of its own, for a test's setup and cleanup
// and for statements a test needs outside the store under test.
func Exec(dsn, sql string, args ...any) error {
	return onConn(dsn, func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, sql, args...)
		return err
	})
}

// QueryRow runs a one-row query on a connection of its own and scans the
// row into dest.
func QueryRow(dsn, sql string, args []any, dest ...any) error {
	return onConn(dsn, func(ctx context.Context, conn *pgx.Conn) error {
		return conn.QueryRow(ctx, sql, args...).Scan(dest...)
	})
}

// onConn runs do on a connection of its own to dsn, closed after it, with
// 30 seconds for the whole.
func onConn(dsn string, do func(ctx context.Context, conn *pgx.Conn) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return do(ctx, conn)
}
