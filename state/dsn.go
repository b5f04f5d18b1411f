package state

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
)

// The kinds of state store a DSN can name.
const (
	KindPostgres = "postgres"
	KindSQLite   = "sqlite"
)

// redactedPassword replaces a password wherever a DSN is shown; the same
// mask net/url's URL.Redacted uses.
const redactedPassword = "xxxxx"

// DSN is a parsed --dsn / BOLLHAV_DSN: which backend, and what it opens.
//
// A DSN prints itself redacted (String, GoString and Redacted all hide the
// password), and the connection string that carries the password is
// unexported, so logging, %v or JSON-encoding a DSN never shows it; only
// ConnString hands it to the PostgreSQL driver.
type DSN struct {
	// Kind is KindPostgres or KindSQLite.
	Kind string
	// Path is the SQLite file (as given; relative paths are relative to the
	// working directory, the default is beside the spec). Empty for
	// PostgreSQL.
	Path string
	conn string
}

// ParseDSN reads a DSN: postgres:// or postgresql:// URLs and libpq
// keyword/value strings ("host=… dbname=…") name PostgreSQL; sqlite:PATH or a
// plain path names an SQLite file; an empty DSN is <specDir>/.bollhav/state.db.
// Anything else, such as mysql://…, is an error. No error ever contains the
// password.
func ParseDSN(dsn, specDir string) (DSN, error) {
	s := strings.TrimSpace(dsn)
	switch {
	case s == "":
		return DSN{Kind: KindSQLite, Path: filepath.Join(specDir, ".bollhav", "state.db")}, nil
	case hasPrefixFold(s, "postgres://"), hasPrefixFold(s, "postgresql://"):
		if _, err := url.Parse(s); err != nil {
			// url.Parse's message quotes pieces of the input, which may be
			// pieces of the password: say what to do instead.
			return DSN{}, fmt.Errorf("invalid PostgreSQL URL %s: it does not parse as a URL (percent-encode special characters in the user name and password)", redactURL(s))
		}
		return DSN{Kind: KindPostgres, conn: s}, nil
	case hasPrefixFold(s, "sqlite:"):
		path := strings.TrimPrefix(s[len("sqlite:"):], "//")
		if path == "" {
			return DSN{}, errors.New("invalid DSN sqlite: it names no file; write sqlite:PATH")
		}
		return DSN{Kind: KindSQLite, Path: path}, nil
	}
	if m := schemeRE.FindStringSubmatch(s); m != nil {
		return DSN{}, fmt.Errorf("unsupported DSN scheme %q: use postgres://…, postgresql://…, host=… dbname=…, sqlite:PATH or a file path", m[1])
	}
	if looksLikeKeywords(s) {
		kv, err := parseKeywords(s)
		if err == nil {
			err = checkKeywords(kv)
		}
		if err != nil {
			return DSN{}, fmt.Errorf("invalid PostgreSQL DSN: %w", err)
		}
		return DSN{Kind: KindPostgres, conn: s}, nil
	}
	return DSN{Kind: KindSQLite, Path: s}, nil
}

// schemeRE matches a URL scheme of two letters or more ("C:\…" is a path).
var schemeRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]+)://`)

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// ConnString is the PostgreSQL connection string as given, password
// included, for the driver; empty for SQLite. Never print it.
func (d DSN) ConnString() string { return d.conn }

// Redacted is the DSN with any password replaced by xxxxx, for messages,
// logs and the UI's title bar.
func (d DSN) Redacted() string {
	switch {
	case d.Kind == KindSQLite:
		return "sqlite:" + d.Path
	case strings.Contains(d.conn, "://"):
		return redactURL(d.conn)
	case d.conn != "":
		kv, err := parseKeywords(d.conn)
		if err != nil {
			return "postgres (unreadable DSN)"
		}
		return formatKeywords(kv)
	}
	return ""
}

// String is Redacted, so %v and %s are safe.
func (d DSN) String() string { return d.Redacted() }

// GoString is Redacted too, so %#v is safe.
func (d DSN) GoString() string { return fmt.Sprintf("state.DSN{Kind: %q, %q}", d.Kind, d.Redacted()) }

// secretKeys are the connection parameters whose values are never shown.
var secretKeys = map[string]bool{"password": true, "sslpassword": true}

// redactURL masks the password of a URL-form DSN without relying on it
// parsing: first every password query parameter, then everything from the
// first ':' of the user info to the last '@'. A password with an unescaped
// '@', '/', '?' or ':' is thus masked whole; a stray '@' elsewhere only masks
// more than needed.
func redactURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return redactedPassword
	}
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		rest = rest[:q+1] + redactQuery(rest[q+1:])
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if colon := strings.IndexByte(rest[:at], ':'); colon >= 0 {
			rest = rest[:colon+1] + redactedPassword + rest[at:]
		}
	}
	return scheme + "://" + rest
}

