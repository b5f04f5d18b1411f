package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

// TestLocalMarkIsAuditedWithTheOSUser: a mark at the command line, with no
// BOLLHAV_ACTOR, is audited as $USER@host; with neither $USER nor $LOGNAME
// it is still the account's name, never "unknown"; a name with escape
// sequences, from $USER or BOLLHAV_ACTOR, is cleaned like an SSH user's.
func TestLocalMarkIsAuditedWithTheOSUser(t *testing.T) {
	dir, sp := demoCopy(t)
	since := demoOutage(t, dir)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	mark := func() string {
		t.Helper()
		code, _, errOut := run(t, "mark", "raw.payments", "--spec", sp, "--since", since.Format(time.RFC3339),
			"--until", since.Add(time.Hour).Format(time.RFC3339), "--status", "pending")
		if code != 0 {
			t.Fatalf("mark: exit %d: %s", code, errOut)
		}
		s, err := sqlite.Open(context.Background(), filepath.Join(dir, ".bollhav", "state.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		log, err := s.AuditLog(context.Background(), 1)
		if err != nil || len(log) != 1 || log[0].Action != "mark" {
			t.Fatalf("audit log %+v, %v", log, err)
		}
		return log[0].Actor
	}
	t.Setenv("BOLLHAV_ACTOR", "")
	t.Setenv("USER", "oncall")
	t.Setenv("LOGNAME", "")
	if got, want := mark(), "oncall@"+host; got != want {
		t.Errorf("audited as %q, want %q", got, want)
	}
	t.Setenv("USER", "")
	if got := mark(); got == "" || strings.Contains(got, "unknown") || !strings.HasSuffix(got, "@"+host) {
		t.Errorf("without $USER and $LOGNAME audited as %q, want the account's name at %s", got, host)
	}
	// The environment is no more trusted than an SSH client: a name with
	// escape sequences, or one that imitates another actor, is cleaned as
	// serve cleans an SSH user name (untrusted.UserName) — non-printing
	// characters dropped, quoted — so the audit log never holds an ESC.
	t.Setenv("USER", "eve\x1b]0;owned\x07\x1b[8m")
	if got, want := mark(), `"eve]0;owned[8m"@`+host; got != want {
		t.Errorf("$USER with escapes audited as %q, want %q", got, want)
	}
	t.Setenv("BOLLHAV_ACTOR", "ci\x1b[2J ssh:SHA256:forged")
	if got, want := mark(), `"ci[2J ssh:SHA256:forged"`; got != want {
		t.Errorf("BOLLHAV_ACTOR with escapes audited as %q, want %q", got, want)
	}
}

// TestUIMarkIsAuditedWithTheOSUserAndKeepsTheError: the built CLI's UI in
// a real terminal (tmux, 80×24) on the demo, with $USER=oncall and no
// BOLLHAV_ACTOR. Blocked (2) opens on the failed payments hour; p and y
// mark it pending. The audit log has the mark by oncall@HOST — the OS
// user, not "unknown" — and the hour, pending now, still has the error of
// its failure in its attempt history.
func TestUIMarkIsAuditedWithTheOSUserAndKeepsTheError(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds the demo and drives tmux")
	}
	dir, sp := demoCopy(t)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	capture, send := tmuxUIEnv(t, []string{"USER=oncall", "LOGNAME=", "BOLLHAV_ACTOR="}, "80", "24", "--spec", sp, "ui")
	waitScreen(t, capture, "the incidents", func(s string) bool { return strings.Contains(s, "raw.payments failed") })
	send("2")
	waitScreen(t, capture, "Blocked on the failed hour", func(s string) bool {
		return strings.Contains(s, "1 failed · 9 blocked") && strings.Contains(s, "›✗      4 raw.payments")
	})
	send("p")
	waitScreen(t, capture, "the mark's dialog", func(s string) bool {
		return strings.Contains(s, "Mark 1 unit of raw.payments pending in prod?")
	})
	send("y")
	waitScreen(t, capture, "the mark done", func(s string) bool { return strings.Contains(s, "marked 1 unit of raw.payments pending") })

	s, err := sqlite.Open(context.Background(), filepath.Join(dir, ".bollhav", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	log, err := s.AuditLog(context.Background(), 1)
	if err != nil || len(log) != 1 || log[0].Action != "mark" || log[0].Args["status"] != "pending" {
		t.Fatalf("newest audit entry %+v, %v; want the UI's mark", log, err)
	}
	if want := "oncall@" + host; log[0].Actor != want {
		t.Errorf("the UI's mark is audited as %q, want %q", log[0].Actor, want)
	}
	since := demoOutage(t, dir)
	var hour *state.Unit
	err = s.ScanUnits(context.Background(), state.UnitQuery{Model: "raw.payments", Window: state.Window{Since: since, Until: since.Add(time.Hour)}},
		func(u state.Unit) error { hour = &u; return nil })
	if err != nil || hour == nil || hour.Status != state.Pending || hour.Error != "" {
		t.Fatalf("the payments hour after the mark: %+v, %v; want pending, its error cleared", hour, err)
	}
	history, err := s.Attempts(context.Background(), hour.ID)
	if err != nil || len(history) == 0 || !strings.Contains(history[len(history)-1].Error, "the payment provider is down") {
		t.Errorf("the hour's attempt history %+v, %v; want its last error kept", history, err)
	}
}
