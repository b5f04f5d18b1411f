package spec

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrUndeclaredSource is returned by Ref for a name the model does not list
// in its upstream: bollhav only resolves inputs it knows about, so lineage
// and the reference cannot disagree.
var ErrUndeclaredSource = errors.New("not a declared source")

// ErrNotAddressable is returned by Ref for a source that has no table to
// select from: a file, an API, hardcoded data or the unknown-provenance
// sentinel.
var ErrNotAddressable = errors.New("not SQL-addressable")

// Target is the model's own table in env, quoted: a managed target always
// moves with the suffix ("warehouse_pr123"."orders").
func (m *Model) Target(env Env) string {
	return quoteParts(env.Schema(m.Schema), m.Table)
}

// Ref resolves a declared model source to a quoted identifier for a read
// query, per the design's three cases (docs/design.md, Dev environments):
//
//   - a gated source is a managed model, so it moves with env's suffix
//     ("warehouse_pr123"."orders") — unless it sets deactivate_for_dev and env
//     is suffixed, when it reads the shared prod table ("warehouse"."orders");
//     in prod every gated source reads prod;
//   - an ungated source is external and resolves literally, in every
//     environment, with its schema and catalog overrides applied.
//
// An undeclared name is ErrUndeclaredSource; a file, API, hardcoded or
// unknown-provenance source is ErrNotAddressable. Both errors say why.
func (m *Model) Ref(name string, env Env) (string, error) {
	src, ok := m.source(name)
	if !ok {
		if IsUnknownProvenance(name) {
			return "", fmt.Errorf("model %s: ref %q: %w: the unknown-provenance sentinel marks inputs nobody declared and has no location", m.Name, name, ErrNotAddressable)
		}
		return "", fmt.Errorf("model %s: ref %q: %w: list it under upstream (with a contract to gate on it, without to read it ungated)", m.Name, name, ErrUndeclaredSource)
	}
	switch src.Kind {
	case KindModel:
	case KindFile:
		return "", fmt.Errorf("model %s: ref %q: %w: a file source has no table to select FROM; read the file from your command (BOLLHAV_SOURCES carries its path)", m.Name, name, ErrNotAddressable)
	case KindAPI:
		return "", fmt.Errorf("model %s: ref %q: %w: an api source has no table to select FROM; call the API from your command (BOLLHAV_SOURCES carries its base_url)", m.Name, name, ErrNotAddressable)
	case KindHardcoded:
		return "", fmt.Errorf("model %s: ref %q: %w: hardcoded data has no stable table identifier; materialize it in your run, or use its sql inline", m.Name, name, ErrNotAddressable)
	default:
		return "", fmt.Errorf("model %s: ref %q: %w: the unknown-provenance sentinel marks inputs nobody declared and has no location", m.Name, name, ErrNotAddressable)
	}
	return quoteParts(m.modelSourceParts(src, env)...), nil
}

// modelSourceParts is where a model source lives in env, unquoted:
// catalog, schema and table, the empty ones dropped.
func (m *Model) modelSourceParts(src Source, env Env) []string {
	catalog, schema, table := src.location()
	if src.Gated() {
		schema = m.RegistrationEnv(src, env).Schema(schema)
	}
	return nonEmpty(catalog, schema, table)
}

// nonEmpty drops empty parts, so a source built in code with a bare table
// name never resolves to an empty quoted schema.
func nonEmpty(parts ...string) []string {
	return slices.DeleteFunc(parts, func(p string) bool { return p == "" })
}

// GateSkipped reports whether src's gate is assumed satisfied in env: a gated
// source marked deactivate_for_dev, in a suffixed run. Prod never skips, so
// the flag can be declared once and never flipped between environments.
func (m *Model) GateSkipped(src Source, env Env) bool {
	return src.Gated() && src.DeactivateForDev && env.Suffixed()
}

// RegistrationEnv is the environment whose registry and state the gate of src
// consults, and whose schema Ref reads: env itself for a gated source in a
// suffixed run (the dev copy), prod when the source is deactivated for dev or
// the run is unsuffixed.
func (m *Model) RegistrationEnv(src Source, env Env) Env {
	if m.GateSkipped(src, env) {
		return Env{}
	}
	return env
}

// source finds a declared source by exact name.
func (m *Model) source(name string) (Source, bool) {
	for _, s := range m.Upstream {
		if s.Name == name {
			return s, true
		}
	}
	return Source{}, false
}

// location splits a model source's name into catalog, schema and table, with
// the SourceModel's schema and catalog overrides applied: a name
// "catalog.schema.table" carries all three, "schema.table" no catalog.
func (s Source) location() (catalog, schema, table string) {
	parts := strings.Split(s.Name, ".")
	switch len(parts) {
	case 3:
		catalog, schema, table = parts[0], parts[1], parts[2]
	case 2:
		schema, table = parts[0], parts[1]
	default:
		table = s.Name
	}
	if s.Model != nil {
		if s.Model.Schema != "" {
			schema = s.Model.Schema
		}
		if s.Model.Catalog != "" {
			catalog = s.Model.Catalog
		}
	}
	return catalog, schema, table
}
