package enginetest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// A template is a folder filled once per test binary and copied for each
// test that asks for it: seeding the demo shop runs its three pipelines
// twice (6–20 s, the most of it under -race), and most tests of it only
// read it or change a unit or two. Each test gets a copy of its own, so no
// test sees another's changes.
type template struct {
	once sync.Once
	dir  string
	err  error
}

var (
	templatesMu sync.Mutex
	templates   = map[string]*template{}
)

// CopyOfTemplate returns a copy, in t's temporary folder, of the folder
// that seed fills once per test binary under name (the first test to ask
// seeds it; a failed seed fails every test that asks). What a copy does not
// carry over are the files' modification times, which file sources watch:
// a run in a copy may load its landing files again, so a test of exactly
// that seeds its own folder. The package's TestMain removes the templates
// with RemoveTemplates once every test ran.
func CopyOfTemplate(t testing.TB, name string, seed func(dir string) error) string {
	t.Helper()
	templatesMu.Lock()
	tp, ok := templates[name]
	if !ok {
		tp = &template{}
		templates[name] = tp
	}
	templatesMu.Unlock()
	tp.once.Do(func() {
		base, err := os.MkdirTemp("", "bollhav-template-")
		if err != nil {
			tp.err = err
			return
		}
		tp.dir = filepath.Join(base, name)
		if err := seed(tp.dir); err != nil {
			tp.err = fmt.Errorf("seeding the template %s: %w", name, err)
		}
	})
	if tp.err != nil {
		t.Fatal(tp.err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(tp.dir)); err != nil {
		t.Fatalf("copying the template %s: %v", name, err)
	}
	return dir
}

// RemoveTemplates removes every template's folder; a package whose tests
// use CopyOfTemplate calls it from TestMain after its tests ran.
func RemoveTemplates() {
	templatesMu.Lock()
	defer templatesMu.Unlock()
	for name, tp := range templates {
		if tp.dir != "" {
			_ = os.RemoveAll(filepath.Dir(tp.dir))
		}
		delete(templates, name)
	}
}
