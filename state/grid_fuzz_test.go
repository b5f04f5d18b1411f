package state

import (
	"testing"
	"time"
)

// FuzzGridIndex builds a grid from the input and checks Index against its
// definition, Start+k·iv <= t < Start+(k+1)·iv, for instants in 1800..2300;
// for any other instant it only has to return.
func FuzzGridIndex(f *testing.F) {
	f.Add(uint8(2), uint16(0), uint8(1), int64(0), int64(3600))
	f.Add(uint8(2), uint16(0), uint8(1), int64(86400*87), int64(-86400*400))
	f.Add(uint8(4), uint16(0), uint8(2), int64(86400*31*3), int64(86400*365*20))
	f.Add(uint8(5), uint16(11), uint8(0), int64(-1), int64(1<<62))
	zones := []*time.Location{time.UTC}
	for _, z := range propertyZones[1:] {
		zones = append(zones, mustLoad(f, z))
	}
	base := utc("2000-01-01T00:00:00Z")
	f.Fuzz(func(t *testing.T, unit uint8, n uint16, zone uint8, startSec, offSec int64) {
		iv := Interval{N: 1 + int(n)%maxIntervalCount, Unit: TimeUnit(1 + unit%6)}
		if n < 60000 {
			iv.N = 1 + int(n)%48 // mostly small grains, as real chunking uses
		}
		start := base.Add(time.Duration(startSec%(100*365*86400)) * time.Second)
		g, err := NewGrid(start, iv, zones[int(zone)%len(zones)])
		if err != nil {
			return
		}
		far := time.Unix(offSec, 0)
		g.Index(far) // must return, wherever far is
		at := g.Start.Add(time.Duration(offSec%(200*365*86400)) * time.Second)
		if at.Year() < 1800 || at.Year() > 2300 {
			return
		}
		k := g.Index(at)
		w := g.WindowAt(k)
		if !w.Contains(at) {
			t.Fatalf("%v: Index(%v) = %d, whose window %v does not contain it", g, at, k, w)
		}
		if !g.WindowContaining(at).Equal(w) || g.Index(w.Since) != k || !g.OnGrid(w.Since) {
			t.Fatalf("%v: window %d = %v is not consistent", g, k, w)
		}
		if prev := g.WindowAt(k - 1); prev.Since.After(prev.Until) || !prev.Until.Equal(w.Since) {
			t.Fatalf("%v: window %d = %v does not end where %d = %v starts", g, k-1, prev, k, w)
		}
	})
}
