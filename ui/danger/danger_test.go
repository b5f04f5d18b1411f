package danger

import (
	"testing"

	"github.com/bollhav/bollhav/engine/spec"
)

// TestOnlyTorchIsTyped: of the actions the UI and the command line offer,
// a torch run alone is confirmed by typing.
func TestOnlyTorchIsTyped(t *testing.T) {
	for _, c := range []struct {
		what  string
		level Level
		typed bool
	}{
		{"run discover", Run(spec.Discover), false},
		{"run bulldozer", Run(spec.Bulldozer), false},
		{"run torch", Run(spec.Torch), true},
		{"mark", Mark, false},
	} {
		if got := c.level.Typed(); got != c.typed {
			t.Errorf("%s: typed %v, want %v", c.what, got, c.typed)
		}
	}
}
