package source

import (
	"github.com/bollhav/bollhav/engine/spec"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestArchiveFileSource(t *testing.T) {
	at := time.Date(2026, 1, 31, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	now := func() time.Time { return at }

	dir := t.TempDir()
	drop := func(content string) {
		if err := os.MkdirAll(filepath.Join(dir, "dropzone"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "dropzone"), "orders.csv", []byte(content))
	}
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		return string(b)
	}
	src := spec.SourceFile{Path: "dropzone/orders.csv", ArchiveFolder: "archive/orders"}

	drop("first\n")
	// Opening and reading never moves the file: only the call after commit.
	if _, err := ReadFile(src, dir); err != nil {
		t.Fatal(err)
	}
	if read("dropzone/orders.csv") != "first\n" {
		t.Fatal("reading moved the file")
	}
	if _, err := os.Stat(filepath.Join(dir, "archive")); !os.IsNotExist(err) {
		t.Fatalf("reading created the archive folder: %v", err)
	}

	for i, want := range []struct{ content, name string }{
		{"first\n", "archive/orders/orders.csv"},
		{"second\n", "archive/orders/orders.20260131T110000Z.csv"},
		{"third\n", "archive/orders/orders.20260131T110000Z-2.csv"},
	} {
		if i > 0 {
			drop(want.content)
		}
		got, err := Archive(src, dir, now)
		if err != nil {
			t.Fatal(err)
		}
		if got != filepath.Join(dir, want.name) {
			t.Errorf("archived to %s, want %s", got, want.name)
		}
		if read(want.name) != want.content {
			t.Errorf("%s holds %q, want %q", want.name, read(want.name), want.content)
		}
		if _, err := os.Stat(filepath.Join(dir, "dropzone/orders.csv")); !os.IsNotExist(err) {
			t.Errorf("the source file is still there after archiving: %v", err)
		}
	}
	if read("archive/orders/orders.csv") != "first\n" {
		t.Error("the first archived file was overwritten")
	}

	if got, err := Archive(spec.SourceFile{Path: "dropzone/orders.csv"}, dir, now); got != "" || err != nil {
		t.Errorf("no archive_folder: %q, %v", got, err)
	}
	if _, err := Archive(src, dir, now); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("archiving a missing file: %v", err)
	}
}

func TestCopyExclusiveNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a", []byte("new"))
	writeFile(t, dir, "b", []byte("old"))
	if err := copyExclusive(filepath.Join(dir, "a"), filepath.Join(dir, "b")); !os.IsExist(err) {
		t.Errorf("copy onto an existing file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b")); string(b) != "old" {
		t.Errorf("b = %q", b)
	}
	if err := copyExclusive(filepath.Join(dir, "a"), filepath.Join(dir, "c")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "c")); string(b) != "new" {
		t.Errorf("c = %q", b)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}
