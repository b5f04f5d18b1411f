package spec

import (
	"cmp"
	"fmt"
	"strings"
)

// SchemaSuffixEnvVar is the environment variable that names a dev or PR
// environment (docs/design.md, Dev environments); the CLI's --env overrides it.
const SchemaSuffixEnvVar = "SCHEMA_SUFFIX"

// maxSuffixLen keeps "<schema>_<suffix>" inside PostgreSQL's 63-byte
// identifier limit for ordinary schema names; a longer one would be silently
// truncated by the database and two environments could share a schema.
const maxSuffixLen = 32

// Env is the environment a run reads and writes: prod (no suffix) or a dev /
// PR copy whose managed schemas carry "_<Suffix>". The zero Env is prod.
type Env struct {
	Suffix string
}

// ParseEnv validates a SCHEMA_SUFFIX. The suffix is spliced into schema names,
// so only [A-Za-z0-9_] is accepted: anything else could break out of a quoted
// identifier or name another schema. An empty suffix is prod.
func ParseEnv(suffix string) (Env, error) {
	if suffix == "" {
		return Env{}, nil
	}
	if len(suffix) > maxSuffixLen {
		return Env{}, fmt.Errorf("invalid schema suffix %q: longer than %d characters", suffix, maxSuffixLen)
	}
	for _, r := range suffix {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return Env{}, fmt.Errorf("invalid schema suffix %q: only letters, digits and _ are allowed", suffix)
		}
	}
	return Env{Suffix: suffix}, nil
}

// Suffixed reports whether this is a dev / PR environment rather than prod;
// deactivate_for_dev only does anything in one.
func (e Env) Suffixed() bool { return e.Suffix != "" }

// String names the environment for messages: "prod" or the suffix.
func (e Env) String() string { return cmp.Or(e.Suffix, "prod") }

// Schema moves a managed schema into this environment: "warehouse" becomes
// "warehouse_pr123" under suffix pr123, and stays itself in prod.
func (e Env) Schema(schema string) string {
	if e.Suffix == "" {
		return schema
	}
	return schema + "_" + e.Suffix
}

// QuoteIdent quotes one SQL identifier part with double quotes, doubling any
// embedded quote, so that a name is never read as SQL. Names that passed spec
// validation never contain a quote; this is the second line of defence.
func QuoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// quoteParts quotes each part and joins them with dots.
func quoteParts(parts ...string) string {
	q := make([]string, len(parts))
	for i, p := range parts {
		q[i] = QuoteIdent(p)
	}
	return strings.Join(q, ".")
}
