package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// writeOperators replaces the operators file: keys are read on every
// login, so the next connection sees it.
func (f *fixture) writeOperators(t *testing.T, content string) {
	t.Helper()
	must(t, os.WriteFile(f.operators, []byte(content), 0o600))
}

// TestAuthorizedKeysOptionsAreHonoured: from= and expiry-time= decide
// whether a listed key may log in, with sshd's meaning, over a real SSH
// connection from 127.0.0.1.
func TestAuthorizedKeysOptionsAreHonoured(t *testing.T) {
	f := start(t)
	key := strings.TrimSpace(f.operator.line)
	future := time.Now().AddDate(5, 0, 0).UTC().Format("20060102") + "Z"
	for _, tc := range []struct {
		options string
		admit   bool
	}{
		{`from="10.9.9.9",expiry-time="20200101"`, false}, // the line: wrong address, long expired
		{`from="10.9.9.9"`, false},
		{`expiry-time="20200101"`, false},
		{`expiry-time="` + future + `"`, true},
		{`from="127.0.0.1"`, true},
		{`from="127.0.0.0/8"`, true},
		{`from="127.0.0.?"`, true},
		{`from="10.0.0.0/8,127.*"`, true},
		{`from="!127.0.0.1,*"`, false},
		{`from="localhost"`, false}, // host names are never resolved (sshd's UseDNS no)
	} {
		f.writeOperators(t, tc.options+" "+key+"\n")
		c, err := dial(t, f.addr, gossh.PublicKeys(f.operator.signer))
		if c != nil {
			c.Close()
		}
		if admitted := err == nil; admitted != tc.admit {
			t.Errorf("%s: admitted %v, want %v (%v)", tc.options, admitted, tc.admit, err)
		}
	}
	// A refusal of a listed key says why in the server's log.
	f.writeOperators(t, `expiry-time="20200101" `+key+"\n")
	if out := f.log.String(); !strings.Contains(out, "refused login") || !strings.Contains(out, "remote=127.0.0.1") {
		t.Errorf("no refused login in the log:\n%s", out)
	}
}

// TestNoPTYKeysAreRefusedTheUI: no-pty (and restrict, which implies it)
// are honoured; the UI needs a terminal, so such a key gets a message, not
// a session. restrict with pty re-enables it, as in sshd.
func TestNoPTYKeysAreRefusedTheUI(t *testing.T) {
	f := start(t)
	key := strings.TrimSpace(f.operator.line)
	for _, tc := range []struct {
		options string
		ui      bool
	}{
		{"no-pty", false},
		{"restrict", false},
		{"restrict,pty", true},
		{"no-port-forwarding,no-agent-forwarding,no-X11-forwarding", true},
	} {
		f.writeOperators(t, tc.options+" "+key+"\n")
		c, s := f.login(t, f.operator.signer)
		if tc.ui {
			s.waitFor(t, "readonly=false")
		} else {
			s.waitFor(t, "may not open a terminal")
		}
		c.Close()
	}
}

// TestUnenforcedOptionRefusesToStart: an option bollhav cannot enforce is
// a startup error naming the file, the line and the option, never a key
// let in with its restriction dropped.
func TestUnenforcedOptionRefusesToStart(t *testing.T) {
	key := strings.TrimSpace(newKey(t).line)
	for _, opt := range []string{`command="/bin/true"`, `environment="A=1"`, `permitopen="db:5432"`, "cert-authority", `principals="ops"`, "verify-required", "frobnicate"} {
		p := filepath.Join(t.TempDir(), "ops")
		must(t, os.WriteFile(p, []byte("# ops\n"+opt+" "+key+"\n"), 0o600))
		name := strings.SplitN(opt, "=", 2)[0]
		_, _, err := (Keys{Operators: p}).Check()
		if err == nil || !strings.Contains(err.Error(), p+":2") || !strings.Contains(err.Error(), "option "+name+" is not enforced") {
			t.Errorf("%s: Check = %v, want the file, line 2 and the option named", opt, err)
		}
	}
	for _, opt := range []string{`from="10.0.0.0/33"`, `expiry-time="2020"`, `expiry-time="20201340"`} {
		p := filepath.Join(t.TempDir(), "ops")
		must(t, os.WriteFile(p, []byte(opt+" "+key+"\n"), 0o600))
		if _, _, err := (Keys{Operators: p}).Check(); err == nil || !strings.Contains(err.Error(), p+":1: option ") {
			t.Errorf("%s: Check = %v, want the bad value named at line 1", opt, err)
		}
	}
}

