package state

import (
	"fmt"
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
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: want an IANA name such as Europe/Stockholm or America/New_York, or UTC", name)
	}
	return loc, nil
}
