package source

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// recordSource yields a file's rows as raw cells aligned to its columns.
type recordSource interface {
	// columns names the columns known so far.
	columns() []string
	// next returns the next row, or io.EOF.
	next() (rawRecord, error)
	// freeze ends column discovery after the sample of sampled rows: a
	// JSON line with a key not seen in it is an error from then on.
	freeze(sampled int)
}

// rawRecord is one row before typing: its cells and the physical line it
// starts on. A row shorter than the columns has NULLs at the end.
type rawRecord struct {
	cells []cell
	line  int
}

// csvSource reads CSV with encoding/csv, which handles quoting, doubled
// quotes and line breaks inside quoted fields as RFC 4180 says.
type csvSource struct {
	r      *csv.Reader
	path   string
	offset int // lines removed above the CSV text
	strict bool
	names  []string
}

// newCSVSource reads the header row: the first non-empty line after the
// removed top rows. Header names are trimmed; an empty one is named
// column_N (1-based) and a repeated one is an error, since both would make
// an unusable table column.
func newCSVSource(text io.Reader, path string, offset int, sep byte, strict bool) (*csvSource, error) {
	r := csv.NewReader(text)
	r.Comma = rune(sep)
	s := &csvSource{r: r, path: path, offset: offset, strict: strict}
	header, err := r.Read()
	if err == io.EOF {
		msg := "the file is empty: want a header row"
		if offset > 0 {
			msg = fmt.Sprintf("no header row after the %d rows removed by remove_top_rows", offset)
		}
		return nil, &FileError{Path: path, Err: errors.New(msg)}
	}
	if err != nil {
		return nil, s.parseError(err, len(header))
	}
	line, _ := r.FieldPos(0)
	seen := map[string]int{}
	for i, h := range header {
		if err := s.checkUTF8(h, line+offset, ""); err != nil {
			return nil, err
		}
		name := cmp.Or(strings.TrimSpace(h), "column_"+strconv.Itoa(i+1))
		if j, dup := seen[name]; dup {
			return nil, &FileError{Path: path, Line: line + offset, Err: fmt.Errorf("header names column %q twice (columns %d and %d)", name, j+1, i+1)}
		}
		seen[name] = i
		s.names = append(s.names, name)
	}
	return s, nil
}

func (s *csvSource) columns() []string { return s.names }

func (s *csvSource) freeze(int) {}

func (s *csvSource) next() (rawRecord, error) {
	fields, err := s.r.Read()
	if err == io.EOF {
		return rawRecord{}, io.EOF
	}
	if err != nil {
		return rawRecord{}, s.parseError(err, len(fields))
	}
	line, _ := s.r.FieldPos(0)
	rec := rawRecord{cells: make([]cell, len(fields)), line: line + s.offset}
	for i, f := range fields {
		if err := s.checkUTF8(f, rec.line, s.names[i]); err != nil {
			return rawRecord{}, err
		}
		rec.cells[i] = csvCell(f)
	}
	return rec, nil
}

// parseError turns a csv.ParseError into a FileError counted from
// the top of the file; got is the length of the row encoding/csv returned
// with it, which for a wrong field count is the count.
func (s *csvSource) parseError(err error, got int) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return &FileError{Path: s.path, Err: err}
	}
	fe := &FileError{Path: s.path, Line: pe.Line + s.offset, Column: pe.Column, Err: pe.Err}
	switch {
	case errors.Is(pe.Err, csv.ErrFieldCount):
		fe.Column = 0
		fe.Err = fmt.Errorf("row has %d fields, the header has %d (is the separator %q right?)", got, len(s.names), string(s.r.Comma))
	case errors.Is(pe.Err, csv.ErrBareQuote):
		fe.Err = errors.New(`bare " in an unquoted field: quote the whole field and double the quotes inside it`)
	case errors.Is(pe.Err, csv.ErrQuote):
		fe.Err = errors.New(`extraneous or missing " in a quoted field`)
	}
	return fe
}

// checkUTF8 rejects invalid UTF-8 in a file read as UTF-8.
func (s *csvSource) checkUTF8(v string, line int, field string) error {
	if !s.strict || utf8.ValidString(v) {
		return nil
	}
	return &FileError{Path: s.path, Line: line, Field: field, Err: errors.New("invalid UTF-8: the file is probably in another encoding; set encoding (latin1, windows-1252, utf-16le, …)")}
}
