package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest"
)

// demoCopy returns a copy of a demo folder seeded once per run of this
// package's tests, and its spec (enginetest.CopyOfTemplate says what a copy
// does not carry over). The tests of the demo command itself (the seeding's
// output, a rerun in the same folder) seed their own with seedDemoDir.
func demoCopy(t *testing.T) (dir, sp string) {
	t.Helper()
	dir = enginetest.CopyOfTemplate(t, "shop", func(dir string) error {
		code, out, errOut := run(t, "demo", "--dir", dir, "--no-ui")
		if code != ExitOK {
			return fmt.Errorf("demo exit %d\nstdout %s\nstderr %s", code, out, errOut)
		}
		return nil
	})
	return dir, filepath.Join(dir, "bollhav.yaml")
}

// demoOutage is when the payment provider's failed hour in the demo folder
// dir starts: the time the demo wrote to scripts/outage.
func demoOutage(t *testing.T, dir string) time.Time {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "scripts", "outage"))
	if err != nil {
		t.Fatal(err)
	}
	at, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return at
}
