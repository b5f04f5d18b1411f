package tui

import "testing"

// An SSH session's actor reads as its user and the start of its key's
// fingerprint, whichever order the record has them in; a quoted user name
// (one that is not plain) stays quoted and cannot pass for the key; any
// other actor is as it is.
func TestActorShort(t *testing.T) {
	for _, c := range []struct{ actor, want string }{
		{"ssh:SHA256:zKxrQ2mXn0 oncall", "oncall (zKxr…)"},
		{"ssh:alice SHA256:nThbg6kXUp", "alice (nThb…)"},
		{`ssh:SHA256:real0000 "carol SHA256:fake"`, `"carol SHA256:fake" (real…)`},
		{"ssh:SHA256:zKxrQ2mXn0", "ssh (zKxr…)"},
		{"ssh:bob", "ssh:bob"},
		{"anna@host", "anna@host"},
	} {
		if got := actorShort(c.actor); got != c.want {
			t.Errorf("actorShort(%q) = %q, want %q", c.actor, got, c.want)
		}
	}
}
