package source

import (
	"errors"
	"fmt"
	"github.com/bollhav/bollhav/engine/spec"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FileFormat is how a file source's bytes are laid out.
type FileFormat string

// The formats a file source can be read in. TSV is CSV with a tab separator,
// kept apart only so that the separator default follows the format.
const (
	FormatCSV       FileFormat = "csv"
	FormatTSV       FileFormat = "tsv"
	FormatJSONLines FileFormat = "jsonl"
)

// defaultSeparator is the CSV separator when neither separator nor a .tsv
// ending says otherwise. Polars, where these source fields come from, sniffs
// it; bollhav does not guess, so the same file always loads the same way.
const defaultSeparator = ','

// FileError is a problem with a file source's content or config. It
// names the file as the spec does, and the line, byte column and column name
// when they are known, so a user can open the file at the fault.
type FileError struct {
	Path string
	// Line is the 1-based physical line of the file (top rows removed by
	// remove_top_rows still count), 0 when the error is not about a line.
	Line int
	// Column is the 1-based byte column in the line, 0 when unknown.
	Column int
	// Field is the name of the column the value belongs to, "" when none.
	Field string
	Err   error
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Field != "" {
		fmt.Fprintf(&b, "column %q: ", e.Field)
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *FileError) Unwrap() error { return e.Err }

// FileReader streams the rows of a file source. Column types are inferred
// from a sample — the first infer_schema_length rows, every row when it is
// unset, like polars, which these source fields come from — which is held in
// memory; the rest of the file is read one row at a time, so a large file
// with a bounded infer_schema_length loads in bounded memory. A later value
// that does not fit its column's inferred type is an error naming its line,
// never a silent NULL: a loader must not lose data.
//
// Rows are []any with one value per column: nil for an empty cell (or a key
// missing from a JSON line), int64, float64, bool, or string — dates as
// "2026-01-31", date-times as "2026-01-31T13:45:00", and text as is.
type FileReader struct {
	path    string // as the spec wrote it, for messages
	format  FileFormat
	file    *os.File
	src     recordSource
	columns []Column
	convert []func(cell) (any, error)
	// sample is the rows read for inference, served first; sampleLimit is
	// how many rows it was allowed to hold (-1: all).
	sample      []rawRecord
	sampleLimit int
	line        int
}

// FileTable is a whole file source in memory: what ReadFile returns
// for callers that want every row at once.
type FileTable struct {
	Path    string
	Format  FileFormat
	Columns []Column
	Rows    [][]any
}

// OpenFile opens the file source src, whose relative path is relative
// to baseDir (the spec's directory), reads its header and its inference
// sample, and returns a reader positioned at the first row. Every SourceFile
// field is honoured: see the FileReader and the readers of each format.
func OpenFile(src spec.SourceFile, baseDir string) (*FileReader, error) {
	if src.Path == "" {
		return nil, errors.New("file source has no path")
	}
	format, sep, err := fileLayout(src)
	if err != nil {
		return nil, &FileError{Path: src.Path, Err: err}
	}
	dec, err := lookupEncoding(src.Encoding)
	if err != nil {
		return nil, &FileError{Path: src.Path, Err: err}
	}
	dates, err := parseDateFormat(src.DateFormat)
	if err != nil {
		return nil, &FileError{Path: src.Path, Err: err}
	}
	f, err := os.Open(ResolvePath(src.Path, baseDir))
	if err != nil {
		return nil, fmt.Errorf("file source %s: %w", src.Path, err)
	}
	r := &FileReader{path: src.Path, format: format, file: f, sampleLimit: -1}
	if src.InferSchemaLength != nil {
		r.sampleLimit = *src.InferSchemaLength
	}
	if err := r.open(src, dec, sep, dates); err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *FileReader) open(src spec.SourceFile, dec textDecoder, sep byte, dates dateLayout) error {
	text, skipped, err := dec.reader(r.file, r.path, src.RemoveTopRows)
	if err != nil {
		return err
	}
	switch r.format {
	case FormatJSONLines:
		r.src = newJSONLinesSource(text, r.path, skipped, dec.strict)
	default:
		if r.src, err = newCSVSource(text, r.path, skipped, sep, dec.strict); err != nil {
			return err
		}
	}
	// JSON lines name their columns in their rows, so at least one row is
	// read even when infer_schema_length is 0.
	n := r.sampleLimit
	if n == 0 && r.format == FormatJSONLines {
		n = 1
	}
	for n < 0 || len(r.sample) < n {
		rec, err := r.src.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		r.sample = append(r.sample, rec)
	}
	r.src.freeze(len(r.sample))
	names := r.src.columns()
	r.columns = make([]Column, len(names))
	r.convert = make([]func(cell) (any, error), len(names))
	for i, name := range names {
		t := TypeText
		if r.sampleLimit != 0 {
			t = inferType(r.sample, i, dates)
		}
		r.columns[i] = Column{Name: name, Type: t}
		r.convert[i] = converter(t, dates)
	}
	return nil
}

// Path is the file's path as the spec wrote it.
func (r *FileReader) Path() string { return r.path }

// Format is the format the file is read in.
func (r *FileReader) Format() FileFormat { return r.format }

// Columns are the file's columns in order, with their inferred types.
func (r *FileReader) Columns() []Column { return r.columns }

// Line is the physical line the last row returned by Next starts on.
func (r *FileReader) Line() int { return r.line }

// Next returns the next row, or io.EOF after the last one.
func (r *FileReader) Next() ([]any, error) {
	var rec rawRecord
	if len(r.sample) > 0 {
		rec, r.sample = r.sample[0], r.sample[1:]
	} else {
		var err error
		if rec, err = r.src.next(); err != nil {
			return nil, err
		}
	}
	r.line = rec.line
	row := make([]any, len(r.columns))
	for i := range r.columns {
		if i >= len(rec.cells) {
			continue
		}
		v, err := r.convert[i](rec.cells[i])
		if err != nil {
			return nil, &FileError{Path: r.path, Line: rec.line, Field: r.columns[i].Name, Err: r.typeMismatch(err)}
		}
		row[i] = v
	}
	return row, nil
}

// typeMismatch says how to get past a value the sample did not foresee.
func (r *FileReader) typeMismatch(err error) error {
	if r.sampleLimit < 0 {
		return err // every row was in the sample: cannot happen
	}
	return fmt.Errorf("%w, the type inferred from the first %d rows; raise infer_schema_length, or remove it to scan every row", err, r.sampleLimit)
}

// Close closes the file.
func (r *FileReader) Close() error { return r.file.Close() }

// ResolvePath makes a spec path absolute against baseDir: the spec, not the
// directory bollhav was started from, anchors relative paths.
func ResolvePath(p, baseDir string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(baseDir, p)
}

// formatOfEnding maps a file extension or file_ending to a format.
var formatOfEnding = map[string]FileFormat{"csv": FormatCSV, "tsv": FormatTSV, "tab": FormatTSV, "jsonl": FormatJSONLines, "ndjson": FormatJSONLines}

// unsupportedEndings are formats a user may reasonably try, with the reason
// they are refused: reading them as CSV would load garbage.
var unsupportedEndings = map[string]string{
	"json":    "a .json file is read only as JSON lines (one object per line): set file_ending: jsonl if it is one",
	"parquet": "Parquet is not supported yet",
	"xlsx":    "spreadsheets are not supported: export the sheet as CSV",
	"xls":     "spreadsheets are not supported: export the sheet as CSV",
	"gz":      "compressed files are not supported: decompress it first",
	"zip":     "compressed files are not supported: decompress it first",
}

// fileLayout decides the format and the CSV separator. The path's extension
// decides when it names a known format; file_ending is the hint for paths
// without one (exports named "orders" or "orders.dat"); with neither, the
// file is CSV, the common case of a dropped file. An extension and a
// file_ending that disagree are an error rather than a guess.
func fileLayout(src spec.SourceFile) (FileFormat, byte, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(src.Path), "."))
	hint := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(src.FileEnding), "."))
	format, known := formatOfEnding[ext]
	if hint != "" {
		hinted, ok := formatOfEnding[hint]
		switch {
		case !ok && unsupportedEndings[hint] != "":
			return "", 0, fmt.Errorf("file_ending %q: %s", src.FileEnding, unsupportedEndings[hint])
		case !ok:
			return "", 0, fmt.Errorf("unknown file_ending %q: want csv, tsv, jsonl or ndjson", src.FileEnding)
		case known && hinted != format:
			return "", 0, fmt.Errorf("the path ends in .%s but file_ending says %s: drop file_ending, which is only for paths without an extension", ext, src.FileEnding)
		}
		format, known = hinted, true
	}
	if !known {
		if why := unsupportedEndings[ext]; why != "" {
			return "", 0, errors.New(why)
		}
		format = FormatCSV
	}
	sep := byte(defaultSeparator)
	if format == FormatTSV {
		sep = '\t'
	}
	if src.Separator == "" {
		return format, sep, nil
	}
	if format == FormatJSONLines {
		return "", 0, fmt.Errorf("separator %q does not apply to JSON lines", src.Separator)
	}
	s := src.Separator
	if s == `\t` {
		s = "\t" // written single-quoted in YAML, where \t is not an escape
	}
	if len(s) != 1 || s[0] >= 0x80 || s[0] == '"' || s[0] == '\r' || s[0] == '\n' {
		return "", 0, fmt.Errorf("separator %q: want one ASCII character other than a quote or a line break, like \",\", \";\", \"|\" or \"\\t\"", src.Separator)
	}
	return format, s[0], nil
}
