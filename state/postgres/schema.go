package postgres

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
)

// DefaultSchema is the schema a store lives in when Options.Schema is empty.
const DefaultSchema = "bollhav"

// maxSchemaLen keeps the schema name short enough that the NOTIFY channel
// derived from it (schema + "_changes") stays within PostgreSQL's 63-byte
// identifier limit; a longer channel name would be silently truncated by
// LISTEN but refused by pg_notify, and the feed would never wake anyone.
const maxSchemaLen = 63 - len(channelSuffix)

const channelSuffix = "_changes"

var schemaName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkSchema refuses a schema name that is not a plain identifier. The name
// is quoted wherever it is used, so this is not what stops injection; it
// keeps names that would need quoting by hand in psql, or that PostgreSQL
// reserves (pg_*), from ever being created.
func checkSchema(name string) error {
	switch {
	case !schemaName.MatchString(name):
		return fmt.Errorf("postgres: invalid schema name %q: use letters, digits and _ and start with a letter or _", name)
	case len(name) > maxSchemaLen:
		return fmt.Errorf("postgres: schema name %q is %d characters long; at most %d are allowed", name, len(name), maxSchemaLen)
	case strings.HasPrefix(strings.ToLower(name), "pg_"):
		return fmt.Errorf("postgres: invalid schema name %q: the pg_ prefix is reserved by PostgreSQL", name)
	}
	return nil
}

// quoteIdent quotes one SQL identifier.
func quoteIdent(name string) string { return pgx.Identifier{name}.Sanitize() }

// schemaToken stands for the quoted schema name in the SQL of this package
// and of the migrations; sqlFor replaces it. Every table is qualified, so no
// statement depends on the connection's search_path (which a pooler or
// another tool sharing the database may change).
const schemaToken = "{schema}"

func sqlFor(schema, sql string) string {
	return strings.ReplaceAll(sql, schemaToken, quoteIdent(schema))
}

// lockKey derives an advisory lock key from a name. FNV-1a is stable across
// releases, so bollhav binaries of different versions starting at once
// contend for the same lock.
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}
