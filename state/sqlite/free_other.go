//go:build !unix

package sqlite

// freeBytes cannot read the free space here: an I/O error is left as
// SQLite words it.
func freeBytes(string) (uint64, bool) { return 0, false }
