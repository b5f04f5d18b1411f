package spec

import (
	"strings"
	"testing"
)

func TestParseStateMode(t *testing.T) {
	for in, want := range map[string]StateMode{
		"":           Bulldozer,
		"discover":   Discover,
		"BULLDOZER":  Bulldozer,
		" Torch\n":   Torch,
		"DiScOvEr":   Discover,
		"bulldozer ": Bulldozer,
	} {
		got, err := ParseStateMode(in)
		if err != nil || got != want {
			t.Errorf("ParseStateMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"nuke", "bull dozer", "discovery"} {
		_, err := ParseStateMode(in)
		if err == nil {
			t.Errorf("ParseStateMode(%q) succeeded", in)
			continue
		}
		for _, name := range []string{in, "discover", "bulldozer", "torch"} {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("ParseStateMode(%q) error %q does not mention %q", in, err, name)
			}
		}
	}
}

func TestStateModeString(t *testing.T) {
	if got := StateMode("").String(); got != "bulldozer" {
		t.Errorf("zero StateMode prints %q, want bulldozer", got)
	}
	if got := Torch.String(); got != "torch" {
		t.Errorf("Torch prints %q", got)
	}
}
