package spec

import (
	"errors"
	"fmt"
	"strings"
	"text/template"
)

// IsDataRun reports whether m's run block is one the data executor runs.
func IsDataRun(m *Model) bool {
	return m.Run.Kind == RunSQL || m.Run.Kind == RunQuery || m.Run.Kind == RunView
}

// RenderSQL expands {{ this }} (the model's target in env) and
// {{ ref "name" }} (a declared source, see dataRef) in text, with quote
// giving the dialect's identifiers.
func RenderSQL(m *Model, env Env, text string, quote func(parts ...string) (string, error)) (string, error) {
	funcs := template.FuncMap{
		"this": func() (string, error) { return quote(env.Schema(m.Schema), m.Table) },
		"ref": func(name string) (string, error) {
			parts, err := m.dataRef(name, env)
			if err != nil {
				return "", err
			}
			return quote(parts...)
		},
	}
	t, err := template.New(m.Name).Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		return "", fmt.Errorf("model %s: sql template: %w", m.Name, printableError{err})
	}
	var b strings.Builder
	if err := t.Execute(&b, nil); err != nil {
		var te template.ExecError
		if errors.As(err, &te) && te.Err != nil {
			err = te.Err
		}
		return "", fmt.Errorf("model %s: sql template: %w", m.Name, printableError{err})
	}
	return b.String(), nil
}

// printableError is a template's error as text that cannot drive a
// terminal: text/template quotes the call it failed in ({{ ref "\x00" }})
// with the file's bytes as they are, so its message is escaped as printable
// escapes the YAML parser's. It unwraps to the template's error.
type printableError struct{ err error }

func (e printableError) Error() string { return printable(e.err.Error()) }
func (e printableError) Unwrap() error { return e.err }

// dataRef is what {{ ref }} resolves to in a sql, query or view model: a
// model source as Ref resolves it; a hardcoded or file source as the table
// the engine loads it into before the model runs (its name, literally — like
// any ungated source). This goes further than the design first did, where
// ref() on a file or hardcoded source was an error because such a source has
// no table to select FROM: automatic materialisation gives it one
// (docs/semantics.md, Executors and the models' data).
func (m *Model) dataRef(name string, env Env) ([]string, error) {
	src, ok := m.source(name)
	if ok && (src.Kind == KindHardcoded || src.Kind == KindFile) {
		return LoadedTable(src), nil
	}
	if _, err := m.Ref(name, env); err != nil {
		return nil, err
	}
	return m.modelSourceParts(src, env), nil
}

// LoadedTable is the table a hardcoded or file source is loaded into.
func LoadedTable(src Source) []string {
	if schema, table, ok := strings.Cut(src.Name, "."); ok {
		return []string{schema, table}
	}
	return []string{src.Name}
}
