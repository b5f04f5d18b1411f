package spec

import (
	"strings"
	"time"

	"github.com/bollhav/bollhav/state"
)

// chunkingKeys are the keys of a chunking block.
var chunkingKeys = []string{"interval", "start", "end", "flexibility", "timezone"}

// decodeChunking reads a chunking block; a temporal model's needs an interval
// and a start (a timeless model's is refused whole by checkModel). The grid is
// checked here: a month grain starting after the 28th, or a fixed model's end
// that is not a window boundary (its last window would be partial), is
// refused at its value. A flexible model's chunk is not its identity, so its
// end may fall anywhere.
func (d *decoder) decodeChunking(f *field, temporality Temporality) *Chunking {
	fs := d.mapping(f.val, "chunking", chunkingKeys...)
	if fs == nil {
		return nil
	}
	c := &Chunking{Location: time.UTC}
	if loc, ok := parsedStr(d, fs.present("timezone"), state.LoadLocation); ok {
		c.Location = loc
	}
	pickWord(d, fs.present("flexibility"), "flexibility", &c.Flexibility, []word[Flexibility]{{"fix", Fix}, {"flex", Flex}})
	iv, intervalOK := parsedStr(d, fs.present("interval"), state.ParseInterval)
	if intervalOK {
		c.Interval = iv
	}
	if fs.present("interval") == nil && temporality == Temporal && !fs.meant("interval") {
		d.errAt(f.keyPos, "chunking needs an interval, like 1h or 1d")
	}
	startField := fs.present("start")
	if startField == nil && temporality == Temporal && !fs.meant("start") {
		d.errAt(f.keyPos, "chunking needs a start: the since of the first window, like 2026-01-01T00:00:00Z")
	}
	startOK := false
	if startField != nil {
		if s, ok := d.str(startField); ok {
			t, err := parseTimeIn(s, c.Location)
			if err != nil {
				d.errAt(startField.valPos, "invalid start: %v", err)
			} else {
				c.Start, startOK = t, true
			}
		}
	}
	var grid state.Grid
	gridOK := false
	if intervalOK && startOK {
		g, err := state.NewGrid(c.Start, c.Interval, c.Location)
		if err != nil {
			d.errAt(startField.valPos, "%v", err)
		} else {
			grid, gridOK = g, true
		}
	}
	if v := fs.present("end"); v != nil {
		if s, ok := d.str(v); ok {
			t, err := parseTimeIn(s, c.Location)
			switch {
			case err != nil:
				d.errAt(v.valPos, "invalid end: %v", err)
			case startOK && !t.After(c.Start):
				d.errAt(v.valPos, "end %s is not after start %s: the contract range [start, end) would be empty", state.FormatTime(t), state.FormatTime(c.Start))
			case gridOK && c.Flexibility == Fix && !grid.OnGrid(t):
				w := grid.WindowContaining(t)
				d.errAt(v.valPos, "end %s is not a window boundary of the %s; the nearest are %s and %s", state.FormatTime(t), grid, state.FormatTime(w.Since), state.FormatTime(w.Until))
			default:
				c.End = &t
			}
		}
	}
	return c
}

// parseTimeIn reads a chunking bound. A timestamp with a zone or offset is
// that instant; a date or a date and time without one is a wall clock in the
// model's time zone, so that "start: 2026-01-01" in Europe/Stockholm means
// local midnight, where a person in that zone starts counting days.
func parseTimeIn(s string, loc *time.Location) (time.Time, error) {
	t, err := state.ParseTime(s)
	if err != nil {
		return time.Time{}, err
	}
	if _, zoned := time.Parse(time.RFC3339Nano, strings.TrimSpace(s)); zoned == nil || loc == nil || loc == time.UTC {
		return t, nil
	}
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc).UTC(), nil
}
