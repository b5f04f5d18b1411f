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

// How time reads, one format per kind: a unit's window is absolute — a
// window is a place on the model's grid, not an age — and an instant (an
// applied_at, a run's start, an audit entry, a retry) is an age ("3h
// ago", "in 5m"), which is what a glance needs. t shows instants as
// absolute times instead; T moves both from UTC to local time: windows to
// their model's time zone (a Stockholm day reads as its date there),
// instants to the viewer's zone. The header says which is on.

// timeMode is the time toggle's state.
type timeMode struct {
	// absolute shows instants as times, not ages (t).
	absolute bool
	// local shows windows in their model's zone and instants in the
	// viewer's (T); UTC otherwise.
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

// modelLoc is the time zone of a model's grid, from the spec; UTC for a
// model the spec does not have (a UI opened on the store alone).
func (c *common) modelLoc(model string) *time.Location {
	if c.eng.Spec() != nil {
		if m := c.eng.Spec().Model(model); m != nil && m.Chunking.Location != nil {
			return m.Chunking.Location
		}
	}
	return time.UTC
}

// window prints a unit window of model as the toggle says: in UTC, or in
// the model's own zone, named after it when that is not UTC
// ("2026-01-02 CET").
func (c *common) window(model string, w state.Window) string {
	if !c.times.local || w.IsZero() {
		return windowText(w)
	}
	loc := c.modelLoc(model)
	if loc == time.UTC {
		return windowText(w)
	}
	return windowTextIn(w, loc) + " " + zoneName(loc, w.Since)
}

// windowZone names the zone a table of model's windows is shown in when
// it is not UTC ("CET"), for its heading; empty otherwise.
func (c *common) windowZone(model string) string {
	if !c.times.local {
		return ""
	}
	if loc := c.modelLoc(model); loc != time.UTC {
		return zoneName(loc, c.now())
	}
	return ""
}

// windowBare is window without the zone's name, for a table whose
// heading names it (windowZone).
func (c *common) windowBare(model string, w state.Window) string {
	if !c.times.local {
		return windowText(w)
	}
	return windowTextIn(w, c.modelLoc(model))
}

// windows is windowsText for model's windows, as the toggle says.
func (c *common) windows(model string, ws []state.Window) string {
	if !c.times.local || c.modelLoc(model) == time.UTC {
		return windowsText(ws)
	}
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = c.window(model, w)
	}
	return strings.Join(parts, ", ")
}
