package spec

import (
	"math"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Reading typed values out of the AST: scalars as the spec's fields want
// them, and free-form values (extra, hardcoded rows) as plain Go values.

// scalarText returns a scalar's text: a string's value, a block literal's
// content, or a number's or boolean's text as written. Collections are not
// scalars.
func scalarText(n ast.Node) (string, bool) {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		if v.Value == nil {
			return "", true
		}
		return v.Value.Value, true
	case *ast.NullNode:
		return "", true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return n.GetToken().Value, true
	}
	return "", false
}

// describe names a node's kind for messages.
func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode:
		return "null"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode:
		return "a number"
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	}
	return "a " + strings.ToLower(n.Type().String())
}

// str reads a string field. Null and absent fields return ok=false without
// an error; a collection is an error.
func (d *decoder) str(f *field) (string, bool) {
	if f == nil || f.val == nil || isNull(f.val) {
		return "", false
	}
	s, ok := scalarText(f.val)
	if !ok {
		d.errAt(f.valPos, "%s must be a string, got %s", f.key, describe(f.val))
	}
	return s, ok
}

// nonEmptyStr reads a string field that, when present, must not be blank.
func (d *decoder) nonEmptyStr(f *field) (string, bool) {
	s, ok := d.str(f)
	if ok && strings.TrimSpace(s) == "" {
		d.errAt(f.valPos, "%s is empty", f.key)
		return "", false
	}
	return s, ok
}

// eachItem reads f as a list that must not be empty (empty is an error at
// the value) and calls fn with each item's index, its node and the node it
// resolves to; an item that resolves to nothing was reported already and
// is skipped. It reports whether f was such a list.
func (d *decoder) eachItem(f *field, empty string, fn func(i int, item, r ast.Node)) bool {
	items, ok := d.list(f)
	if !ok {
		return false
	}
	if len(items) == 0 {
		d.errAt(f.valPos, "%s", empty)
		return false
	}
	for i, item := range items {
		if r := d.resolve(item); r != nil {
			fn(i, item, r)
		}
	}
	return true
}

// parsedStr reads f, when present, as a string and parses it; a parse
// error is reported at the value as parse words it. ok is false unless a
// value parsed.
func parsedStr[T any](d *decoder, f *field, parse func(string) (T, error)) (v T, ok bool) {
	s, ok := d.str(f)
	if !ok {
		return v, false
	}
	v, err := parse(s)
	if err != nil {
		d.errAt(f.valPos, "%v", err)
		return v, false
	}
	return v, true
}

// word is one of the words a field takes, and the value it stands for.
type word[T any] struct {
	text  string
	value T
}

// pickWord reads f, when present, as one of words in any case, into *dst.
// A string that is none of them is an error at the value, "unknown WHAT
// "x": want a or b", and the one case that returns false: an absent or
// null field leaves *dst alone, and one that is not a string is str's
// error.
func pickWord[T any](d *decoder, f *field, what string, dst *T, words []word[T]) bool {
	s, ok := d.str(f)
	if !ok {
		return true
	}
	texts := make([]string, len(words))
	for i, w := range words {
		if strings.ToLower(s) == w.text {
			*dst = w.value
			return true
		}
		texts[i] = w.text
	}
	d.errAt(f.valPos, "unknown %s %q: want %s", what, s, strings.Join(texts, " or "))
	return false
}

// boolean reads a true/false field.
func (d *decoder) boolean(f *field) (v, ok bool) {
	if f == nil || f.val == nil || isNull(f.val) {
		return false, false
	}
	b, isBool := f.val.(*ast.BoolNode)
	if !isBool {
		d.errAt(f.valPos, "%s must be true or false, got %s", f.key, describeValue(f.val))
		return false, false
	}
	return b.Value, true
}

// count reads a whole number field that must be at least min.
func (d *decoder) count(f *field, min int) (int, bool) {
	if f == nil || f.val == nil || isNull(f.val) {
		return 0, false
	}
	n, ok := intValue(f.val)
	if !ok {
		d.errAt(f.valPos, "%s must be a whole number, got %s", f.key, describeValue(f.val))
		return 0, false
	}
	if n < int64(min) {
		d.errAt(f.valPos, "%s must be at least %d, got %d", f.key, min, n)
		return 0, false
	}
	if n > math.MaxInt32 {
		d.errAt(f.valPos, "%s is too large (%d)", f.key, n)
		return 0, false
	}
	return int(n), true
}