// TestBadLineAddedWhileServingLocksOutNobodyElse: a malformed line written
// into a keys file while the server runs costs only that line; it is
// logged with its file and line, and every other key keeps working.
func TestBadLineAddedWhileServingLocksOutNobodyElse(t *testing.T) {
	f := start(t)
	f.writeOperators(t, f.operator.line+"ssh-ed25519 not-base64!!\n"+`command="x" `+strings.TrimSpace(newKey(t).line)+"\n")
	c, s := f.login(t, f.operator.signer)
	s.waitFor(t, "readonly=false")
	c.Close()
	out := f.log.String()
	for _, want := range []string{f.operators + ":2", f.operators + ":3: option command is not enforced"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log does not name %q:\n%s", want, out)
		}
	}
}

// TestActorCannotBeForged: the audit actor starts with the fingerprint of
// the key that verified; a user name chosen to look like someone else's
// fingerprint, or carrying terminal escapes, is quoted and cleaned after it.
func TestActorCannotBeForged(t *testing.T) {
	f := start(t)
	fp := gossh.FingerprintSHA256(f.operator.signer.PublicKey())
	other := gossh.FingerprintSHA256(f.viewer.signer.PublicKey())
	for _, tc := range []struct{ user, want string }{
		{"carol " + other, "ssh:" + fp + ` "` + ("carol " + other)[:32] + `…"`},
		{"\x1b[31mevil\x07", "ssh:" + fp + ` "[31mevil"`},
		{strings.Repeat("a", 100), "ssh:" + fp + ` "` + strings.Repeat("a", 32) + `…"`},
		{"bob.smith@corp", "ssh:" + fp + " bob.smith@corp"},
	} {
		if got := Actor(tc.user, f.operator.signer.PublicKey()); got != tc.want {
			t.Errorf("Actor(%q) = %q, want %q", tc.user, got, tc.want)
		}
	}
	// Over a real connection, with the forged name as the SSH user.
	c, err := gossh.Dial("tcp", f.addr, &gossh.ClientConfig{User: "carol " + other + "\x1b[2J",
		Auth: []gossh.AuthMethod{gossh.PublicKeys(f.operator.signer)}, HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
	must(t, err)
	defer c.Close()
	s := open(t, c)
	s.waitFor(t, "readonly=false")
	_, _ = s.in.Write([]byte("w"))
	s.waitFor(t, "mark: ok")
	log, err := f.e.AuditLog(t.Context(), 1)
	must(t, err)
	want := "ssh:" + fp + ` "` + ("carol " + other)[:32] + `…"`
	if len(log) != 1 || log[0].Actor != want || strings.ContainsRune(log[0].Actor, 0x1b) {
		t.Errorf("audit %+v, want actor %q with no control bytes", log, want)
	}
}

// TestRefusedLoginsAreLoggedAndRateLimited: an unknown key and a password
// attempt each leave a log line with the address and what was offered; a
// client that keeps trying is logged once a minute, not once a try.
func TestRefusedLoginsAreLoggedAndRateLimited(t *testing.T) {
	f := start(t)
	stranger := newKey(t)
	if c, err := dial(t, f.addr, gossh.PublicKeys(stranger.signer)); err == nil {
		c.Close()
		t.Fatal("an unknown key was let in")
	}
	out := f.log.String()
	if !strings.Contains(out, "refused login") || !strings.Contains(out, gossh.FingerprintSHA256(stranger.signer.PublicKey())) ||
		!strings.Contains(out, "remote=127.0.0.1") {
		t.Fatalf("the unknown key's refusal is not logged with its fingerprint and address:\n%s", out)
	}
	for range 5 {
		if c, err := dial(t, f.addr, gossh.Password("hunter2")); err == nil {
			c.Close()
			t.Fatal("a password was accepted")
		}
	}
	if n := strings.Count(f.log.String(), "refused login"); n != 1 {
		t.Errorf("%d refused-login lines for 6 attempts from one address within a minute, want 1:\n%s", n, f.log.String())
	}
}

// TestRepeatedOptionsAreNotLooserThanSshd: a second from= or expiry-time=
// on one line is refused (it would widen the first), and restrict, pty and
// no-pty apply in order, the last one winning.
func TestRepeatedOptionsAreNotLooserThanSshd(t *testing.T) {
	key := strings.TrimSpace(newKey(t).line)
	for _, opt := range []string{`from="10.0.0.0/8",from="*"`, `expiry-time="20200101",expiry-time="29991231"`} {
		if _, err := parseKeyLine([]byte(opt + " " + key)); err == nil || !strings.Contains(err.Error(), "given twice") {
			t.Errorf("%s: %v, want it refused as given twice", opt, err)
		}
	}
	for opts, noPTY := range map[string]bool{"restrict,pty": false, "pty,restrict": true, "no-pty,pty": false, "pty,no-pty": true} {
		k, err := parseKeyLine([]byte(opts + " " + key))
		if err != nil || k.noPTY != noPTY {
			t.Errorf("%s: noPTY %v (%v), want %v", opts, k.noPTY, err, noPTY)
		}
	}
}
