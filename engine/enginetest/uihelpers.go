package enginetest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"sync"
	"testing"

	gossh "golang.org/x/crypto/ssh"
)

// SyncBuffer is a bytes.Buffer safe for writes from other goroutines (a
// command, a server's log, an SSH session, a child process) while the test
// reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// RecheckRow is the documented shape of one model of `bollhav blocked
// --recheck -o json`, which the CLI's and the UI's tests read: written
// apart from the command's own type, so a renamed field fails them.
type RecheckRow struct {
	Model       string `json:"model"`
	Pipeline    string `json:"pipeline"`
	Outstanding int    `json:"outstanding"`
	Ready       int    `json:"ready"`
	Released    int    `json:"released"`
	Waiting     int    `json:"waiting"`
	Outdated    int    `json:"outdated"`
	Stale       int    `json:"stale"`
	Errors      int    `json:"errors"`
}

// SSHKey is a fresh ed25519 key for a test's SSH client: its signer and
// its public key as an authorized_keys line.
func SSHKey(t testing.TB) (gossh.Signer, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s, string(gossh.MarshalAuthorizedKey(s.PublicKey()))
}