// intValue returns an integer node's value when it fits in an int64.
func intValue(n ast.Node) (int64, bool) {
	in, ok := n.(*ast.IntegerNode)
	if !ok {
		return 0, false
	}
	switch v := in.Value.(type) {
	case int64:
		return v, true
	case uint64:
		if v <= math.MaxInt64 {
			return int64(v), true
		}
	}
	return 0, false
}

// describeValue names a node for messages, quoting a scalar's text.
func describeValue(n ast.Node) string {
	if s, ok := scalarText(n); ok && !isNull(n) {
		return strconv.Quote(s)
	}
	return describe(n)
}

// list returns a list field's items (resolved). A null field is an empty
// list; a non-list is an error.
func (d *decoder) list(f *field) ([]ast.Node, bool) {
	if f == nil || f.val == nil {
		return nil, false
	}
	if isNull(f.val) {
		return nil, true
	}
	seq, ok := f.val.(*ast.SequenceNode)
	if !ok {
		d.errAt(f.valPos, "%s must be a list, got %s", f.key, describe(f.val))
		return nil, false
	}
	return seq.Values, true
}

// value converts free-form YAML (an extra bag, hardcoded rows) to plain Go
// values: string, int64, float64, bool, nil, []any and map[string]any — the
// shapes encoding/json writes, since BOLLHAV_SOURCES hands them to commands as
// JSON. Non-finite floats cannot be written as JSON and are refused.
func (d *decoder) value(n ast.Node, depth int) (any, bool) {
	r := d.resolve(n)
	if r == nil {
		return nil, false
	}
	if depth > maxNesting {
		d.errorf(n, "value nested too deeply")
		return nil, false
	}
	switch v := r.(type) {
	case *ast.NullNode:
		return nil, true
	case *ast.BoolNode:
		return v.Value, true
	case *ast.IntegerNode:
		if i, ok := intValue(v); ok {
			return i, true
		}
		if u, ok := v.Value.(uint64); ok {
			return u, true
		}
		d.errorf(n, "number %s is out of range", v.GetToken().Value)
		return nil, false
	case *ast.FloatNode:
		if math.IsInf(v.Value, 0) || math.IsNaN(v.Value) {
			d.errorf(n, "number %s is out of range", v.GetToken().Value)
			return nil, false
		}
		return v.Value, true
	case *ast.InfinityNode, *ast.NanNode:
		d.errorf(n, "%s cannot be represented in JSON; quote it to keep it as a string", v.GetToken().Value)
		return nil, false
	case *ast.StringNode, *ast.LiteralNode:
		s, _ := scalarText(v)
		return s, true
	case *ast.SequenceNode:
		out := make([]any, 0, len(v.Values))
		ok := true
		for _, item := range v.Values {
			x, good := d.value(item, depth+1)
			ok = ok && good
			out = append(out, x)
		}
		return out, ok
	case *ast.MappingNode, *ast.MappingValueNode:
		return d.objectValue(v, depth, nil)
	}
	d.errorf(n, "unsupported YAML value (%s)", describe(r))
	return nil, false
}

// objectValue converts a free-form mapping; keys are taken as text. onEntry,
// when set, sees each entry with its positions, for callers that constrain
// keys or values.
func (d *decoder) objectValue(n ast.Node, depth int, onEntry func(key string, keyPos, valPos Position, v any)) (map[string]any, bool) {
	entries := mappingEntries(n)
	out := make(map[string]any, len(entries))
	seen := map[string]Position{}
	ok := true
	for _, e := range entries {
		if _, merge := e.Key.(*ast.MergeKeyNode); merge {
			d.errorf(e.Key, "merge keys (<<) are not supported inside free-form values")
			ok = false
			continue
		}
		key, good := d.keyText(e.Key)
		if !good {
			ok = false
			continue
		}
		kp := d.pos(e.Key)
		if prev, dup := seen[key]; dup {
			d.errAt(kp, "duplicate key %q (first set at %d:%d)", key, prev.Line, prev.Column)
			ok = false
			continue
		}
		seen[key] = kp
		x, good := d.value(e.Value, depth+1)
		ok = ok && good
		out[key] = x
		if good && onEntry != nil {
			onEntry(key, kp, d.pos(e.Value), x)
		}
	}
	return out, ok
}
