package timeline_test

import (
	"fmt"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/tui/timeline"
)

// A daily model's view, 60 columns wide: the ruler, the model's strip with
// the cursor on 03-04, the pointer, then a gated hourly upstream's strip
// on the same axis and what ENCAPSULATE needs of it for 03-04. Each line
// is printed between bars to show its exact width.
func Example() {
	loc := time.UTC
	day, _ := state.NewGrid(time.Date(2026, 3, 1, 0, 0, 0, 0, loc), state.MustInterval("1d"), loc)
	hour, _ := state.NewGrid(day.Start, state.MustInterval("1h"), loc)

	// The model: five days applied, then one failed, one pending.
	var model []timeline.Segment
	for k, s := range []timeline.Status{"applied", "applied", "applied", "applied", "applied", "failed", "pending"} {
		model = append(model, timeline.Segment{Window: day.WindowAt(k), Status: s})
	}
	// The upstream: hourly for a week, with 03-04 09:00–15:00 not loaded.
	var up []timeline.Segment
	for k := range 7 * 24 {
		if k < 3*24+9 || k >= 3*24+15 {
			up = append(up, timeline.Segment{Window: hour.WindowAt(k), Status: timeline.Applied})
		}
	}
	rangeOf := func(days int) state.Window { return state.Window{Since: day.Start, Until: day.WindowAt(days).Since} }
	mt := timeline.NewTrack(model, rangeOf(9))
	ut := timeline.NewTrack(up, rangeOf(7))

	cursor := day.WindowAt(3) // 03-04
	a := timeline.NewAxis(day, timeline.ZoomGrain, day.Start, 60).Follow(cursor.Since, 2)
	var st timeline.Styles // plain: no colour, Unicode glyphs

	for _, l := range []string{
		timeline.Ruler(a, st),
		timeline.Strip(a, mt, cursor, st),
		timeline.CursorLine(a, cursor, "03-04 applied", st),
		timeline.Strip(a, ut, cursor, st),
		timeline.Marks(a, ut, timeline.Contract{Level: timeline.LevelEncapsulate, Window: cursor}, st),
	} {
		fmt.Println("|" + l + "|")
	}
	// Output:
	// | Mar 2  Mar 9  Mar 16 Mar 23 Mar 30 Apr 6  Apr 13 Apr 20    |
	// |█████✗░··                                                   |
	// |   ▲ 03-04 applied                                          |
	// |███·███                                                     |
	// |   ╳ ENCAPSULATE unmet · 18h/24h covered (75%)              |
}
