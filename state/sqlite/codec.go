package sqlite

import (
	"database/sql"
	"time"

	"github.com/bollhav/bollhav/state"
)

// zeroMicros is time.Time{} in unix microseconds: the bounds of the zero
// Window, a timeless model's existence row.
var zeroMicros = time.Time{}.UnixMicro()

// micros encodes t as UTC unix microseconds; time.Time{} maps to zeroMicros.
func micros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros decodes micros, returning time.Time{} itself for zeroMicros so
// that IsZero holds after a round trip.
func fromMicros(v int64) time.Time {
	if v == zeroMicros {
		return time.Time{}
	}
	return time.UnixMicro(v).UTC()
}

// nullMicros encodes an optional time: NULL for nil or the zero time.
func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil || t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: micros(*t), Valid: true}
}

func nullMicrosOf(t time.Time) sql.NullInt64 { return nullMicros(&t) }

// timePtr decodes a nullable time column.
func timePtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// timeOrZero decodes a nullable time column into a value, NULL as zero.
func timeOrZero(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicros(v.Int64)
}

func nullInt(p *int64) sql.NullInt64 {
	if p == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: *p, Valid: true}
}

func intPtr(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	n := v.Int64
	return &n
}

// window decodes stored bounds; the existence row's come back as the zero
// Window.
func window(since, until int64) state.Window {
	return state.Window{Since: fromMicros(since), Until: fromMicros(until)}
}
