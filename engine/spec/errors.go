package spec

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Error is one definition-time problem in a spec file. It carries the
// position of the offending key or value, and the model and source it belongs
// to, so the user can jump straight to it. Model and Source are empty when
// the problem is not inside one.
type Error struct {
	Pos    Position
	Model  string
	Source string
	Msg    string
}

// Error prints "file:line:col: model M, source S: message", the form editors
// and terminals turn into a link. Parts that are unknown are left out.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Pos.String())
	b.WriteString(": ")
	if e.Model != "" {
		b.WriteString("model " + e.Model)
		if e.Source != "" {
			b.WriteString(", source " + e.Source)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// String prints the position as "file:line:col", or less when the line or
// column is unknown (a problem with the file as a whole).
func (p Position) String() string {
	file := cmp.Or(p.File, "<spec>")
	switch {
	case p.Line <= 0:
		return file
	case p.Column <= 0:
		return fmt.Sprintf("%s:%d", file, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", file, p.Line, p.Column)
}

// Errors is every definition-time problem of one spec, sorted by
// position: a user fixing a spec sees all of them at once instead of one per
// attempt. Parse returns it as its error; inspect it with errors.As.
type Errors []*Error

// Error prints one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes each problem, so errors.As finds a *Error too.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sort orders problems by line and column; problems at the same place
// keep the order they were found in.
func (es Errors) sort() {
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Column, b.Pos.Column))
	})
}
