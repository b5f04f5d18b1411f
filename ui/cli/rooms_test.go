package cli_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFrontEndsAreRoomsOfTheCompositionRoot keeps ui/ the tree the README
// draws: the terminal program (ui/tui), the SSH server (ui/serve) and the
// metrics exporter (ui/metrics) are rooms that know nothing of each other
// or of the command line, and ui/cli is the one package that brings them
// together with a store and an engine. A room reaching into another (serve
// building the program itself, the program opening a store) would show up
// here as an import.
func TestFrontEndsAreRoomsOfTheCompositionRoot(t *testing.T) {
	const mod = "github.com/bollhav/bollhav/"
	forbidden := map[string][]string{
		"ui/tui":           {"ui/cli", "ui/serve", "ui/metrics", "state/stores", "state/sqlite", "state/postgres"},
		"ui/tui/timeline":  {"engine", "ui/tui", "ui/cli", "ui/serve", "ui/metrics"},
		"ui/tui/graphview": {"engine", "state", "ui/tui", "ui/cli", "ui/serve", "ui/metrics"},
		"ui/serve":         {"ui/tui", "ui/cli", "ui/metrics", "state/stores", "state/sqlite", "state/postgres"},
		"ui/metrics":       {"ui/tui", "ui/cli", "ui/serve", "state/stores", "state/sqlite", "state/postgres"},
		"ui/danger":        {"engine", "ui/tui", "ui/cli", "ui/serve", "ui/metrics"},
	}
	for pkg, banned := range forbidden {
		out, err := exec.Command("go", "list", "-deps", mod+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range banned {
				if dep == mod+b {
					t.Errorf("%s imports %s", pkg, b)
				}
			}
		}
	}
}
