package cli

import (
	"cmp"
	"os"
	"os/user"
	"strconv"
)

// actor names the operator of a local command or UI for the audit log:
// BOLLHAV_ACTOR when set (a wrapper that knows better, such as a CI job),
// else the OS user at this host, "alice@db-admin-1" — the login's $USER
// (or $LOGNAME), else the account the process runs as, else its uid. An
// audit row is only worth something if it names a person: never "unknown".
func actor() string {
	if a := os.Getenv("BOLLHAV_ACTOR"); a != "" {
		return a
	}
	name := cmp.Or(os.Getenv("USER"), os.Getenv("LOGNAME"))
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	if name == "" {
		name = "uid " + strconv.Itoa(os.Getuid())
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		return name + "@" + host
	}
	return name
}
