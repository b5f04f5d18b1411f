package cli

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state/sqlite"
)

// lookAheadWorld is a generated platform of 1,000 models (a spec of about
// 290 KB, over spec.LargeBytes) with 20,000 units, failed ones among them,
// in dir/state.db, its spec in dir/bollhav.yaml.
func lookAheadWorld(t *testing.T) (dir, specPath, db string) {
	t.Helper()
	// Seeding 1,000 models and 20,000 units takes most of a minute under
	// -race: it is done once per test binary, and each test gets a copy.
	dir = enginetest.CopyOfTemplate(t, "look-ahead", func(dir string) error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		s, err := sqlite.Open(context.Background(), filepath.Join(dir, "state.db"))
		if err != nil {
			return err
		}
		defer s.Close()
		if _, _, err := gen.Populate(context.Background(), s, engine.Options{Actor: "test"}, gen.Config{Models: 1000, Units: 20000, Seed: 1}); err != nil {
			return err
		}
		data := gen.Spec(gen.Config{Models: 1000, Seed: 1})
		if len(data) < spec.LargeBytes {
			return fmt.Errorf("the generated spec is %d bytes, under spec.LargeBytes: the test would not look ahead", len(data))
		}
		return os.WriteFile(filepath.Join(dir, "bollhav.yaml"), data, 0o644)
	})
	return dir, filepath.Join(dir, "bollhav.yaml"), filepath.Join(dir, "state.db")
}

func uiContext(specPath, dsn string) *cmdContext {
	return &cmdContext{
		Globals: Globals{Spec: specPath, DSN: dsn, AsOf: gen.AsOf.Format(time.RFC3339), Output: "text"},
		Streams: Streams{In: strings.NewReader(""), Out: &strings.Builder{}, Err: &strings.Builder{}},
		given:   map[string]bool{"dsn": dsn != ""},
	}
}

// The UI's open reads the first look while the spec parses, and the look
// it hands the UI is the one a glance after a serial open reads: the same
// roots in the same order, the same counts, details and pipelines (named
// after the spec arrived).
func TestUIOpenReadsTheFirstLookWhileTheSpecParses(t *testing.T) {
	_, specPath, db := lookAheadWorld(t)
	c := uiContext(specPath, db)
	if !c.looksAhead(t.Context()) {
		t.Fatal("a 1,000-model spec over an existing store does not look ahead")
	}
	e, look, closeStore, code := c.openUIEngine(context.Background(), "ui")
	if code != ExitOK || look == nil {
		t.Fatalf("exit %d, look %v; stderr %q", code, look, c.Err)
	}
	defer closeStore()
	sp, err := spec.Load(specPath)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(t.Context(), db) // a serial open of the same store
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	serial := engine.New(s, sp, engine.Options{Env: e.Env(), Now: e.Clock})
	want, err := serial.Glance(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(look, want) {
		t.Fatalf("the look read ahead differs from a serial glance:\n%+v\nwant\n%+v", look, want)
	}
	if len(look.Incidents) == 0 || slices.ContainsFunc(look.Incidents, func(i gate.Incident) bool { return i.Pipeline == "" }) {
		t.Fatalf("the look has no failed roots, or one without its pipeline: %+v", look.Incidents)
	}
	if e.Spec() == nil || e.Spec().Model(look.Incidents[0].Model) == nil {
		t.Fatal("the engine handed to the UI has no spec")
	}
}

// A bad large spec over an existing store is refused as every command
// refuses it — the same lines, the same exit code — and the store is left
// as it was, though it was opened while the spec parsed.
func TestUIOpenRefusesABadLargeSpecAndLeavesTheStore(t *testing.T) {
	dir, specPath, db := lookAheadWorld(t)
	data, _ := os.ReadFile(specPath)
	data = append(data, "  - name: not a name\n  - name: raw.x\n    chunking: {interval: 7x}\n"...)
	if err := os.WriteFile(specPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	before, names := fileSum(t, db), dirNames(t, dir)
	code, out, errOut := run(t, "ui", "--spec", specPath, "--dsn", db)
	scode, _, serrOut := run(t, "status", "--spec", specPath, "--dsn", db)
	if code != ExitUsage || out != "" || scode != ExitUsage {
		t.Fatalf("ui: exit %d, stdout %q; status: exit %d", code, out, scode)
	}
	if got, want := errOut, strings.ReplaceAll(serrOut, "bollhav status:", "bollhav ui:"); got != want || !strings.Contains(got, "problems") {
		t.Errorf("ui says\n%s\nstatus says\n%s", got, serrOut)
	}
	if fileSum(t, db) != before || !slices.Equal(dirNames(t, dir), names) {
		t.Errorf("the store's folder changed: %v, was %v", dirNames(t, dir), names)
	}
}

// The UI looks ahead only for a large spec and a SQLite store that opening
// will not write to: a bad spec must never leave a new store file, or a
// migrated one, behind.
func TestUIOpenLooksAheadOnlyAtAStoreThatIsThere(t *testing.T) {
	dir, specPath, db := lookAheadWorld(t)
	small := writeSpec(t, smallSpec)
	empty := filepath.Join(dir, "empty.db") // SQLite reads an empty file as a new, unmigrated store
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, spec, dsn string
		want            bool
	}{
		{"a large spec, a current SQLite store", specPath, db, true},
		{"a large spec, a SQLite file Open would migrate", specPath, empty, false},
		{"a large spec, a PostgreSQL server (opened after the spec)", specPath, "postgres://bollhav@127.0.0.1:1/none", false},
		{"a small spec", small, db, false},
		{"a large spec, no store file yet", specPath, filepath.Join(dir, "new.db"), false},
		{"a large spec, the default store beside it, not made yet", specPath, "", false},
		{"a large spec, a directory for a store", specPath, dir, false},
		{"no spec file", filepath.Join(dir, "missing.yaml"), db, false},
	} {
		if got := uiContext(c.spec, c.dsn).looksAhead(t.Context()); got != c.want {
			t.Errorf("%s: looks ahead %v, want %v", c.name, got, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "new.db")); !os.IsNotExist(err) {
		t.Errorf("asking made a store file: %v", err)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("asking wrote to the unmigrated file: %v, %v", fi, err)
	}
}

func fileSum(t *testing.T, p string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
