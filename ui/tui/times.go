package tui

import (
	"strings"
	"time"

	"github.com/bollhav/bollhav/state"
)

// viewerLocation is the zone local times are shown in: Options.Location,
// else the one TZ names (an SSH client may send it), else the process's.
func viewerLocation(o Options) *time.Location {
	if o.Location != nil {
		return o.Location
	}
	if tz := o.Getenv("TZ"); tz != "" {
		if loc, err := state.LoadLocation(strings.TrimPrefix(tz, ":")); err == nil {
			return loc
		}
	}
	return time.Local
}

// How time reads, one rule on every screen (docs/ui.md, Time): an age
// reads relative ("3h ago", an incident "for 6h") and a point in time
// absolute (a unit's window, a retry to come); t switches every time on
// screen between the two; absolute times are in the zone the header names
// — UTC, or under T the viewer's — windows included, so no row mixes two
// zones.

// timeMode is the time toggle's state.
type timeMode struct {
	// absolute shows instants as times, not ages (t).
	absolute bool
	// local shows windows and instants in the viewer's zone (T); UTC
	// otherwise.
	local bool
}

// zoneName names loc short: its abbreviation now ("CET"), or its IANA
// name when the abbreviation is only an offset ("+03").
func zoneName(loc *time.Location, at time.Time) string {
	abbr, _ := at.In(loc).Zone()
	if abbr == "" || strings.ContainsAny(abbr[:1], "+-") {
		if n := loc.String(); n != "" && n != "Local" {
			return n
		}
	}
	return abbr
}

// timesLabel is the header's word for the toggle: "ago·UTC",
// "abs·CET".
func (c *common) timesLabel() string {
	rel := "ago"
	if c.times.absolute {
		rel = "abs"
	}
	zone := "UTC"
	if c.times.local {
		zone = zoneName(c.loc, c.now())
	}
	return rel + "·" + zone
}

// instantLoc is where absolute instants are shown.
func (c *common) instantLoc() *time.Location {
	if c.times.local {
		return c.loc
	}
	return time.UTC
}

// when prints an instant as the toggle says: "3h ago" / "in 5m", or
// "2026-01-01 05:00Z" (UTC) / "2026-01-01 06:00 CET"; "-" when nil.
func (c *common) when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	if !c.times.absolute {
		return ageText(c.now(), t)
	}
	return absText(*t, c.instantLoc())
}

// instantWidth is the width of a column of instants as when prints them:
// "23h59m ago", "2026-01-01 05:00Z", "2026-01-01 06:00 CET".
func (c *common) instantWidth() int {
	switch {
	case !c.times.absolute:
		return 10
	case c.instantLoc() == time.UTC:
		return 17
	}
	return 16 + 1 + len(zoneName(c.loc, c.now()))
}

// whenAt is when for a time that is never nil (an attempt's).
func (c *common) whenAt(t time.Time) string { return c.when(&t) }

// absAt prints a time to come — a retry's — absolute in the toggle's
// zone: "at in 5m" would not read, and the why view adds how long until.
func (c *common) absAt(t time.Time) string { return absText(t, c.instantLoc()) }

// absText prints an instant to the minute in loc: "2026-01-01 05:00Z" in
// UTC (the CLI's), "2026-01-01 06:00 CET" elsewhere.
func absText(t time.Time, loc *time.Location) string { return zoned(t, loc, "2006-01-02 15:04") }

// zoned formats t by layout in loc and marks the zone: "Z" right after a
// UTC time ("14:05Z"), the zone's short name after a space elsewhere
// ("15:05 CET"): how every instant the UI prints says its zone.
func zoned(t time.Time, loc *time.Location, layout string) string {
	if loc == time.UTC {
		return t.UTC().Format(layout) + "Z"
	}
	t = t.In(loc)
	return t.Format(layout) + " " + zoneName(loc, t)
}

// clockText prints an instant's time of day to the second in the
// toggle's zone: "14:03:22Z", "15:03:22 CET" — the live indicator's last
// change.
func (c *common) clockText(t time.Time) string { return zoned(t, c.instantLoc(), "15:04:05") }

// clockShort prints an instant's time of day to the minute in the
// toggle's zone ("14:05Z", "15:05 CET"): a retry on an incident card.
func (c *common) clockShort(t time.Time) string { return zoned(t, c.instantLoc(), "15:04") }

// window prints a unit window in the zone the header names: UTC, bare
// ("2026-01-01 05:00–06:00", a whole day as its date), or under T the
// viewer's zone, named after it ("2026-01-01 06:00–07:00 CET"): a window
// is a point in time like any other, so it reads in the zone every other
// time on screen reads in, with no model's zone of its own.
func (c *common) window(w state.Window) string {
	loc := c.instantLoc()
	if loc == time.UTC || w.IsZero() {
		return windowText(w)
	}
	return windowTextIn(w, loc) + " " + zoneName(loc, w.Since)
}

// windowZone names the zone a table of windows is shown in when it is
// not UTC ("CET"), for its heading; empty otherwise.
func (c *common) windowZone() string {
	if loc := c.instantLoc(); loc != time.UTC {
		return zoneName(loc, c.now())
	}
	return ""
}

// windowBare is window without the zone's name, for a table whose
// heading names it (windowZone).
func (c *common) windowBare(w state.Window) string { return windowTextIn(w, c.instantLoc()) }

// windows is windowsText in the header's zone, the zone named once at the
// end when it is not UTC.
func (c *common) windows(ws []state.Window) string {
	loc := c.instantLoc()
	if loc == time.UTC || len(ws) == 0 {
		return windowsText(ws)
	}
	return windowsTextIn(ws, loc) + " " + zoneName(loc, ws[0].Since)
}
