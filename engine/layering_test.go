package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
		"engine/tick":     append([]string{"engine", "engine/spec", "engine/source", "engine/executor", "engine/gate", "ui/..."}, backends...),
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

// TestFrontEndsReadThroughTheEngine holds the design's rule that every read
// and action of a front end goes through the engine: no package under ui/
// but the composition root (ui/cli, which opens the store and hands it to
// the engine) imports a state backend (state/stores, state/sqlite,
// state/postgres) or calls a method of state.Store, directly or as a method
// value. A front end that read the store itself would see another
// environment than its engine's, or skip a rule the engine keeps. Test
// files are not checked: a test may build its fixture in the store.
//
// The packages are type-checked from their source against the export data
// `go list -export` gives for their dependencies, so a call is judged by
// the type of its receiver, not its spelling.
func TestFrontEndsReadThroughTheEngine(t *testing.T) {
	const mod = "github.com/bollhav/bollhav/"
	backends := []string{mod + "state/stores", mod + "state/sqlite", mod + "state/postgres"}
	// The front ends first, without ui/cli: their export data then never
	// needs the backends compiled (SQLite's driver is most of the build).
	list, err := exec.Command("go", "list", mod+"ui/...").Output()
	if err != nil {
		t.Fatalf("go list %sui/...: %v%s", mod, err, stderr(err))
	}
	var patterns []string
	for _, p := range strings.Fields(string(list)) {
		if p != mod+"ui/cli" && !strings.HasPrefix(p, mod+"ui/cli/") {
			patterns = append(patterns, p)
		}
	}
	args := append([]string{"list", "-deps", "-export", "-json=ImportPath,Export,Dir,GoFiles,Imports,DepOnly"}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -export of the front ends: %v%s", err, stderr(err))
	}
	type pkg struct {
		ImportPath, Export, Dir string
		GoFiles, Imports        []string
		DepOnly                 bool
	}
	var frontEnds []pkg
	exports := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly {
			frontEnds = append(frontEnds, p)
		}
	}
	if len(frontEnds) == 0 {
		t.Fatal("go list found no front-end package under ui/")
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	for _, p := range frontEnds {
		name := strings.TrimPrefix(p.ImportPath, mod)
		for _, i := range p.Imports {
			for _, b := range backends {
				if i == b {
					t.Errorf("%s imports %s: only the composition root (ui/cli) opens a store", name, strings.TrimPrefix(b, mod))
				}
			}
		}
		var files []*ast.File
		for _, f := range p.GoFiles {
			af, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, af)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
		tp, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info)
		if err != nil {
			t.Fatalf("type-checking %s: %v", name, err)
		}
		store := storeInterface(tp)
		if store == nil {
			continue // the package does not reach package state at all
		}
		for sel, s := range info.Selections {
			if s.Kind() == types.FieldVal {
				continue
			}
			if isStoreMethod(s, store) {
				pos := fset.Position(sel.Sel.Pos())
				t.Errorf("%s/%s:%d calls state.Store.%s: read through the engine (engine/reads.go)",
					name, filepath.Base(pos.Filename), pos.Line, sel.Sel.Name)
			}
		}
	}
}

// stderr is what a failed command said, to show with its error.
func stderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return "\n" + string(ee.Stderr)
	}
	return ""
}

// storeInterface finds state.Store among the packages tp imports, directly
// or not; nil when tp does not depend on package state.
func storeInterface(tp *types.Package) *types.Interface {
	seen := map[*types.Package]bool{}
	var find func(p *types.Package) *types.Interface
	find = func(p *types.Package) *types.Interface {
		if seen[p] {
			return nil
		}
		seen[p] = true
		if p.Path() == "github.com/bollhav/bollhav/state" {
			if o := p.Scope().Lookup("Store"); o != nil {
				return o.Type().Underlying().(*types.Interface)
			}
		}
		for _, i := range p.Imports() {
			if s := find(i); s != nil {
				return s
			}
		}
		return nil
	}
	return find(tp)
}

// isStoreMethod reports whether s selects a method of state.Store: on a
// state.Store value, or on any value whose type is a store (implements the
// interface) and has the method by the interface's name.
func isStoreMethod(s *types.Selection, store *types.Interface) bool {
	fn, ok := s.Obj().(*types.Func)
	if !ok {
		return false
	}
	for i := range store.NumMethods() {
		if store.Method(i) == fn {
			return true
		}
	}
	recv := s.Recv()
	if !types.Implements(recv, store) && !types.Implements(types.NewPointer(recv), store) {
		return false
	}
	for i := range store.NumMethods() {
		if store.Method(i).Name() == fn.Name() {
			return true
		}
	}
	return false
}
