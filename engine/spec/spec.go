package spec

import (
	"fmt"
	"io"
	"iter"
	"os"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
)

// MaxSize is the largest spec file bollhav reads. A real spec is a few
// hundred kilobytes; refusing a bigger one before parsing bounds the time and
// memory a mistaken path (a log, a dump) can cost.
const MaxSize = 10 << 20

// Spec is a loaded bollhav.yaml: every model, in file order, validated.
type Spec struct {
	// Path is the file the spec was read from, as given.
	Path   string
	Models []*Model
	// Defaults are the spec-wide settings (defaults:), already applied to
	// every model; kept so a reader can tell inherited from own.
	Defaults Defaults

	// byName indexes Models as loaded; Model falls back to a scan when
	// Models was built or changed by hand.
	byName map[string]*Model
}

// Model returns the model named name, or nil. Lookups are by exact name.
func (s *Spec) Model(name string) *Model {
	if s == nil {
		return nil
	}
	if m := s.byName[name]; m != nil && len(s.byName) == len(s.Models) {
		return m
	}
	for _, m := range s.Models {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Load reads and validates the spec file at path. A file over
// MaxSize is refused without reading it whole. Definition-time problems
// come back as Errors; a file that cannot be read as a plain error.
func Load(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read spec %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse validates the spec in data; file names it in positions. It
// returns every definition-time problem at once, as Errors sorted by
// position, and never panics, whatever data holds.
func Parse(file string, data []byte) (*Spec, error) {
	if len(data) > MaxSize {
		return nil, Errors{{Pos: Position{File: file}, Msg: fmt.Sprintf("spec is larger than %d MiB; is this the right file?", MaxSize>>20)}}
	}
	if p, ok := invalidUTF8(file, data); !ok {
		return nil, Errors{{Pos: p, Msg: "spec is not valid UTF-8; save it as UTF-8"}}
	}
	data = trimBOM(data)
	if sp, errs, took := parseInChunks(file, data); took && len(errs) == 0 {
		return sp, nil
	}
	// A spec with problems is told from the whole parse: the same
	// problems, but found the one way every message was written for.
	tree, perr := parseYAML(file, data)
	if perr != nil {
		return nil, Errors{perr}
	}
	sp, errs := decodeTree(file, tree, nil)
	if len(errs) > 0 {
		return nil, errs.finish()
	}
	return sp, nil
}

// decodeTree decodes a parsed spec, returning the spec or every problem
// found (unsorted). more, when not nil, yields the rest of the models:
// list after the entries tree holds, a part at a time (parseInChunks): each
// part's anchors are collected and its models decoded before the next is
// asked for, so a part's tree is not needed once the next one comes.
func decodeTree(file string, tree *ast.File, more iter.Seq[*ast.SequenceNode]) (*Spec, Errors) {
	d := &decoder{file: file, anchors: map[string][]*ast.AnchorNode{}}
	var body ast.Node
	for _, doc := range tree.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if _, directive := doc.Body.(*ast.DirectiveNode); directive {
			continue // %YAML 1.2 before the document
		}
		if body != nil {
			d.errorf(doc.Body, "a spec is one YAML document; this is a second one")
			continue
		}
		body = doc.Body
		d.collectAnchors(body, 0)
	}
	sp := &Spec{Path: file}
	if body == nil {
		d.errAt(Position{File: file, Line: 1, Column: 1}, "spec is empty: want a top-level models: list")
	} else {
		sp.Models, sp.Defaults = d.decodeSpec(body, more)
	}
	if len(d.errs) > 0 {
		return nil, d.errs
	}
	sp.byName = make(map[string]*Model, len(sp.Models))
	for _, m := range sp.Models {
		sp.byName[m.Name] = m
	}
	return sp, nil
}

// decodeSpec reads the top-level mapping and every model in it — those of
// more after those in body's list — then applies the rules that span
// models.
func (d *decoder) decodeSpec(body ast.Node, more iter.Seq[*ast.SequenceNode]) ([]*Model, Defaults) {
	var defaults Defaults
	top := d.mapping(body, "the spec", "models", "defaults")
	if top == nil {
		return nil, defaults
	}
	if f := top.present("defaults"); f != nil {
		defaults = d.decodeDefaults(f)
	}
	f := top.get("models")
	if f == nil {
		if !top.meant("models") {
			d.errorf(body, "spec has no models: list")
		}
		return nil, defaults
	}
	items, _ := d.list(f)
	sites := d.decodeModels(items)
	if more != nil {
		for part := range more {
			// At the depth the list stands in body: mapping, entry, list.
			d.collectAnchors(part, 2)
			sites = append(sites, d.decodeModels(part.Values)...)
		}
	}
	d.checkSpec(sites)
	models := make([]*Model, len(sites))
	for i, s := range sites {
		models[i] = s.m
		d.model, d.source = s.m.Name, ""
		s.m.Retry = d.mergeRetry(s.retry, defaults.Retry)
		applyDefaultConnection([]*Model{s.m}, defaults.Connection)
		if len(s.m.Upstream) == 0 {
			src := NewUnknownSource(s.m.Name)
			src.Pos = s.m.Pos
			s.m.Upstream = []Source{src}
		}
	}
	d.checkConnections(models)
	return models, defaults
}

// decodeDefaults reads the top-level defaults: mapping.
func (d *decoder) decodeDefaults(f *field) Defaults {
	var out Defaults
	fs := d.mapping(f.val, "defaults", "retry", "connection")
	if fs == nil {
		return out
	}
	if v := fs.present("connection"); v != nil {
		out.Connection = d.decodeConnection(v)
	}
	if v := fs.present("retry"); v != nil {
		if r, ok := d.decodeRetry(v); ok {
			out.Retry = &r
		}
	}
	return out
}

// invalidUTF8 finds the first byte that is not UTF-8 and where it is.
func invalidUTF8(file string, data []byte) (Position, bool) {
	if utf8.Valid(data) {
		return Position{}, true
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return Position{File: file, Line: line, Column: col}, false
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return Position{File: file}, false
}

// trimBOM drops a leading UTF-8 byte order mark, which some editors write.
func trimBOM(data []byte) []byte {
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return data[3:]
	}
	return data
}

// finish sorts the problems by position and drops exact repeats (an error in
// an anchor is found once per alias that uses it).
func (es Errors) finish() Errors {
	es.sort()
	type key struct {
		pos Position
		msg string
	}
	seen := make(map[key]bool, len(es))
	var out Errors
	for _, e := range es {
		if k := (key{e.Pos, e.Msg}); !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}