// redactQuery masks the values of secret parameters in a raw query string
// (and whatever fragment follows it).
func redactQuery(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, _, ok := strings.Cut(p, "=")
		key, err := url.QueryUnescape(k)
		if err != nil {
			key = k
		}
		if ok && secretKeys[strings.ToLower(key)] {
			parts[i] = k + "=" + redactedPassword
		}
	}
	return strings.Join(parts, "&")
}

// keyRE is a libpq keyword at the start of a keyword/value DSN.
var keyRE = regexp.MustCompile(`^[a-z_]+\s*=`)

// connKeywords are the keywords of a keyword/value DSN: libpq's, and the
// ones the PostgreSQL driver adds (pgx's and its pool's).
var connKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`
		host hostaddr port dbname user password passfile require_auth channel_binding
		connect_timeout client_encoding options application_name fallback_application_name
		keepalives keepalives_idle keepalives_interval keepalives_count tcp_user_timeout
		replication gssencmode sslmode sslnegotiation requiressl sslcompression sslcert
		sslkey sslkeylogfile sslpassword sslcertmode sslrootcert sslcrl sslcrldir sslsni
		requirepeer ssl_min_protocol_version ssl_max_protocol_version min_protocol_version
		max_protocol_version krbsrvname krbspn gsslib gssdelegation service servicefile
		target_session_attrs load_balance_hosts
		database min_read_buffer_size statement_cache_capacity description_cache_capacity
		default_query_exec_mode pool_max_conns pool_min_conns pool_min_idle_conns
		pool_max_conn_lifetime pool_max_conn_idle_time pool_health_check_period
		pool_max_conn_lifetime_jitter pool_ping_timeout`) {
		connKeywords[k] = true
	}
}

// looksLikeKeywords tells a keyword/value DSN from an odd file name such as
// "x=1.db": it starts with keyword=, and that keyword is a known one or
// more follow. A misspelt "hots=db password=…" is thus a DSN with a typo,
// reported as such, and not a SQLite file to create — whose name would hold
// the password.
func looksLikeKeywords(s string) bool {
	if !keyRE.MatchString(s) {
		return false
	}
	k, _, _ := strings.Cut(s, "=")
	if connKeywords[strings.TrimSpace(k)] {
		return true
	}
	kv, err := parseKeywords(s)
	return err != nil || len(kv) > 1
}

// checkKeywords refuses a keyword libpq does not know, as libpq does: the
// driver would otherwise send it to the server as a setting, and a typo
// would surface — if at all — as a refused or misdirected connection
// instead of naming itself.
func checkKeywords(kv []keyword) error {
	for _, k := range kv {
		if !connKeywords[k.key] {
			return fmt.Errorf("unknown keyword %q%s; a server setting goes in options='-c name=value'", k.key, closestKeyword(k.key))
		}
	}
	return nil
}

// closestKeyword suggests the known keyword one or two edits away from key.
func closestKeyword(key string) string {
	best, bestDist := "", 3
	for k := range connKeywords {
		if d := EditDistance(key, k); d < bestDist || d == bestDist && k < best {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

type keyword struct{ key, value string }

// parseKeywords reads libpq's keyword = value form: values may be single
// quoted, with \' and \\ escapes inside. Errors name the keyword, never its
// value.
func parseKeywords(s string) ([]keyword, error) {
	var out []keyword
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
			i++
		}
	}
	for {
		skip()
		if i == len(s) {
			return out, nil
		}
		start := i
		for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] == '_') {
			i++
		}
		key := s[start:i]
		if key == "" {
			return nil, fmt.Errorf("expected a keyword after %q", lastKey(out))
		}
		skip()
		if i == len(s) || s[i] != '=' {
			return nil, fmt.Errorf("keyword %q has no '='", key)
		}
		i++
		skip()
		var val strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				i++
				if c == '\\' && i < len(s) {
					val.WriteByte(s[i])
					i++
					continue
				}
				if c == '\'' {
					closed = true
					break
				}
				val.WriteByte(c)
			}
			if !closed {
				return nil, fmt.Errorf("the quoted value of %q is not terminated", key)
			}
		} else {
			for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				val.WriteByte(s[i])
				i++
			}
		}
		out = append(out, keyword{key, val.String()})
	}
}

func lastKey(kv []keyword) string {
	if len(kv) == 0 {
		return "the start"
	}
	return kv[len(kv)-1].key
}

// formatKeywords writes keywords back in libpq form, secrets masked.
func formatKeywords(kv []keyword) string {
	parts := make([]string, len(kv))
	for i, k := range kv {
		v := k.value
		if secretKeys[k.key] {
			v = redactedPassword
		}
		if v == "" || strings.ContainsAny(v, " \t\n\r'\\") {
			v = "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
		}
		parts[i] = k.key + "=" + v
	}
	return strings.Join(parts, " ")
}
