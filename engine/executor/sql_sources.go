package executor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/bollhav/bollhav/engine/source"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// sourceLoads remembers, per process, the version each hardcoded or file
// source was last loaded with, so a run of many units checks the store once
// per source rather than once per unit. The store's own record (data_loads)
// is what decides across processes.
type sourceLoads struct {
	mu     sync.Mutex
	loaded map[string]string
}

// loadSources loads u's hardcoded and file sources into their tables before
// the model's SQL reads them (the design's planned follow-up: bollhav writes
// the constant itself and re-applies it when its content_hash changes). A
// file is loaded when it is there and has changed; with archive_folder it is
// moved away after the load commits, and a missing file then means "already
// loaded": the table keeps the last load. at is the engine's clock, which
// the store records as the time of each load.
// db is the database the model's data lives in: its sources are loaded
// there, since its SQL reads them there.
func (d *dataExecutor) loadSources(ctx context.Context, u UnitRun, db database, at time.Time) error {
	d.loads.mu.Lock()
	defer d.loads.mu.Unlock()
	if d.loads.loaded == nil {
		d.loads.loaded = map[string]string{}
	}
	for _, src := range u.Model.Upstream {
		var err error
		switch src.Kind {
		case spec.KindHardcoded:
			err = d.loadHardcoded(ctx, db, src, at)
		case spec.KindFile:
			err = d.loadFile(ctx, db, src, u.SpecDir, at)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// loadKey names a source's load in one database, so a source read by
// models on two databases is loaded into each.
func loadKey(db database, src spec.Source) string { return db.key + "\x00" + src.Name }

func (d *dataExecutor) loadHardcoded(ctx context.Context, db database, src spec.Source, at time.Time) error {
	h := src.Hardcoded
	version := h.ContentHash()
	if d.loads.loaded[loadKey(db, src)] == version {
		return nil
	}
	job := state.DataJob{Target: spec.LoadedTable(src), Version: version}
	if h.Rows != nil {
		job.Kind = state.DataTable
		job.Columns, job.Rows = source.HardcodedTable(h.Rows)
	} else {
		// A sql constant is a view: always current, nothing to copy.
		job.Kind, job.Query = state.DataView, h.SQL
	}
	if _, err := db.load(ctx, job, at); err != nil {
		return fmt.Errorf("hardcoded source %s: materialising: %w", src.Name, err)
	}
	d.loads.loaded[loadKey(db, src)] = version
	return nil
}

func (d *dataExecutor) loadFile(ctx context.Context, db database, src spec.Source, specDir string, at time.Time) error {
	f := src.File
	path := source.ResolvePath(f.Path, specDir)
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) && f.ArchiveFolder != "" {
		return nil // loaded and archived by an earlier unit or run
	}
	if err != nil {
		return fmt.Errorf("file source %s: %w", src.Name, err)
	}
	version := "file:" + path + ":" + strconv.FormatInt(info.Size(), 10) + ":" + info.ModTime().UTC().Format(time.RFC3339Nano)
	if d.loads.loaded[loadKey(db, src)] == version {
		return nil
	}
	r, err := source.OpenFile(*f, specDir)
	if err != nil {
		return err
	}
	defer r.Close()
	cols := make([]state.DataColumn, len(r.Columns()))
	for i, c := range r.Columns() {
		cols[i] = state.DataColumn{Name: c.Name, Type: source.FileColumnTypes[c.Type]}
	}
	job := state.DataJob{Kind: state.DataTable, Target: spec.LoadedTable(src), Columns: cols, Rows: r, Version: version}
	res, err := db.load(ctx, job, at)
	if err != nil {
		return fmt.Errorf("file source %s: loading %s: %w", src.Name, f.Path, err)
	}
	d.loads.loaded[loadKey(db, src)] = version
	if res.Skipped {
		return nil
	}
	if _, err := source.Archive(*f, specDir, d.archiveClock); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
