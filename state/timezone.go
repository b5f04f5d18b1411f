package state

import (
	"fmt"
	"sync"
	"time"

	// The zone database is embedded so that a grid in Europe/Stockholm means
	// the same thing on a minimal container without /usr/share/zoneinfo as on
	// a laptop; it costs about 450 KB of binary.
	_ "time/tzdata"
)

// LoadLocation resolves the time zone a model's calendar is counted in. An
// empty name and "UTC" mean UTC. "Local" is refused: the machine's zone would
// make the same spec cut different windows on different hosts.
func LoadLocation(name string) (*time.Location, error) {
	switch name {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		return nil, fmt.Errorf("time zone %q is not allowed: it depends on the machine; name the zone, such as Europe/Stockholm, or use UTC", name)
	}
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: want an IANA name such as Europe/Stockholm or America/New_York, or UTC", name)
	}
	zones.Store(name, loc)
	return loc, nil
}

// zones keeps each zone LoadLocation resolved: time.LoadLocation reads and
// parses the zone's data on every call, and a report resolves the zone of
// every model, twice (at 10,000 models, 7 MB of copies of a few zones).
// A *time.Location is immutable once made, so one is shared.
var zones sync.Map // zone name → *time.Location
