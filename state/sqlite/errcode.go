package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"

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

// fullDisk explains a write SQLite refused for want of room, which it
// reports as "database or disk is full" (SQLITE_FULL) or, when the file
// system itself refused the write, as a bare "disk I/O error (778)": the
// operator reads that the disk holding the store is full and where, with
// SQLite's words kept after it. Any other error comes back as it was.
func fullDisk(path string, err error) error {
	var e *driver.Error
	if err == nil || !errors.As(err, &e) {
		return err
	}
	dir := filepath.Dir(path)
	switch e.Code() & 0xff {
	case sqlite3.SQLITE_FULL:
	case sqlite3.SQLITE_IOERR:
		if free, ok := freeBytes(dir); !ok || free >= minFree {
			return err // an I/O error with room to spare: not this
		}
	default:
		return err
	}
	return fmt.Errorf("sqlite: the disk holding %s is full: free space in %s, then try again (nothing of this write was kept): %w", path, dir, err)
}

// minFree is the free space under which an I/O error is taken for a full
// disk: SQLite writes pages of a few KB, and its journal a few more.
const minFree = 1 << 20
