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
// does not carry over). The seeding's standard output is kept in
// demoSeedOutput for the test of what it says. A rerun of the demo in the
// same folder (whose file sources watch modification times, which a copy
// loses) seeds its own with seedDemoDir.
func demoCopy(t *testing.T) (dir, sp string) {
	t.Helper()
	dir = enginetest.CopyOfTemplate(t, "shop", func(dir string) error {
		code, out, errOut := run(t, "demo", "--dir", dir, "--no-ui")
		if code != ExitOK {
			return fmt.Errorf("demo exit %d\nstdout %s\nstderr %s", code, out, errOut)
		}
		demoSeedOutput = out
		return nil
	})
	return dir, filepath.Join(dir, "bollhav.yaml")
}

// demoSeedOutput is what `demo --no-ui` printed when it seeded demoCopy's
// template; set once, before any copy is handed out.
var demoSeedOutput string

// demoOutage is DemoOutage, failing the test on error.
func demoOutage(t *testing.T, dir string) time.Time {
	t.Helper()
	at, err := DemoOutage(dir)
	if err != nil {
		t.Fatal(err)
	}
	return at
}
