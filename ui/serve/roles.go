package serve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"

	gossh "golang.org/x/crypto/ssh"
)

// Role is what a session may do: an operator runs, resets and marks; a
// viewer only looks.
type Role int

// The roles. NoRole is an unknown key, refused at authentication.
const (
	NoRole Role = iota
	Viewer
	Operator
)

func (r Role) String() string {
	switch r {
	case Operator:
		return "operator"
	case Viewer:
		return "viewer"
	}
	return "none"
}

// Keys are the two authorized_keys files. They are read on every lookup,
// not cached, so a key removed from a file is refused on its next
// connection without a restart.
type Keys struct {
	Operators, Viewers string
}

// Check reads both files once, so a server refuses to start on a missing
// or malformed file instead of refusing everyone later. It returns how many
// keys each holds.
func (k Keys) Check() (operators, viewers int, err error) {
	if k.Operators == "" && k.Viewers == "" {
		return 0, 0, errors.New("no authorized keys: give --operators and/or --viewers (authorized_keys files)")
	}
	for _, f := range []struct {
		path string
		n    *int
	}{{k.Operators, &operators}, {k.Viewers, &viewers}} {
		if f.path == "" {
			continue
		}
		keys, err := readAuthorizedKeys(f.path)
		if err != nil {
			return 0, 0, err
		}
		*f.n = len(keys)
	}
	return operators, viewers, nil
}

// RoleOf is the role of key: Operator when the operators file lists it,
// else Viewer when the viewers file does, else NoRole. A file that cannot
// be read grants nothing.
func (k Keys) RoleOf(key gossh.PublicKey) Role {
	if key == nil {
		return NoRole
	}
	if listed(k.Operators, key) {
		return Operator
	}
	if listed(k.Viewers, key) {
		return Viewer
	}
	return NoRole
}

func listed(path string, key gossh.PublicKey) bool {
	if path == "" {
		return false
	}
	keys, err := readAuthorizedKeys(path)
	if err != nil {
		return false
	}
	want := key.Marshal()
	for _, k := range keys {
		if bytes.Equal(k.Marshal(), want) {
			return true
		}
	}
	return false
}

// readAuthorizedKeys parses an OpenSSH authorized_keys file: one key per
// line, blank lines and # comments skipped. A line that does not parse is
// an error naming the file and line, never silently skipped.
func readAuthorizedKeys(path string) ([]gossh.PublicKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("authorized keys: %w", err)
	}
	defer f.Close()
	var keys []gossh.PublicKey
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		key, _, _, _, err := gossh.ParseAuthorizedKey(line)
		if err != nil {
			return nil, fmt.Errorf("authorized keys %s:%d: %w", path, n, err)
		}
		keys = append(keys, key)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("authorized keys %s: %w", path, err)
	}
	return keys, nil
}
