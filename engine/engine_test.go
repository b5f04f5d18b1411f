package engine

import (
	"testing"
	"time"
)

// TestClock pins what the front ends read ages and gates by: the set clock,
// in UTC, or the wall clock when none is set.
func TestClock(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	e := &Engine{Now: func() time.Time { return at }}
	if got := e.Clock(); !got.Equal(at) || got.Location() != time.UTC {
		t.Errorf("Clock() with Now set = %v, want %v in UTC", got, at)
	}
	before := time.Now()
	got := (&Engine{}).Clock()
	if got.Before(before) || got.After(time.Now()) || got.Location() != time.UTC {
		t.Errorf("Clock() without Now = %v, want the wall clock in UTC", got)
	}
}
