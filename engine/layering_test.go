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
//
// No package of the engine imports a state backend (state/stores,
// state/sqlite, state/postgres): the composition root (ui/cli, main) opens
// the store and the warehouses and hands them to the engine, so the engine
// runs on whatever state.Store and warehouse opener it is given. A banned
// path ending in "/..." bans its whole subtree.
func TestSubPackagesDoNotImportTheEngine(t *testing.T) {
	const mod = "github.com/bollhav/bollhav/"
	backends := []string{"state/stores", "state/sqlite", "state/postgres"}
	forbidden := map[string][]string{
		"engine":          append([]string{"ui/..."}, backends...),
		"engine/spec":     append([]string{"engine", "engine/source", "engine/executor", "engine/gate", "ui/..."}, backends...),
		"engine/source":   append([]string{"engine", "engine/executor", "engine/gate", "ui/..."}, backends...),
		"engine/executor": append([]string{"engine", "engine/gate", "ui/..."}, backends...),
		"engine/gate":     append([]string{"engine", "engine/source", "engine/executor", "ui/..."}, backends...),
		"graph":           {"engine/...", "state/...", "ui/..."},
		"state":           {"engine/...", "ui/..."},
		"state/stores":    {"engine/...", "ui/..."},
	}
	for pkg, banned := range forbidden {
		out, err := exec.Command("go", "list", "-deps", mod+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, dep := range deps {
			for _, b := range banned {
				tree, isTree := strings.CutSuffix(b, "/...")
				if dep == mod+b || isTree && (dep == mod+tree || strings.HasPrefix(dep, mod+tree+"/")) {
					t.Errorf("%s imports %s", pkg, strings.TrimPrefix(dep, mod))
				}
			}
		}
	}
}
