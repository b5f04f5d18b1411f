package state

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one schema migration file of a backend, NNNN_name.sql.
type Migration struct {
	Version int
	File    string // the file's name, NNNN_name.sql
	SQL     string
}

// ReadMigrations reads the NNNN_name.sql files of dir in version order and
// checks that their versions run 1, 2, 3 … without a gap or a duplicate, so
// a mistake in a release is caught by its tests rather than in a customer's
// database. Both backends read their embedded migrations with it.
func ReadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: the name must start with a positive version number and _", e.Name())
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, File: e.Name(), SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d; versions must run 1, 2, 3 … without gaps or duplicates", strings.TrimSuffix(m.File, ".sql"), i+1)
		}
	}
	return ms, nil
}
