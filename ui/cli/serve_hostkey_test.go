package cli

import (
	"net"
	"regexp"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// serve prints its host key's fingerprint at start, as ssh shows it on a
// first connection, so that connection can be checked: the key the server
// then presents has exactly that fingerprint.
func TestServePrintsItsHostKeyFingerprint(t *testing.T) {
	s := startServe(t)
	s.stderr.waitFor(t, "host key fingerprint ssh-ed25519 SHA256:")
	m := regexp.MustCompile(`host key fingerprint (ssh-ed25519) (SHA256:[A-Za-z0-9+/]+)`).FindStringSubmatch(s.stderr.text())
	if m == nil {
		t.Fatalf("no fingerprint line:\n%s", s.stderr.text())
	}
	var presented string
	c, err := gossh.Dial("tcp", s.addr, &gossh.ClientConfig{User: "alice", Auth: []gossh.AuthMethod{gossh.PublicKeys(s.operator)},
		HostKeyCallback: func(_ string, _ net.Addr, key gossh.PublicKey) error {
			presented = key.Type() + " " + gossh.FingerprintSHA256(key)
			return nil
		}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if want := m[1] + " " + m[2]; presented != want {
		t.Errorf("the server presents %q, serve printed %q", presented, want)
	}
}
