package serve

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"time"

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
	// problems reports the bad lines found while serving; nil drops them.
	problems func(error)
}

// Check reads both files once, so a server refuses to start on a missing
// file, a malformed line or an option it would not enforce, instead of
// refusing someone later. It returns how many keys each holds.
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
		kf, err := readKeyFile(f.path)
		if err != nil {
			return 0, 0, err
		}
		if len(kf.problems) > 0 {
			return 0, 0, errors.Join(kf.problems...)
		}
		*f.n = len(kf.keys)
	}
	return operators, viewers, nil
}

// Grant is what a key is allowed from an address at a time.
type Grant struct {
	Role Role
	// NoPTY is set when the key's line says no-pty (or restrict): the
	// session may not open the terminal the UI needs.
	NoPTY bool
	// Refusal says why a listed key was refused (expired, wrong address);
	// empty for an unknown key or a grant.
	Refusal string
}

// Authorize is the grant of key connecting from addr at now: the operators
// file first, then the viewers file. A line whose from= does not admit addr,
// or whose expiry-time has passed, grants nothing — the next line or file
// may still list the same key. A file that cannot be read grants nothing.
func (k Keys) Authorize(key gossh.PublicKey, addr net.Addr, now time.Time) Grant {
	if key == nil {
		return Grant{}
	}
	var refusal string
	for _, f := range []struct {
		path string
		role Role
	}{{k.Operators, Operator}, {k.Viewers, Viewer}} {
		if f.path == "" {
			continue
		}
		kf, err := readKeyFile(f.path)
		if err != nil {
			k.report(err)
			continue
		}
		for _, p := range kf.problems {
			k.report(p)
		}
		want := key.Marshal()
		for _, ak := range kf.keys {
			if !bytes.Equal(ak.key.Marshal(), want) {
				continue
			}
			switch {
			case !ak.expires.IsZero() && !now.Before(ak.expires):
				refusal = fmt.Sprintf("%s:%d: the key expired at %s", f.path, ak.line, ak.expires.Format(time.RFC3339))
			case !fromAllows(ak.from, addr):
				refusal = fmt.Sprintf("%s:%d: from= does not admit %s", f.path, ak.line, addrText(addr))
			default:
				return Grant{Role: f.role, NoPTY: ak.noPTY}
			}
		}
	}
	return Grant{Refusal: refusal}
}

func (k Keys) report(err error) {
	if k.problems != nil {
		k.problems(err)
	}
}

func addrText(addr net.Addr) string {
	if ip, ok := clientIP(addr); ok {
		return ip.String()
	}
	if addr == nil {
		return "an unknown address"
	}
	return addr.String()
}
