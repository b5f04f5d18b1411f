package spec

import (
	"fmt"
	"strings"
)

// Identifiers from the spec end up in SQL (schemas, tables, keys, columns)
// and in process environments (DSN variables), so they are held to the
// narrowest form that every database accepts unquoted. Quoting would make
// any name safe to splice, but a name like `x"; DROP TABLE y; --` is a typo
// or an attack either way, and refusing it at load names the line.

// maxIdentLen is PostgreSQL's identifier limit; longer names are silently
// truncated there, which could make two models share a table.
const maxIdentLen = 63

// identChars reports whether s is made of ASCII letters, digits and _ and
// does not start with a digit: the characters an identifier part and an
// environment variable name share.
func identChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && !(i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// identPartProblem says why p is not an identifier part, or "" when it is:
// [A-Za-z_][A-Za-z0-9_]*, at most 63 bytes.
func identPartProblem(p string) string {
	if p == "" {
		return "has an empty part"
	}
	if !identChars(p) {
		return fmt.Sprintf("part %q is not an identifier (letters, digits and _, not starting with a digit)", p)
	}
	if len(p) > maxIdentLen {
		return fmt.Sprintf("part %q is longer than %d bytes", p, maxIdentLen)
	}
	return ""
}

// nameProblem says why s is not a dotted name of minParts..maxParts
// identifier parts (want describes the expected shape), or "".
func nameProblem(s string, minParts, maxParts int, want string) string {
	parts := strings.Split(s, ".")
	if len(parts) < minParts || len(parts) > maxParts {
		return "want " + want
	}
	for _, p := range parts {
		if why := identPartProblem(p); why != "" {
			return why
		}
	}
	return ""
}

// modelNameProblem: a model is exactly one table, schema.table.
func modelNameProblem(s string) string { return nameProblem(s, 2, 2, "schema.table") }

// modelSourceNameProblem: a relational source is schema.table or
// catalog.schema.table.
func modelSourceNameProblem(s string) string {
	return nameProblem(s, 2, 3, "schema.table or catalog.schema.table")
}

// otherSourceNameProblem: file, api and hardcoded sources are named by
// dotted identifiers too ("ref.countries", "orders.csv"), so that lineage
// names stay uniform and never collide with the unknown-<uuid> sentinel.
func otherSourceNameProblem(s string) string {
	return nameProblem(s, 1, 8, "dotted identifiers such as ref.countries")
}

// identProblem: a single identifier (a pipeline, schema, catalog, key or
// column).
func identProblem(s string) string { return nameProblem(s, 1, 1, "a single identifier") }

// envVarProblem says why s is not a portable environment variable name, or "".
func envVarProblem(s string) string {
	if s == "" {
		return "empty"
	}
	if !identChars(s) {
		return "want an environment variable name (letters, digits and _, not starting with a digit)"
	}
	if len(s) > 255 {
		return "longer than 255 bytes"
	}
	return ""
}
