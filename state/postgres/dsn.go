package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// The errors of this file are what an operator sees when --dsn is wrong, the
// server is down or the login is refused: one line that says which, and never
// the password — it ends up in terminals, CI logs and bug reports. None of
// them wraps the driver's error, whose chain can hold the raw connection
// string.

// dsnError reports a connection string pgx could not parse.
func dsnError(dsn string, err error) error {
	msg := err.Error()
	// pgx prefixes "cannot parse `<dsn, best-effort redacted>`: "; the DSN
	// adds nothing the user does not have, and "best effort" is not enough.
	if rest, ok := strings.CutPrefix(msg, "cannot parse `"); ok {
		if i := strings.Index(rest, "`: "); i >= 0 {
			msg = rest[i+len("`: "):]
		}
	}
	return errors.New(oneLine("postgres: invalid DSN: " + scrub(msg, secretsIn(dsn, ""))))
}

// connectError reports a failure to open the first connection to a parsed
// configuration.
func connectError(cfg *pgconn.Config, dsn string, err error) error {
	addr := address(cfg)
	var (
		pgErr  *pgconn.PgError
		dnsErr *net.DNSError
		opErr  *net.OpError
		msg    string
	)
	switch {
	case errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "28"):
		msg = fmt.Sprintf("the server at %s refused login as %q: %s", addr, cfg.User, pgErr.Message)
	case errors.As(err, &pgErr) && pgErr.Code == "3D000":
		msg = fmt.Sprintf("database %q does not exist on the server at %s", cfg.Database, addr)
	case errors.As(err, &pgErr):
		msg = fmt.Sprintf("the server at %s refused the connection: %s", addr, pgErr.Message)
	case errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err):
		msg = fmt.Sprintf("cannot reach the server at %s: timed out", addr)
	case errors.As(err, &dnsErr):
		msg = fmt.Sprintf("cannot reach the server at %s: unknown host %q", addr, dnsErr.Name)
	case errors.As(err, &opErr):
		msg = fmt.Sprintf("cannot reach the server at %s: %s", addr, opErr.Err)
	default:
		msg = fmt.Sprintf("cannot connect to the server at %s: %s", addr, err)
	}
	return errors.New(oneLine("postgres: " + scrub(msg, secretsIn(dsn, cfg.Password))))
}

func address(cfg *pgconn.Config) string {
	if strings.HasPrefix(cfg.Host, "/") { // a Unix socket directory
		return cfg.Host
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

// keywordPassword finds password=... in a keyword/value DSN, quoted or not.
var keywordPassword = regexp.MustCompile(`password\s*=\s*(?:'((?:[^'\\]|\\.)*)'|(\S+))`)

// urlPassword is the password of a URL DSN as its author most likely meant
// it: from the colon after the user name to the last @ before the query,
// even when it holds an unescaped @ or / that a URL parser reads otherwise.
func urlPassword(dsn string) (string, bool) {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok || strings.ContainsAny(scheme, " =") {
		return "", false
	}
	rest, _, _ = strings.Cut(rest, "?")
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return "", false
	}
	_, pw, ok := strings.Cut(rest[:at], ":")
	return pw, ok
}

// checkURLPassword refuses a URL DSN whose parsed password is not the one
// its author wrote: an unescaped @, / or : in the password moves the rest of
// it into the host or the database name, where any later error message
// would show it.
func checkURLPassword(dsn, parsed string) error {
	pw, ok := urlPassword(dsn)
	if !ok {
		return nil
	}
	if dec, err := url.PathUnescape(pw); err == nil && dec == parsed {
		return nil
	}
	return errors.New("postgres: invalid DSN: the password holds a character a URL reserves; percent-encode @ / : ? # in it (%40 %2F %3A %3F %23)")
}

// secretsIn lists every spelling of a password the message could contain:
// the parsed one, PGPASSWORD, and whatever looks like a password in the raw
// DSN, decoded and not — the DSN may be too malformed to parse.
func secretsIn(dsn, parsed string) []string {
	out := []string{parsed, os.Getenv("PGPASSWORD")}
	for _, m := range keywordPassword.FindAllStringSubmatch(dsn, -1) {
		out = append(out, m[1], m[2], strings.ReplaceAll(m[1], `\'`, `'`))
	}
	if pw, ok := urlPassword(dsn); ok {
		out = append(out, pw)
		if dec, err := url.PathUnescape(pw); err == nil {
			out = append(out, dec)
		}
	}
	return out
}

// scrub masks every secret in msg. Longer secrets go first, so a password
// that contains another one is masked whole.
func scrub(msg string, secrets []string) string {
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return msg
}

// oneLine joins a multi-line driver message (pgx reports each host it
// tried on a line of its own) into one.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
