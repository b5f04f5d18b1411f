package sqlite

import (
	"errors"

	driver "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// isUniqueViolation reports whether err is SQLite refusing a row that a
// UNIQUE index already holds (SQLITE_CONSTRAINT_UNIQUE), which the store
// turns into the error every store gives for it.
func isUniqueViolation(err error) bool {
	var e *driver.Error
	return errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}
