package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// TestServeViewerRIsRefusedAndAudited (issue 19's done-when): over SSH a
// viewer's header says who they are and that they are a viewer; r (run
// the window) shows "read-only" on their screen and adds one audit row,
// the refused run, under their key.
func TestServeViewerRIsRefusedAndAudited(t *testing.T) {
	s := startServe(t)
	st := s.store(t)
	before, err := st.AuditLog(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	screen, keys := s.session(t, s.viewer)
	screen.waitFor(t, "alice (viewer)", "Pipelines", "raw.a")
	io.WriteString(keys, "r")
	screen.waitFor(t, "read-only: run refused")
	vfp := gossh.FingerprintSHA256(s.viewer.PublicKey())
	deadline := time.Now().Add(10 * time.Second)
	for {
		log, err := st.AuditLog(t.Context(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) == len(before)+1 {
			a := log[0]
			if a.Action != "run" || a.Outcome != "refused: read-only" || a.Actor != "ssh:"+vfp+" alice" {
				t.Errorf("the new audit row %+v, want the viewer's refused run", a)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d audit rows after the viewer's r, want %d", len(log), len(before)+1)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if runs, _ := st.Runs(t.Context(), "", 10); len(runs) != 0 {
		t.Errorf("a viewer's r started %d runs", len(runs))
	}
}

// TestServeIdleTimeoutWarnsThenCloses: a session nobody types in is warned
// before the idle timeout and then closed with a line saying why, read
// after the UI gave the screen back; one only watching a live view stays
// unless --idle-closes-watchers (here it is given, so the watcher goes).
func TestServeIdleTimeoutWarnsThenCloses(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bollhav.yaml"), []byte(serveSpec), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServeIn(t, dir, filepath.Join(dir, "state.db"), "--idle-timeout", "3s", "--idle-closes-watchers")
	screen, _ := s.session(t, s.operator)
	screen.waitFor(t, "alice (operator)")
	screen.waitFor(t, "no key pressed for", "this session closes in")
	screen.waitFor(t, "bollhav: the session closed after 3s without a key press")
	text := screen.text()
	if i, j := strings.LastIndex(text, "this session closes in"), strings.LastIndex(text, "the session closed after"); i > j {
		t.Errorf("the warning came after the close:\n%s", text)
	}
}

// TestServeIdleTimeoutKeepsWatchers: without --idle-closes-watchers a
// session that only watches a live view outlives the idle timeout, and
// sees no warning.
func TestServeIdleTimeoutKeepsWatchers(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bollhav.yaml"), []byte(serveSpec), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServeIn(t, dir, filepath.Join(dir, "state.db"), "--idle-timeout", "2s")
	screen, keys := s.session(t, s.operator)
	screen.waitFor(t, "● live")
	time.Sleep(4 * time.Second)
	if text := screen.text(); strings.Contains(text, "closes in") || strings.Contains(text, "session closed") {
		t.Fatalf("a watching session was warned or closed:\n%s", text)
	}
	// Still there: it answers a key.
	io.WriteString(keys, "3")
	screen.waitFor(t, "Runs")
}
