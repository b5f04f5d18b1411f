package cli

import (
	"fmt"
	"path/filepath"
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

// demoOutage is DemoOutage, failing the test on error.
func demoOutage(t *testing.T, dir string) time.Time {
	t.Helper()
	at, err := DemoOutage(dir)
	if err != nil {
		t.Fatal(err)
	}
	return at
}
