package engine_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSubPackagesDoNotImportTheEngine keeps the engine's sub-packages
// leaves: each may use graph, state and the sub-packages below it, never the
// engine itself or the UI, so the boundary a newcomer reads in the tree is
// one the compiler holds. A back door (a sub-package reaching up into the
// engine for an unexported helper) would show up here as an import.
func TestSubPackagesDoNotImportTheEngine(t *testing.T) {
	const mod = "github.com/bollhav/bollhav/"
	forbidden := map[string][]string{
		"engine/spec":     {"engine", "engine/source", "engine/executor", "engine/gate", "ui"},
		"engine/source":   {"engine", "engine/executor", "engine/gate", "ui"},
		"engine/executor": {"engine", "engine/gate", "ui"},
		"engine/gate":     {"engine", "engine/source", "engine/executor", "ui"},
		"graph":           {"engine", "state", "ui"},
		"state":           {"engine", "ui"},
	}
	for pkg, banned := range forbidden {
		out, err := exec.Command("go", "list", "-deps", mod+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, dep := range deps {
			for _, b := range banned {
				if dep == mod+b || strings.HasPrefix(dep, mod+b+"/") && b == "ui" {
					t.Errorf("%s imports %s", pkg, strings.TrimPrefix(dep, mod))
				}
			}
		}
	}
}
