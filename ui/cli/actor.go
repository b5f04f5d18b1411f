package cli

import (
	"cmp"
	"os"
	"os/user"
	"strconv"
	"strings"
	"unicode"

	"github.com/bollhav/bollhav/ui/untrusted"
)

// actor names the operator of a local command or UI for the audit log:
// BOLLHAV_ACTOR when set (a wrapper that knows better, such as a CI job),
// else the OS user at this host, "alice@db-admin-1" — the login's $USER
// (or $LOGNAME), else the account the process runs as, else its uid. An
// audit row is only worth something if it names a person: never "unknown".
//
// The name is whatever the environment says, so it is cleaned exactly as
// an SSH client's user name is (untrusted.UserName: non-printing characters
// dropped, at most 32 characters, quoted unless plain): an actor cannot put
// an escape sequence into the audit log, where `bollhav audit` and the UI
// show it to the next operator, nor pass for another actor. The host name
// only loses its non-printing characters; the kernel's, not a user's, it is
// kept whole.
func actor() string {
	if a := os.Getenv("BOLLHAV_ACTOR"); a != "" {
		return untrusted.UserName(a)
	}
	name := cmp.Or(os.Getenv("USER"), os.Getenv("LOGNAME"))
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	if name == "" {
		name = "uid " + strconv.Itoa(os.Getuid())
	} else {
		name = untrusted.UserName(name)
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		return name + "@" + strings.Map(printable, host)
	}
	return name
}

// printable keeps r when it prints; strings.Map drops it otherwise.
func printable(r rune) rune {
	if unicode.IsPrint(r) {
		return r
	}
	return -1
}
