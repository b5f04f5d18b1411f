package spec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/bollhav/bollhav/state"
)

// decoder walks one spec's AST. It collects every error instead of stopping
// at the first, tagging each with the model and source being decoded.
type decoder struct {
	file    string
	errs    Errors
	anchors map[string][]*ast.AnchorNode
	visits  int
	// model and source name the definition being decoded, for error context.
	model, source string
}

// pos is where n starts. Every node the parser builds has a token; nil is
// only a defence.
func (d *decoder) pos(n ast.Node) Position {
	if n == nil {
		return Position{File: d.file}
	}
	if doc, ok := n.(*ast.DocumentNode); ok {
		if doc.Body == nil { // DocumentNode.GetToken dereferences Body
			return Position{File: d.file, Line: 1, Column: 1}
		}
		n = doc.Body
	}
	// A block mapping's token is the colon of its first entry; users think
	// of a mapping as starting at its first key.
	switch v := n.(type) {
	case *ast.MappingNode:
		if tk := v.GetToken(); (tk == nil || tk.Type != token.MappingStartType) && len(v.Values) > 0 && v.Values[0].Key != nil {
			return d.pos(v.Values[0].Key)
		}
	case *ast.MappingValueNode:
		if v.Key != nil {
			return d.pos(v.Key)
		}
	}
	return tokenPos(d.file, n.GetToken())
}

// errAt records a problem at p in the current model/source context.
func (d *decoder) errAt(p Position, format string, args ...any) {
	d.errs = append(d.errs, &Error{Pos: p, Model: d.model, Source: d.source, Msg: fmt.Sprintf(format, args...)})
}

// errorf records a problem at node n.
func (d *decoder) errorf(n ast.Node, format string, args ...any) {
	d.errAt(d.pos(n), format, args...)
}

// collectAnchors indexes every anchor under n by name, in document order, so
// an alias can be resolved to the latest anchor of its name before it.
func (d *decoder) collectAnchors(n ast.Node, depth int) {
	if n == nil || depth > 8*maxNesting {
		return
	}
	switch v := n.(type) {
	case *ast.AnchorNode:
		if v.Name != nil && v.Name.GetToken() != nil {
			name := v.Name.GetToken().Value
			d.anchors[name] = append(d.anchors[name], v)
		}
		d.collectAnchors(v.Value, depth+1)
	case *ast.MappingNode:
		for _, e := range v.Values {
			d.collectAnchors(e, depth+1)
		}
	case *ast.MappingValueNode:
		d.collectAnchors(v.Key, depth+1)
		d.collectAnchors(v.Value, depth+1)
	case *ast.SequenceNode:
		for _, e := range v.Values {
			d.collectAnchors(e, depth+1)
		}
	case *ast.TagNode:
		d.collectAnchors(v.Value, depth+1)
	case *ast.DocumentNode:
		d.collectAnchors(v.Body, depth+1)
	}
}

// resolve looks through anchors and aliases to the node that holds the value.
// It returns nil after reporting an error for an unknown alias, a tag, or a
// load that has visited too many nodes.
func (d *decoder) resolve(n ast.Node) ast.Node {
	for hops := 0; ; hops++ {
		d.visits++
		if d.visits == maxVisits {
			d.errorf(n, "the spec expands to more than %d values through aliases; is an anchor nested in its own alias?", maxVisits)
		}
		if d.visits >= maxVisits {
			return nil
		}
		if hops > maxNesting {
			d.errorf(n, "aliases nested too deeply")
			return nil
		}
		switch v := n.(type) {
		case nil:
			// The parser gives every value a node, an empty one too; a
			// missing node must still never read as a valid absent field.
			d.errAt(Position{File: d.file}, "YAML value missing")
			return nil
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			target := d.anchorFor(v)
			if target == nil {
				d.errorf(v, "alias %s names no anchor defined before it", printable("*"+aliasName(v)))
				return nil
			}
			n = target.Value
		case *ast.TagNode:
			d.errorf(v, "YAML tags such as %s are not supported in a spec; remove the tag (quote a value to keep it a string)", printable(v.Start.Value))
			return nil
		case *ast.DocumentNode:
			n = v.Body
		default:
			return n
		}
	}
}

func aliasName(a *ast.AliasNode) string {
	if a.Value == nil || a.Value.GetToken() == nil {
		return ""
	}
	return a.Value.GetToken().Value
}

// anchorFor finds the anchor an alias refers to: the last one of its name
// that starts before the alias.
func (d *decoder) anchorFor(a *ast.AliasNode) *ast.AnchorNode {
	at := a.GetToken().Position
	var found *ast.AnchorNode
	for _, c := range d.anchors[aliasName(a)] {
		if before(c.GetToken().Position, at) {
			found = c
		}
	}
	return found
}

// before orders positions by line and column rather than byte offset: a
// chunked parse (yaml_chunks.go) keeps every line and column of the file
// but not its offsets.
func before(a, b *token.Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
}

// isNull reports whether a resolved node is YAML null ("~", "null" or an
// empty value); optional fields treat null as absent.
func isNull(n ast.Node) bool {
	_, ok := n.(*ast.NullNode)
	return ok
}

// field is one key of a mapping with its resolved value.
type field struct {
	key    string
	keyPos Position
	val    ast.Node // resolved; nil when resolving failed (already reported)
	valPos Position
}

// fields is a decoded mapping: its keys in order, merge keys ("<<") applied.
type fields struct {
	list []*field
	by   map[string]*field
	// guessed holds the allowed keys that an unknown key of the mapping
	// was taken for ("intervall" → interval).
	guessed map[string]bool
}

