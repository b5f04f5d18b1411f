package source

import (
	"errors"
	"fmt"
	"github.com/bollhav/bollhav/engine/spec"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Archive moves a loaded file into its archive_folder (moved there
// after a successful load, so the same file is never processed twice) and
// returns where it went; with no archive_folder it
// does nothing and returns "". The engine calls it only after the load has
// committed: a load that failed or rolled back leaves the file where it was,
// to be loaded again.
//
// Paths are relative to baseDir, and the folder is created if missing. An
// archived file is never overwritten — the same export dropped twice is the
// case archiving exists for — so a name already taken gets a UTC timestamp
// before its extension ("orders.20260131T120000Z.csv"), then a counter.
// now is the clock of that timestamp, passed in by the caller (the
// executor's wall clock) rather than read from a global, so a test gives
// its own.
func Archive(src spec.SourceFile, baseDir string, now func() time.Time) (string, error) {
	if src.ArchiveFolder == "" {
		return "", nil
	}
	from := ResolvePath(src.Path, baseDir)
	folder := ResolvePath(src.ArchiveFolder, baseDir)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return "", fmt.Errorf("file source %s: archive_folder: %w", src.Path, err)
	}
	base := filepath.Base(from)
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	stamp := now().UTC().Format("20060102T150405Z")
	for i := 0; i < 1000; i++ {
		name := base
		switch {
		case i == 1:
			name = stem + "." + stamp + ext
		case i > 1:
			name = stem + "." + stamp + "-" + strconv.Itoa(i) + ext
		}
		to := filepath.Join(folder, name)
		err := moveNoReplace(from, to)
		if err == nil {
			return to, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("file source %s: archive to %s: %w", src.Path, to, err)
		}
	}
	return "", fmt.Errorf("file source %s: archive: %s already holds 1000 files named like %s", src.Path, folder, base)
}

// moveNoReplace moves from to to, failing with fs.ErrExist when to exists.
// os.Rename would replace to silently; a hard link cannot, so the file is
// linked and then unlinked. Where linking is impossible (another file
// system, or one without hard links) it is copied to a file created
// exclusively, synced, and the original removed.
func moveNoReplace(from, to string) error {
	err := os.Link(from, to)
	if errors.Is(err, fs.ErrExist) {
		return err
	}
	if err != nil {
		if _, statErr := os.Stat(from); statErr != nil {
			return statErr
		}
		if err := copyExclusive(from, to); err != nil {
			return err
		}
	}
	return os.Remove(from)
}

func copyExclusive(from, to string) (err error) {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(to) // never leave half a file under the archived name
		}
	}()
	if _, err = io.Copy(out, in); err != nil {
		return err
	}
	return out.Sync()
}
