package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// How long the engine keeps retrying a store call that failed because the
// connection to the database was lost (a restart, a failover, an operator's
// pg_terminate_backend): from storeRetryFirst, doubling to storeRetryMax
// between attempts, until storeRetryFor has passed since the first failure.
const (
	storeRetryFirst = 100 * time.Millisecond
	storeRetryMax   = 5 * time.Second
	storeRetryFor   = time.Minute
	// dataTries bounds how often a sql, query or view unit runs under one
	// claim when its transaction keeps losing the connection.
	dataTries = 3
)

// connectionLost reports whether err says the store's connection went away
// rather than that the call was wrong: a connection the server terminated
// or is shutting down (SQLSTATE class 08, 57P01–57P03), a session ended
// for idling in a transaction (25P03: the process was paused), a socket that was
// reset, refused or hit end of file, or a driver error that happened before
// anything reached the server. Running the same call again on a new
// connection is then the whole remedy. The engine sees the driver's errors
// only through these interfaces, so it stays free of any backend's package.
func connectionLost(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var coded interface{ SQLState() string }
	if errors.As(err, &coded) {
		switch code := coded.SQLState(); {
		case len(code) == 5 && code[:2] == "08", code == "57P01", code == "57P02", code == "57P03", code == "25P03":
			return true
		}
	}
	var retry interface{ SafeToRetry() bool }
	if errors.As(err, &retry) && retry.SafeToRetry() {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// retryStore runs fn, a store call that is safe to repeat, again while it
// fails with a lost connection, backing off between attempts, for at most
// storeRetryFor; it returns fn's last error. A run that meets a database
// restart then carries on where it was instead of failing over a blip.
func (e *Engine) retryStore(ctx context.Context, what string, fn func() error) error {
	err := fn()
	if !connectionLost(err) {
		return err
	}
	deadline := time.Now().Add(storeRetryFor)
	backoff := storeRetryFirst
	for connectionLost(err) && time.Now().Before(deadline) {
		e.logger().Warn("the state store's connection was lost; retrying", "call", what, "in", backoff.String(), "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, storeRetryMax)
		err = fn()
	}
	return err
}
