package spec

import (
	"strings"
	"text/template"
)

// DataHome names where a model's data lives, for messages: its connection's
// variable, or the state store's database.
func (m *Model) DataHome() string {
	if m.Connection == nil {
		return "the state store's database"
	}
	return "$" + m.Connection.DSNEnvVar
}

// connectionKey is "" for the state store's database and the variable's
// name for a connection: two models are on one database when their keys
// are equal. Equal names are the only sameness known at load time.
func connectionKey(c *Connection) string {
	if c == nil {
		return ""
	}
	return c.DSNEnvVar
}

// applyDefaultConnection gives every model without a connection of its own
// the spec's default one.
func applyDefaultConnection(models []*Model, def *Connection) {
	if def == nil {
		return
	}
	for _, m := range models {
		if m.Connection == nil {
			c := *def
			m.Connection = &c
		}
	}
}

// checkConnections refuses a sql, query or view model whose templates ref
// a model that lives on another database: one statement runs on one
// connection, so such a query could only fail at run time, or — worse —
// read a stale table of the same name on the wrong database. A model
// source with its own dsn_env_var is read on the model's connection only
// when it names the same variable.
func (d *decoder) checkConnections(models []*Model) {
	byName := make(map[string]*Model, len(models))
	for _, m := range models {
		byName[m.Name] = m
	}
	for _, m := range models {
		if !IsDataRun(m) {
			continue
		}
		d.model, d.source = m.Name, ""
		mine := connectionKey(m.Connection)
		for _, name := range m.refNames() {
			src, ok := m.source(name)
			if !ok || src.Kind != KindModel {
				continue
			}
			var theirs, home string
			switch {
			case src.Model != nil && src.Model.DSNEnvVar != "":
				theirs, home = src.Model.DSNEnvVar, "$"+src.Model.DSNEnvVar+" (its dsn_env_var)"
			case byName[name] != nil:
				theirs, home = connectionKey(byName[name].Connection), byName[name].DataHome()
			default:
				continue // a table outside the spec: read where the model runs
			}
			if theirs == mine {
				continue
			}
			d.source = name
			d.errAt(src.Pos, "{{ ref %q }} reads %s on %s, but this model runs on %s: one query reads one database; put both on the same connection (or read it from a command model)",
				name, name, home, m.DataHome())
		}
	}
	d.model, d.source = "", ""
}

// refNames lists the names m's templates pass to ref, in order, each once.
// A template that does not parse lists none: checkTemplates reports it.
func (m *Model) refNames() []string {
	var names []string
	seen := map[string]bool{}
	funcs := template.FuncMap{
		"this": func() string { return "" },
		"ref": func(name string) string {
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
			return ""
		},
	}
	for _, text := range append([]string{m.Run.Query}, m.Run.SQL...) {
		t, err := template.New(m.Name).Funcs(funcs).Parse(text)
		if err != nil {
			continue
		}
		_ = t.Execute(&strings.Builder{}, nil)
	}
	return names
}
