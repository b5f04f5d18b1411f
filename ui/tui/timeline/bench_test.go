package timeline

// Benchmarks: one 160-column frame over 1,000,000 hourly units (114 years
// from 2000-01-01, mixed statuses with a hole every 1000 hours), the view
// in the middle of them. A frame's cost depends on the width, not on the
// number of units nor on the zoom (a month column holds ~730 units, a
// 160-column month frame ~117,000).
//
// go test -bench . -benchtime 200x -run '^$' -benchmem ./ui/timeline
// (AMD EPYC, 2 CPUs, go1.26; repeated runs vary by about a third):
//
//	BenchmarkStrip/grain/plain-2     200     23159 ns/op     5024 B/op      8 allocs/op
//	BenchmarkStrip/grain/colour-2    200     40122 ns/op     6247 B/op     82 allocs/op
//	BenchmarkStrip/day/plain-2       200     35526 ns/op     5728 B/op      9 allocs/op
//	BenchmarkStrip/day/colour-2      200     77823 ns/op    12854 B/op    106 allocs/op
//	BenchmarkStrip/week/plain-2      200     39278 ns/op     4320 B/op      7 allocs/op
//	BenchmarkStrip/week/colour-2     200     80685 ns/op    15200 B/op     75 allocs/op
//	BenchmarkStrip/month/plain-2     200     43698 ns/op     3616 B/op      6 allocs/op
//	BenchmarkStrip/month/colour-2    200     57800 ns/op    10157 B/op     57 allocs/op
//	BenchmarkStripFrame-2            200    215727 ns/op    59024 B/op    526 allocs/op
//	BenchmarkStripNewTrack-2         200  36499397 ns/op  5290656 B/op     33 allocs/op
//
// So a frame of ruler, strip, cursor line, an upstream strip and its
// THROUGH marks takes about 0.2 ms in colour; NewTrack (36 ms for a
// million units) is paid once per data change, never per frame.

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

const benchUnits = 1_000_000

var benchData struct {
	grid  state.Grid
	segs  []Segment
	track Track
}

func benchTrack(b *testing.B) (state.Grid, Track) {
	b.Helper()
	if benchData.segs == nil {
		g, err := state.NewGrid(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), state.MustInterval("1h"), time.UTC)
		if err != nil {
			b.Fatal(err)
		}
		segs := make([]Segment, 0, benchUnits)
		for k := range benchUnits {
			s := Applied
			switch {
			case k%1000 == 999:
				continue // a hole
			case k%997 == 0:
				s = Failed
			case k%503 == 0:
				s = Blocked
			case k%101 == 0:
				s = Pending
			}
			segs = append(segs, Segment{Window: g.WindowAt(k), Status: s})
		}
		benchData.grid, benchData.segs = g, segs
		benchData.track = NewTrack(segs, state.Window{Since: g.Start, Until: g.WindowAt(benchUnits).Since})
	}
	return benchData.grid, benchData.track
}

// BenchmarkStrip draws one 160-column strip of the million units at each
// zoom; a month column holds ~730 units, a frame ~117,000.
func BenchmarkStrip(b *testing.B) {
	g, tr := benchTrack(b)
	mid := g.WindowAt(benchUnits / 2)
	for _, z := range []Zoom{ZoomGrain, ZoomDay, ZoomWeek, ZoomMonth} {
		for _, style := range []struct {
			name string
			st   Styles
		}{{"plain", Styles{}}, {"colour", colour(Unicode)}} {
			b.Run(z.String()+"/"+style.name, func(b *testing.B) {
				a := NewAxis(g, z, mid.Since, 160).Center(mid.Since)
				b.ReportAllocs()
				for b.Loop() {
					_ = Strip(a, tr, mid, style.st)
				}
			})
		}
	}
}

// BenchmarkStripFrame is what the model view draws per frame for a model
// and one upstream: the ruler, the model's strip, the cursor line, the
// upstream's strip and its THROUGH marks, at month zoom (the worst case).
func BenchmarkStripFrame(b *testing.B) {
	g, tr := benchTrack(b)
	mid := g.WindowAt(benchUnits / 2)
	a := NewAxis(g, ZoomMonth, mid.Since, 160).Center(mid.Since)
	st := colour(Unicode)
	c := Contract{Level: LevelThrough, Window: mid}
	b.ReportAllocs()
	for b.Loop() {
		_ = Ruler(a, st)
		_ = Strip(a, tr, mid, st)
		_ = CursorLine(a, mid, "2057-01-14T08:00Z applied", st)
		_ = Strip(a, tr, mid, st)
		_ = Marks(a, tr, c, st)
	}
}

// BenchmarkStripNewTrack is the one-off cost when the data changes:
// preparing a million units that arrive sorted.
func BenchmarkStripNewTrack(b *testing.B) {
	benchTrack(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = NewTrack(benchData.segs, state.Window{})
	}
}
