package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/state/sqlite"
)

// TestLocalMarkIsAuditedWithTheOSUser: a mark at the command line, with no
// BOLLHAV_ACTOR, is audited as $USER@host; with neither $USER nor $LOGNAME
// it is still the account's name, never "unknown".
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
}
