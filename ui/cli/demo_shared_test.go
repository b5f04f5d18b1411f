package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// sharedDemo is one demo folder seeded once per run of this package's
// tests: seeding runs the demo's three pipelines twice (6–20 s, the most of
// it under -race), and most tests of the demo only read it or change a unit
// or two. Each test gets a copy of its own (demoCopy), so no test sees
// another's changes; the tests of the demo command itself (the seeding's
// output, a rerun in the same folder) still seed their own (seedDemoDir).
var sharedDemo struct {
	once sync.Once
	dir  string
	err  string // why seeding failed, reported to every test that asks
}

// demoCopy returns a copy of the shared demo folder and its spec, seeding
// it first when no test has yet. The copy lives in t's temporary folder.
// What the copy does not carry over: the landing files' modification
// times, which file sources watch, so a run in a copy may load the landing
// files again; a test of that runs the demo itself.
func demoCopy(t *testing.T) (dir, sp string) {
	t.Helper()
	sharedDemo.once.Do(func() {
		base, err := os.MkdirTemp("", "bollhav-cli-demo-")
		if err != nil {
			sharedDemo.err = err.Error()
			return
		}
		sharedDemo.dir = filepath.Join(base, "shop")
		code, out, errOut := run(t, "demo", "--dir", sharedDemo.dir, "--no-ui")
		if code != ExitOK {
			sharedDemo.err = fmt.Sprintf("demo exit %d", code) + "\nstdout " + out + "\nstderr " + errOut
		}
	})
	if sharedDemo.err != "" {
		t.Fatalf("seeding the shared demo: %s", sharedDemo.err)
	}
	dir = filepath.Join(t.TempDir(), "shop")
	if err := os.CopyFS(dir, os.DirFS(sharedDemo.dir)); err != nil {
		t.Fatalf("copying the shared demo: %v", err)
	}
	return dir, filepath.Join(dir, "bollhav.yaml")
}

// removeSharedDemo removes the shared demo's folder once every test ran.
func removeSharedDemo() {
	if sharedDemo.dir != "" {
		_ = os.RemoveAll(filepath.Dir(sharedDemo.dir))
	}
}
