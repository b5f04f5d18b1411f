package state

import (
	"strings"
	"testing"
	"time"
)

func mustLoad(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestLoadLocation(t *testing.T) {
	for _, name := range []string{"", "UTC"} {
		if loc, err := LoadLocation(name); err != nil || loc != time.UTC {
			t.Errorf("LoadLocation(%q) = %v, %v; want time.UTC", name, loc, err)
		}
	}
	for _, name := range []string{"Europe/Stockholm", "America/New_York", "Pacific/Apia", "Asia/Kolkata"} {
		loc, err := LoadLocation(name)
		if err != nil || loc.String() != name {
			t.Errorf("LoadLocation(%q) = %v, %v", name, loc, err)
		}
	}
	for _, name := range []string{"Europe/Stokholm", "Mars/Olympus", "../etc/passwd", "/etc/localtime", "utc ", "Local"} {
		_, err := LoadLocation(name)
		if err == nil || !strings.Contains(err.Error(), `"`+name+`"`) {
			t.Errorf("LoadLocation(%q) error = %v, want one naming the zone", name, err)
		}
	}
}