// meant reports whether an unknown key of the mapping was taken for one of
// keys. A decoder that finds such a key missing stays quiet: the unknown
// key's error already names the problem and the fix, and a second line
// saying the key is missing would send the reader looking for the wrong
// mistake.
func (fs *fields) meant(keys ...string) bool {
	if fs == nil {
		return false
	}
	for _, k := range keys {
		if fs.guessed[k] {
			return true
		}
	}
	return false
}

// get returns the field named key, or nil.
func (fs *fields) get(key string) *field {
	if fs == nil {
		return nil
	}
	return fs.by[key]
}

// exactlyOne returns the first of keys the mapping holds, for a block that
// takes exactly one of them (a run's executor, a source's type). Each
// further one is an error at its key, clash naming the first and it.
func (d *decoder) exactlyOne(fs *fields, keys []string, clash string) *field {
	var first *field
	for _, k := range keys {
		f := fs.get(k)
		if f == nil {
			continue
		}
		if first != nil {
			d.errAt(f.keyPos, clash, first.key, k)
			continue
		}
		first = f
	}
	return first
}

// present returns the field named key when it is set to something other than
// null, or nil.
func (fs *fields) present(key string) *field {
	f := fs.get(key)
	if f == nil || f.val == nil || isNull(f.val) {
		return nil
	}
	return f
}

// mapping decodes n as a mapping whose keys must be among allowed (what names
// the mapping in messages). Unknown and duplicate keys are reported at the
// key; the result holds the valid ones. It returns nil, after reporting, when
// n is not a mapping.
func (d *decoder) mapping(n ast.Node, what string, allowed ...string) *fields {
	r := d.resolve(n)
	if r == nil {
		return nil
	}
	if !isMapping(r) {
		d.errorf(r, "%s must be a mapping (key: value), got %s", what, describe(r))
		return nil
	}
	fs := &fields{by: map[string]*field{}}
	d.collectFields(r, what, allowed, fs, false, 0)
	return fs
}

func isMapping(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return true
	}
	return false
}

// mappingEntries are the entries of a mapping node (a one-entry mapping
// is a MappingValueNode of its own); none for any other node.
func mappingEntries(n ast.Node) []*ast.MappingValueNode {
	switch v := n.(type) {
	case *ast.MappingNode:
		return v.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{v}
	}
	return nil
}

// collectFields adds n's entries to fs. Merged entries (from "<<") never
// override a key the mapping sets itself, and never count as duplicates.
func (d *decoder) collectFields(n ast.Node, what string, allowed []string, fs *fields, merged bool, depth int) {
	entries := mappingEntries(n)
	var merges []*ast.MappingValueNode
	for _, e := range entries {
		if _, ok := e.Key.(*ast.MergeKeyNode); ok {
			merges = append(merges, e)
			continue
		}
		key, ok := d.keyText(e.Key)
		if !ok {
			continue
		}
		keyPos := d.pos(e.Key)
		if !slices.Contains(allowed, key) {
			d.errAt(keyPos, "unknown key %q in %s%s", key, what, suggest(key, allowed))
			if guess := closest(key, allowed); guess != "" {
				if fs.guessed == nil {
					fs.guessed = map[string]bool{}
				}
				fs.guessed[guess] = true
			}
			continue
		}
		if prev := fs.by[key]; prev != nil {
			if !merged {
				d.errAt(keyPos, "duplicate key %q in %s (first set at %d:%d)", key, what, prev.keyPos.Line, prev.keyPos.Column)
			}
			continue
		}
		val := d.resolve(e.Value)
		f := &field{key: key, keyPos: keyPos, val: val, valPos: d.pos(e.Value)}
		if val != nil {
			f.valPos = d.pos(val)
			if _, isAlias := e.Value.(*ast.AliasNode); isAlias {
				f.valPos = d.pos(e.Value) // point at the alias the user wrote here
			}
		}
		fs.list = append(fs.list, f)
		fs.by[key] = f
	}
	for _, e := range merges {
		if depth > maxNesting {
			d.errorf(e.Key, "merge keys nested too deeply")
			return
		}
		src := d.resolve(e.Value)
		switch v := src.(type) {
		case nil:
		case *ast.SequenceNode:
			for _, item := range v.Values {
				if m := d.resolve(item); m != nil && isMapping(m) {
					d.collectFields(m, what, allowed, fs, true, depth+1)
				} else if m != nil {
					d.errorf(item, "a merge key (<<) takes a mapping or a list of mappings, got %s", describe(m))
				}
			}
		default:
			if isMapping(v) {
				d.collectFields(v, what, allowed, fs, true, depth+1)
			} else {
				d.errorf(e.Value, "a merge key (<<) takes a mapping or a list of mappings, got %s", describe(v))
			}
		}
	}
}

// keyText returns a mapping key as text. Keys must be scalars.
func (d *decoder) keyText(k ast.Node) (string, bool) {
	if mk, ok := k.(*ast.MappingKeyNode); ok {
		d.errorf(mk, "complex keys (? key) are not supported in a spec")
		return "", false
	}
	r := d.resolve(k)
	if r == nil {
		return "", false
	}
	s, ok := scalarText(r)
	if !ok {
		d.errorf(k, "a key must be a plain name, got %s", describe(r))
	}
	return s, ok
}

// suggest proposes the allowed key closest to a misspelt one, or lists them
// all when none is close.
func suggest(key string, allowed []string) string {
	if best := closest(key, allowed); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return "; allowed: " + strings.Join(allowed, ", ")
}

// closest is the allowed key within two edits of key, or "".
func closest(key string, allowed []string) string {
	best, bestDist := "", 3
	for _, a := range allowed {
		if dist := state.EditDistance(strings.ToLower(key), a); dist < bestDist {
			best, bestDist = a, dist
		}
	}
	return best
}
