package postgres

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATE codes this package reacts to.
const (
	codeUniqueViolation      = "23505"
	codeExclusionViolation   = "23P01"
	codeForeignKeyViolation  = "23503"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
)

// pgErr is the server's error in err's chain, nil when there is none.
func pgErr(err error) *pgconn.PgError {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// pgCode is err's SQLSTATE, "" when err did not come from the server.
func pgCode(err error) string {
	if e := pgErr(err); e != nil {
		return e.Code
	}
	return ""
}

// retryable reports whether err is a race with a concurrent transaction that
// running the same transaction again resolves: a unique or exclusion
// violation against a row committed meanwhile, a deadlock, a serialization
// failure.
func retryable(err error) bool {
	switch pgCode(err) {
	case codeUniqueViolation, codeExclusionViolation, codeSerializationFailure, codeDeadlockDetected:
		return true
	}
	return false
}
