package source

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// jsonLinesSource reads JSON lines: one object per line, blank lines
// skipped. Its columns are the union of the keys of the sampled objects in
// the order they were first seen, so a file whose early rows omit an
// optional key still gets that column.
type jsonLinesSource struct {
	r      *bufio.Reader
	path   string
	line   int // physical lines read so far, removed top rows included
	strict bool
	names  []string
	index  map[string]int
	frozen bool
	// sampled is how many rows set the columns, for the error about a key
	// that came later.
	sampled int
}

func newJSONLinesSource(text *bufio.Reader, path string, offset int, strict bool) *jsonLinesSource {
	return &jsonLinesSource{r: text, path: path, line: offset, strict: strict, index: map[string]int{}}
}

func (s *jsonLinesSource) columns() []string { return s.names }

func (s *jsonLinesSource) freeze(sampled int) { s.frozen, s.sampled = true, sampled }

func (s *jsonLinesSource) next() (rawRecord, error) {
	for {
		raw, err := s.r.ReadBytes('\n')
		if len(raw) == 0 && err == io.EOF {
			return rawRecord{}, io.EOF
		}
		if err != nil && err != io.EOF {
			return rawRecord{}, &FileError{Path: s.path, Line: s.line + 1, Err: err}
		}
		s.line++
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		return s.parse(raw)
	}
}

// parse reads one object, keeping its keys in order (a map would lose it).
func (s *jsonLinesSource) parse(raw []byte) (rawRecord, error) {
	fail := func(format string, args ...any) (rawRecord, error) {
		return rawRecord{}, &FileError{Path: s.path, Line: s.line, Err: fmt.Errorf(format, args...)}
	}
	if s.strict && !utf8.Valid(raw) {
		return fail("invalid UTF-8: the file is probably in another encoding; set encoding (latin1, windows-1252, utf-16le, …)")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil {
		return fail("invalid JSON: %v", jsonProblem(err))
	} else if tok != json.Delim('{') {
		return fail("want a JSON object, one per line, got %s", jsonKind(tok))
	}
	rec := rawRecord{cells: make([]cell, len(s.names)), line: s.line}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail("invalid JSON: %v", jsonProblem(err))
		}
		key := tok.(string) // inside an object, a token before a value is its key
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return fail("invalid JSON in the value of %q: %v", key, jsonProblem(err))
		}
		i, known := s.index[key]
		if !known {
			if s.frozen {
				return rawRecord{}, &FileError{Path: s.path, Line: s.line, Field: key, Err: fmt.Errorf("a key not in the first %d rows, which set the columns; raise infer_schema_length, or remove it to scan every row", s.sampled)}
			}
			i = len(s.names)
			s.index[key] = i
			s.names = append(s.names, key)
		}
		for len(rec.cells) <= i {
			rec.cells = append(rec.cells, cell{})
		}
		rec.cells[i] = jsonCell(v) // a repeated key: the last one wins, as in encoding/json
	}
	if _, err := dec.Token(); err != nil {
		return fail("invalid JSON: %v", jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail("text after the object: want one JSON object per line")
	}
	return rec, nil
}

// jsonCell classifies a JSON value.
func jsonCell(v json.RawMessage) cell {
	switch v[0] {
	case 'n':
		return cell{}
	case 't', 'f':
		return cell{string(v), cellBool}
	case '"':
		var s string
		json.Unmarshal(v, &s) // valid: the decoder produced it
		if s == "" {
			return cell{} // "" is NULL, as an empty CSV field is
		}
		return cell{s, cellString}
	case '{', '[':
		var b bytes.Buffer
		json.Compact(&b, v)
		return cell{b.String(), cellJSON}
	}
	return cell{string(v), cellNumber}
}

// jsonKind names the JSON value a top-level token starts.
func jsonKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// jsonProblem strips encoding/json's offsets, which count from the start
// of the line and so add nothing to the line number already given.
func jsonProblem(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%s (at byte %d of the line)", se.Error(), se.Offset)
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the object is not closed")
	}
	return err
}
