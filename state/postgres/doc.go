// Package postgres is the PostgreSQL backend of state.Store, through pgx v5
// and pgxpool: the store on-call engineers point the UI at, shared by every
// worker of a deployment.
//
// The store lives in a schema of its own (default "bollhav"), created and
// migrated by Open from SQL embedded in the binary, so a deployment needs no
// separate migration step. Every SQL statement the state store runs against
// PostgreSQL is in this package; nothing above state.Store sees SQL.
//
// PostgreSQL does the work it is best at: windows are tstzrange values, so
// "applied rows touching this window" is a GiST index probe and coverage is
// range_agg over a multirange; an exclusion constraint, not application code,
// makes two running units of one flexible model with overlapping windows
// impossible; claims use FOR UPDATE SKIP LOCKED so workers never queue behind
// one another; and the change feed is a table read by sequence number, with
// LISTEN/NOTIFY only as the wake-up hint.
package postgres
