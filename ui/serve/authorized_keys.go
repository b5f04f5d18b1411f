package serve

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// authorizedKey is one usable line of an authorized_keys file with the
// options bollhav enforces, as sshd would.
type authorizedKey struct {
	key  gossh.PublicKey
	line int
	// from is the from="…" pattern list; nil admits any address.
	from []string
	// expires is expiry-time="…"; zero never expires.
	expires time.Time
	// noPTY is no-pty, or restrict without pty: the key may not open a
	// terminal, and bollhav's UI needs one.
	noPTY bool
}

// keyFile is a parsed authorized_keys file: the keys of its good lines and
// one problem per bad line. A bad line grants nothing; the good ones keep
// working, so one typo added while the server runs locks nobody else out.
type keyFile struct {
	keys     []authorizedKey
	problems []error
}

// acceptedOptions are options bollhav honours by construction: it offers no
// forwarding, no agent, no X11 and no user rc, whatever a key says.
var acceptedOptions = map[string]bool{
	"no-port-forwarding": true, "no-agent-forwarding": true, "no-x11-forwarding": true, "no-user-rc": true,
	"port-forwarding": true, "agent-forwarding": true, "x11-forwarding": true, "user-rc": true,
}

// readKeyFile parses an OpenSSH authorized_keys file: one key per line,
// blank lines and # comments skipped. Only a file that cannot be read is an
// error; each bad line is a problem naming the file and the line.
func readKeyFile(path string) (keyFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return keyFile{}, fmt.Errorf("authorized keys: %w", err)
	}
	defer f.Close()
	var out keyFile
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		k, err := parseKeyLine(line)
		if err != nil {
			out.problems = append(out.problems, fmt.Errorf("authorized keys %s:%d: %w", path, n, err))
			continue
		}
		k.line = n
		out.keys = append(out.keys, k)
	}
	if err := sc.Err(); err != nil {
		return keyFile{}, fmt.Errorf("authorized keys %s: %w", path, err)
	}
	return out, nil
}

// parseKeyLine reads one key and its options. An option bollhav cannot
// enforce (a forced command, an environment, a certificate authority, …)
// makes the line an error rather than a key with a restriction ignored.
func parseKeyLine(line []byte) (authorizedKey, error) {
	key, _, options, _, err := gossh.ParseAuthorizedKey(line)
	if err != nil {
		return authorizedKey{}, err
	}
	k := authorizedKey{key: key}
	seen := map[string]bool{}
	for _, opt := range options {
		name, value, hasValue := strings.Cut(opt, "=")
		name = strings.ToLower(name)
		if hasValue {
			value = unquoteOption(value)
			// One from= or expiry-time= per line, as sshd wants: a second
			// one would silently widen (or shorten) the first.
			if seen[name] {
				return authorizedKey{}, fmt.Errorf("option %s given twice; give it once", name)
			}
			seen[name] = true
		}
		switch {
		case name == "from" && hasValue:
			k.from, err = parseFromPatterns(value)
			if err != nil {
				return authorizedKey{}, fmt.Errorf("option from=%q: %w", value, err)
			}
		case name == "expiry-time" && hasValue:
			k.expires, err = parseExpiryTime(value)
			if err != nil {
				return authorizedKey{}, fmt.Errorf("option expiry-time=%q: %w", value, err)
			}
		// restrict, pty and no-pty apply in order, the last one winning,
		// as sshd reads them: restrict,pty allows a terminal, pty,restrict
		// does not.
		case (name == "restrict" || name == "no-pty") && !hasValue:
			k.noPTY = true
		case name == "pty" && !hasValue:
			k.noPTY = false
		case acceptedOptions[name] && !hasValue:
		default:
			return authorizedKey{}, fmt.Errorf("option %s is not enforced by bollhav; remove it or the key", strings.SplitN(opt, "=", 2)[0])
		}
	}
	return k, nil
}

// unquoteOption strips an option value's double quotes; inside them a
// backslash escapes a quote, as sshd reads it.
func unquoteOption(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	return strings.ReplaceAll(v, `\"`, `"`)
}

// parseExpiryTime reads sshd's YYYYMMDD[HHMM[SS]], in the server's local
// time unless it ends in Z (UTC).
func parseExpiryTime(v string) (time.Time, error) {
	loc := time.Local
	if s, ok := strings.CutSuffix(v, "Z"); ok {
		v, loc = s, time.UTC
	}
	for _, layout := range []string{"20060102", "200601021504", "20060102150405"} {
		if len(v) == len(layout) {
			t, err := time.ParseInLocation(layout, v, loc)
			if err != nil {
				return time.Time{}, fmt.Errorf("want YYYYMMDD[HHMM[SS]][Z]: %w", err)
			}
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("want YYYYMMDD[HHMM[SS]][Z]")
}
