package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBadInputEveryCommand: a missing spec, a bad DSN (with a password in
// it), an unknown model and an unparsable time each get one clear line (a
// usage error may add the help hint) and exit 2 from every command that
// takes them, and the password is never printed.
func TestBadInputEveryCommand(t *testing.T) {
	sp := writeSpec(t, smallSpec)
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	const secret = "Sentinel-Pa55w0rd"
	badDSN := "postgres://u:" + secret + "@127.0.0.1:1/db?connect_timeout=2"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"status missing spec", []string{"status", "--spec", missing}, "nope.yaml"},
		{"units missing spec", []string{"units", "raw.a", "--spec", missing}, "nope.yaml"},
		{"blocked missing spec", []string{"blocked", "--spec", missing}, "nope.yaml"},
		{"why missing spec", []string{"why", "raw.a", "--at", "2026-01-01", "--spec", missing}, "nope.yaml"},
		{"plan missing spec", []string{"plan", "--spec", missing}, "nope.yaml"},
		{"run missing spec", []string{"run", "--spec", missing}, "nope.yaml"},
		{"mark missing spec", []string{"mark", "raw.a", "--since", "2026-01-01", "--until", "2026-01-02", "--status", "pending", "--spec", missing}, "nope.yaml"},
		{"status bad dsn", []string{"status", "--spec", sp, "--dsn", badDSN}, "127.0.0.1"},
		{"blocked bad dsn", []string{"blocked", "--spec", sp, "--dsn", badDSN}, "127.0.0.1"},
		{"run bad dsn", []string{"run", "--spec", sp, "--dsn", badDSN}, "127.0.0.1"},
		{"watch bad dsn", []string{"watch", "--spec", sp, "--dsn", badDSN}, "127.0.0.1"},
		{"units unknown model", []string{"units", "raw.x", "--spec", sp}, "raw.x"},
		{"why unknown model", []string{"why", "raw.x", "--at", "2026-01-01", "--spec", sp}, "raw.x"},
		{"run unknown model", []string{"run", "raw.x", "--spec", sp}, "raw.x"},
		{"plan unknown model", []string{"plan", "raw.x", "--spec", sp}, "raw.x"},
		{"mark unknown model", []string{"mark", "raw.x", "--since", "2026-01-01", "--until", "2026-01-02", "--status", "pending", "--spec", sp}, "raw.x"},
		{"why bad time", []string{"why", "raw.a", "--at", "yesterday-ish", "--spec", sp}, "yesterday-ish"},
		{"run bad time", []string{"run", "--since", "2026-13-01", "--until", "2026-01-02", "--spec", sp}, "2026-13-01"},
		{"units bad time", []string{"units", "raw.a", "--since", "soon", "--spec", sp}, "soon"},
		{"as-of bad time", []string{"status", "--as-of", "noonish", "--spec", sp}, "noonish"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := run(t, c.args...)
			lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
			if len(lines) == 2 && strings.HasPrefix(lines[1], "Run 'bollhav help") {
				lines = lines[:1]
			}
			if code != ExitUsage || out != "" || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line naming %q", code, out, errOut, c.want)
			}
			if strings.Contains(errOut, secret) {
				t.Error("the password reached stderr")
			}
		})
	}
}
