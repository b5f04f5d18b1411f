package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

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
// the model's SQL reads them (seed 000's "planned follow-up": bollhav writes
// the constant itself and re-applies it when its content_hash changes). A
// file is loaded when it is there and has changed; with archive_folder it is
// moved away after the load commits, and a missing file then means "already
// loaded": the table keeps the last load.
func (d *dataExecutor) loadSources(ctx context.Context, u UnitRun) error {
	d.loads.mu.Lock()
	defer d.loads.mu.Unlock()
	if d.loads.loaded == nil {
		d.loads.loaded = map[string]string{}
	}
	for _, src := range u.Model.Upstream {
		var err error
		switch src.Kind {
		case spec.KindHardcoded:
			err = d.loadHardcoded(ctx, src)
		case spec.KindFile:
			err = d.loadFile(ctx, src, u.SpecDir)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *dataExecutor) loadHardcoded(ctx context.Context, src spec.Source) error {
	h := src.Hardcoded
	version := h.ContentHash()
	if d.loads.loaded[src.Name] == version {
		return nil
	}
	job := state.DataJob{Target: spec.LoadedTable(src), Version: version}
	if h.Rows != nil {
		job.Kind = state.DataTable
		job.Columns, job.Rows = hardcodedTable(h.Rows)
	} else {
		// A sql constant is a view: always current, nothing to copy.
		job.Kind, job.Query = state.DataView, h.SQL
	}
	if _, err := d.store.RunData(ctx, job, nil, time.Time{}); err != nil {
		return fmt.Errorf("hardcoded source %s: materialising: %w", src.Name, err)
	}
	d.loads.loaded[src.Name] = version
	return nil
}

func (d *dataExecutor) loadFile(ctx context.Context, src spec.Source, specDir string) error {
	f := src.File
	path := resolvePath(f.Path, specDir)
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) && f.ArchiveFolder != "" {
		return nil // loaded and archived by an earlier unit or run
	}
	if err != nil {
		return fmt.Errorf("file source %s: %w", src.Name, err)
	}
	version := "file:" + path + ":" + strconv.FormatInt(info.Size(), 10) + ":" + info.ModTime().UTC().Format(time.RFC3339Nano)
	if d.loads.loaded[src.Name] == version {
		return nil
	}
	r, err := OpenFileSource(*f, specDir)
	if err != nil {
		return err
	}
	defer r.Close()
	cols := make([]state.DataColumn, len(r.Columns()))
	for i, c := range r.Columns() {
		cols[i] = state.DataColumn{Name: c.Name, Type: fileColumnTypes[c.Type]}
	}
	job := state.DataJob{Kind: state.DataTable, Target: spec.LoadedTable(src), Columns: cols, Rows: r, Version: version}
	res, err := d.store.RunData(ctx, job, nil, time.Time{})
	if err != nil {
		return fmt.Errorf("file source %s: loading %s: %w", src.Name, f.Path, err)
	}
	d.loads.loaded[src.Name] = version
	if res.Skipped {
		return nil
	}
	if _, err := ArchiveFileSource(*f, specDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

var fileColumnTypes = map[ColumnType]state.ColumnType{
	TypeText: state.ColumnText, TypeInt: state.ColumnInt, TypeFloat: state.ColumnFloat,
	TypeBool: state.ColumnBool, TypeDate: state.ColumnDate, TypeDatetime: state.ColumnDatetime,
}

// hardcodedTable turns inline rows into columns and rows. The columns are
// every key of every row in sorted order (a YAML mapping's key order is not
// kept); a column's type is the one all its values share, integers widen to
// floats, and any other mix is text. A key missing from a row is NULL.
func hardcodedTable(rows []map[string]any) ([]state.DataColumn, state.RowSource) {
	types := map[string]state.ColumnType{}
	seen := map[string]bool{}
	var names []string
	for _, r := range rows {
		for k, v := range r {
			if !seen[k] {
				seen[k] = true
				names = append(names, k)
			}
			if v == nil {
				continue
			}
			t := valueType(v)
			if old, ok := types[k]; ok && old != t {
				switch {
				case old == state.ColumnInt && t == state.ColumnFloat, old == state.ColumnFloat && t == state.ColumnInt:
					t = state.ColumnFloat
				default:
					t = state.ColumnText
				}
			}
			types[k] = t
		}
	}
	slices.Sort(names)
	cols := make([]state.DataColumn, len(names))
	for i, n := range names {
		cols[i] = state.DataColumn{Name: n, Type: types[n]}
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		row := make([]any, len(cols))
		for j, c := range cols {
			row[j] = columnValue(r[c.Name], c.Type)
		}
		out[i] = row
	}
	return cols, &memRows{rows: out}
}

func valueType(v any) state.ColumnType {
	switch v.(type) {
	case bool:
		return state.ColumnBool
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return state.ColumnInt
	case float32, float64:
		return state.ColumnFloat
	}
	return state.ColumnText
}

// columnValue converts v to its column's type: text columns get the value's
// text, float columns widen integers.
func columnValue(v any, t state.ColumnType) any {
	if v == nil {
		return nil
	}
	switch t {
	case state.ColumnText:
		if s, ok := v.(string); ok {
			return s
		}
		return fmt.Sprint(v)
	case state.ColumnFloat:
		if valueType(v) == state.ColumnInt {
			f, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
			return f
		}
	}
	return v
}

// memRows serves rows held in memory.
type memRows struct {
	rows [][]any
	i    int
}

func (m *memRows) Next() ([]any, error) {
	if m.i >= len(m.rows) {
		return nil, io.EOF
	}
	m.i++
	return m.rows[m.i-1], nil
}
