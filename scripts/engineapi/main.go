//go:build ignore

// Command engineapi rewrites code written against the engine's old struct
// API (an engine.Engine literal with exported fields, fields read and set
// directly) to engine.New and the engine's accessors, and lists what it
// cannot rewrite by itself (a field set after construction, an engine
// copied by value). It type-checks each package with its tests, so a
// selector is rewritten only when it is a field of engine.Engine.
//
//	go run scripts/engineapi/main.go [-w] [packages]   (default ./...)
//
// Without -w it only prints what it would do. Rewrites:
//
//   - &engine.Engine{Store: s, Spec: sp, K: v…} and Engine{…} become
//     engine.New(s, sp, engine.Options{K: v…}) (New(…) inside package
//     engine); a missing Store or Spec is nil.
//   - Inside package engine, e.Store becomes e.store, e.Spec e.spec and
//     any other field e.opts.Field.
//   - Elsewhere a read of e.Spec, e.Env, e.ReadOnly, e.Actor or e.SpecDir
//     becomes a call of the accessor of that name, and e.Now (a clock, not
//     called) becomes e.Clock; anything else is reported.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const enginePath = "github.com/bollhav/bollhav/engine"

var oldFields = map[string]bool{
	"Store": true, "Spec": true, "SpecDir": true, "Env": true, "Now": true, "ReadOnly": true,
	"Actor": true, "Lease": true, "LeaseClock": true, "Log": true, "Warehouses": true,
}

// accessors are the old fields a front end reads through a method of the
// same name.
var accessors = map[string]bool{"Spec": true, "Env": true, "ReadOnly": true, "Actor": true, "SpecDir": true}

type pkgInfo struct {
	ImportPath   string
	Dir          string
	Name         string
	Export       string
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
	Standard     bool
	DepOnly      bool
}

type edit struct {
	start, end int
	// text renders the replacement from the source it replaces, with the
	// edits nested inside it applied.
	text func(render func(start, end int) string) string
}

type fileEdits struct {
	path  string
	src   []byte
	edits []edit
}

func main() {
	write := flag.Bool("w", false, "write the files")
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	pkgs := goList(append([]string{"-deps", "-export", "-e"}, patterns...))
	exports := map[string]string{}
	var targets []pkgInfo
	for _, p := range pkgs {
		if p.Export != "" {
			exports[p.ImportPath] = p.Export
		}
		if !p.DepOnly && !p.Standard {
			targets = append(targets, p)
		}
	}
	files := map[string]*fileEdits{}
	for _, p := range targets {
		fset := token.NewFileSet()
		internal := check(fset, p, append(append([]string{}, p.GoFiles...), p.TestGoFiles...), exports, nil, files)
		if len(p.XTestGoFiles) > 0 {
			check(fset, p, p.XTestGoFiles, exports, internal, files)
		}
	}
	var paths []string
	for path := range files {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		f := files[path]
		if len(f.edits) == 0 {
			continue
		}
		out := apply(f.src, f.edits)
		formatted, err := format.Source(out)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: gofmt: %v\n", path, err)
			formatted = out
		}
		if *write {
			if err := os.WriteFile(path, formatted, 0o644); err != nil {
				fatal(err)
			}
			fmt.Printf("rewrote %s (%d edits)\n", path, len(f.edits))
		} else {
			fmt.Printf("would rewrite %s (%d edits)\n", path, len(f.edits))
		}
	}
}

func goList(args []string) []pkgInfo {
	cmd := exec.Command("go", append([]string{"list", "-json"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		fatal(fmt.Errorf("go list: %w", err))
	}
	var pkgs []pkgInfo
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkgInfo
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// check type-checks one variant of p (its files with its internal tests,
// or its external tests importing the first) tolerating errors, and adds
// the edits and reports for it. It returns the checked package.
func check(fset *token.FileSet, p pkgInfo, names []string, exports map[string]string, internal *types.Package, files map[string]*fileEdits) *types.Package {
	var parsed []*ast.File
	for _, n := range names {
		path := filepath.Join(p.Dir, n)
		src, err := os.ReadFile(path)
		if err != nil {
			fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			fatal(err)
		}
		parsed = append(parsed, f)
		if files[path] == nil {
			files[path] = &fileEdits{path: path, src: src}
		}
	}
	gc := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		e, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(e)
	})
	imp := importerFunc(func(path string) (*types.Package, error) {
		if internal != nil && path == p.ImportPath {
			return internal, nil
		}
		return gc.Import(path)
	})
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		Uses:       map[*ast.Ident]types.Object{},
	}
	pkgPath := p.ImportPath
	if internal != nil {
		pkgPath += "_test"
	}
	conf := types.Config{Importer: imp, Error: func(error) {}}
	tp, _ := conf.Check(pkgPath, fset, parsed, info)
	inEngine := internal == nil && p.ImportPath == enginePath
	for _, f := range parsed {
		fe := files[fset.Position(f.Pos()).Filename]
		visit(fset, f, fe, info, inEngine)
	}
	return tp
}

type importerFunc func(string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func isEngine(t types.Type) bool {
	if ptr, ok := t.(*types.Pointer); ok {
		t = ptr.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == enginePath && n.Obj().Name() == "Engine"
}

func visit(fset *token.FileSet, f *ast.File, fe *fileEdits, info *types.Info, inEngine bool) {
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	report := func(n ast.Node, format string, args ...any) {
		fmt.Printf("%s: %s\n", fset.Position(n.Pos()), fmt.Sprintf(format, args...))
	}
	// parents lets a selector see whether it is assigned to or called.
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		parent := ast.Node(nil)
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		stack = append(stack, n)
		switch x := n.(type) {
		case *ast.CompositeLit:
			tv, ok := info.Types[x]
			if !ok || !isEngine(tv.Type) || newForm(x) {
				return true
			}
			start, end := off(x.Pos()), off(x.End())
			if u, ok := parent.(*ast.UnaryExpr); ok && u.Op == token.AND {
				start = off(u.Pos())
				// (&engine.Engine{…}).Method(): New's call needs no parentheses.
				if len(stack) > 2 {
					if p, ok := stack[len(stack)-3].(*ast.ParenExpr); ok {
						start, end = off(p.Pos()), off(p.End())
					}
				}
			}
			newName, optsName := "engine.New", "engine.Options"
			if inEngine {
				newName, optsName = "New", "Options"
			}
			lit := x
			fe.edits = append(fe.edits, edit{start: start, end: end, text: func(render func(int, int) string) string {
				store, sp := "nil", "nil"
				var opts []string
				for _, el := range lit.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok {
						report(lit, "unkeyed Engine literal: rewrite by hand")
						return render(start, end)
					}
					key := kv.Key.(*ast.Ident).Name
					val := render(off(kv.Value.Pos()), off(kv.Value.End()))
					switch key {
					case "Store":
						store = val
					case "Spec":
						sp = val
					default:
						opts = append(opts, render(off(kv.Pos()), off(kv.End())))
					}
				}
				return fmt.Sprintf("%s(%s, %s, %s{%s})", newName, store, sp, optsName, strings.Join(opts, ", "))
			}})
		case *ast.StarExpr:
			if tv, ok := info.Types[x.X]; ok && isEngine(tv.Type) && tv.IsValue() {
				if _, isPtr := tv.Type.(*types.Pointer); isPtr {
					report(x, "engine copied by value: use As or InEnv")
				}
			}
		case *ast.SelectorExpr:
			name := x.Sel.Name
			if !oldFields[name] {
				return true
			}
			tv, ok := info.Types[x.X]
			if !ok || !isEngine(tv.Type) {
				return true
			}
			call, isCall := parent.(*ast.CallExpr)
			called := isCall && call.Fun == x
			if sel, ok := info.Selections[x]; ok && sel.Kind() != types.FieldVal && called {
				return true // already an accessor's call
			}
			if _, isKey := parent.(*ast.KeyValueExpr); isKey && parent.(*ast.KeyValueExpr).Key == x {
				return true
			}
			start, end := off(x.Sel.Pos()), off(x.Sel.End())
			if inEngine {
				repl := "opts." + name
				switch name {
				case "Store":
					repl = "store"
				case "Spec":
					repl = "spec"
				}
				fe.edits = append(fe.edits, edit{start: start, end: end, text: func(func(int, int) string) string { return repl }})
				return true
			}
			assigned := false
			if as, ok := parent.(*ast.AssignStmt); ok {
				for _, l := range as.Lhs {
					if l == x {
						assigned = true
					}
				}
			}
			if be, ok := parent.(*ast.BinaryExpr); ok && name == "Now" {
				report(be, "engine field Now compared: rewrite by hand")
				return true
			}
			switch {
			case assigned:
				report(x, "engine field %s set after construction: rewrite by hand", name)
			case accessors[name]:
				fe.edits = append(fe.edits, edit{start: start, end: end, text: func(func(int, int) string) string { return name + "()" }})
			case name == "Now" && !called:
				fe.edits = append(fe.edits, edit{start: start, end: end, text: func(func(int, int) string) string { return "Clock" }})
			default:
				report(x, "engine field %s read: rewrite by hand", name)
			}
		}
		return true
	})
}

// newForm reports whether lit is already the new struct's literal (New's
// own, inside package engine), which is left alone.
func newForm(lit *ast.CompositeLit) bool {
	for _, el := range lit.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			if id, ok := kv.Key.(*ast.Ident); ok && !oldFields[id.Name] {
				return true
			}
		}
	}
	return false
}

// apply applies edits to src; an edit inside another renders as part of
// the outer one's text.
func apply(src []byte, edits []edit) []byte {
	sort.Slice(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start < edits[j].start
		}
		return edits[i].end > edits[j].end
	})
	var render func(start, end int, inner []edit) string
	render = func(start, end int, inner []edit) string {
		var b strings.Builder
		pos := start
		for i := 0; i < len(inner); {
			e := inner[i]
			j := i + 1
			for j < len(inner) && inner[j].start < e.end {
				j++
			}
			nested := inner[i+1 : j]
			b.Write(src[pos:e.start])
			b.WriteString(e.text(func(s, t int) string {
				var in []edit
				for _, n := range nested {
					if n.start >= s && n.end <= t {
						in = append(in, n)
					}
				}
				return render(s, t, in)
			}))
			pos = e.end
			i = j
		}
		b.Write(src[pos:end])
		return b.String()
	}
	return []byte(render(0, len(src), dedupe(edits)))
}

// dedupe drops edits recorded twice (a file checked in two variants).
func dedupe(edits []edit) []edit {
	var out []edit
	for i, e := range edits {
		if i > 0 && e.start == edits[i-1].start && e.end == edits[i-1].end {
			continue
		}
		out = append(out, e)
	}
	return out
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "engineapi:", err)
	os.Exit(1)
}
