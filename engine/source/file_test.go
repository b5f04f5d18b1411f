package source

import (
	"errors"
	"github.com/bollhav/bollhav/engine/spec"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
)

const filesDir = "testdata/files"

// readAll reads a file source and fails the test on error.
func readAll(t *testing.T, src spec.SourceFile, dir string) *FileTable {
	t.Helper()
	tab, err := ReadFile(src, dir)
	if err != nil {
		t.Fatalf("ReadFile(%s): %v", src.Path, err)
	}
	return tab
}

// readLines reads r to its end and returns its rows with the line of the
// file each came from, failing the test on error.
func readLines(t *testing.T, r *FileReader) (rows [][]any, lines []int) {
	t.Helper()
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, lines
		}
		if err != nil {
			t.Fatal(err)
		}
		rows, lines = append(rows, row), append(lines, r.Line())
	}
}

// writeFile writes content into dir/name and returns dir.
func writeFile(t *testing.T, dir, name string, content []byte) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), content, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func checkColumns(t *testing.T, got []Column, want ...string) {
	t.Helper()
	var g []string
	for _, c := range got {
		g = append(g, c.Name+":"+c.Type.String())
	}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("columns = %v, want %v", g, want)
	}
}

func checkRows(t *testing.T, got [][]any, want ...[]any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows =\n%#v\nwant\n%#v", got, want)
	}
}

// checkErr asserts err is a *FileError whose text contains every part.
func checkErr(t *testing.T, err error, line int, parts ...string) {
	t.Helper()
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v (%T), want a *FileError", err, err)
	}
	if fe.Line != line {
		t.Errorf("error line = %d, want %d: %v", fe.Line, line, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q lacks %q", err, p)
		}
	}
}

func TestFileSourceCoverSheetSemicolonsAndDates(t *testing.T) {
	src := spec.SourceFile{Path: "cover_sheet.csv", Separator: ";", RemoveTopRows: 2, DateFormat: "%d/%m/%Y"}
	r, err := OpenFile(src, filesDir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	checkColumns(t, r.Columns(), "order_id:int", "customer:text", "amount:float", "order_date:date", "paid:bool")
	rows, lines := readLines(t, r)
	checkRows(t, rows,
		[]any{int64(1001), "Acme", 12.5, "2026-01-31", true},
		[]any{int64(1002), "Beta", 7.0, "2026-02-01", false},
		[]any{int64(1003), nil, nil, nil, nil},
	)
	if !reflect.DeepEqual(lines, []int{4, 5, 6}) {
		t.Errorf("lines = %v, want 4 5 6 (counted from the top of the file, cover sheet included)", lines)
	}

	// Without the dateformat the dd/mm/YYYY column stays text.
	src.DateFormat = ""
	tab := readAll(t, src, filesDir)
	if c := tab.Columns[3]; c.Type != TypeText || tab.Rows[0][3] != "31/01/2026" {
		t.Errorf("without dateformat: %v, %v", c, tab.Rows[0][3])
	}
}

func TestFileSourceDateColumnNeedsEveryValueToParse(t *testing.T) {
	dir := writeFile(t, t.TempDir(), "d.csv", []byte("a,b,c\n31/01/2026,2026-01-31,5/1/2026\n01/02/2026,not a date,\n"))
	tab := readAll(t, spec.SourceFile{Path: "d.csv", DateFormat: "%d/%m/%Y"}, dir)
	checkColumns(t, tab.Columns, "a:date", "b:text", "c:date")
	checkRows(t, tab.Rows,
		[]any{"2026-01-31", "2026-01-31", "2026-01-05"},
		[]any{"2026-02-01", "not a date", nil},
	)
}

func TestFileSourceDatetimeFormat(t *testing.T) {
	dir := writeFile(t, t.TempDir(), "d.csv", []byte("at\n31.01.2026 13:45:09\n1.2.2026 7:05:00\n"))
	tab := readAll(t, spec.SourceFile{Path: "d.csv", DateFormat: "%d.%m.%Y %H:%M:%S"}, dir)
	checkColumns(t, tab.Columns, "at:datetime")
	checkRows(t, tab.Rows, []any{"2026-01-31T13:45:09"}, []any{"2026-02-01T07:05:00"})
}

func TestFileSourceLatin1(t *testing.T) {
	for _, enc := range []string{"latin1", "ISO-8859-1", "iso_8859_1", "Latin-1"} {
		tab := readAll(t, spec.SourceFile{Path: "latin1.csv", Encoding: enc}, filesDir)
		checkRows(t, tab.Rows,
			[]any{int64(1), "Åsa", "Västerås"},
			[]any{int64(2), "Örjan", "Malmö"},
			[]any{int64(3), "Märta", "Gävle"},
		)
	}
	// Read as the default UTF-8 it is an error that points at the fix.
	_, err := ReadFile(spec.SourceFile{Path: "latin1.csv"}, filesDir)
	checkErr(t, err, 2, "latin1.csv:2:", `column "name"`, "invalid UTF-8", "set encoding")
	// utf8-lossy loads it anyway, with replacement characters.
	tab := readAll(t, spec.SourceFile{Path: "latin1.csv", Encoding: "utf8-lossy"}, filesDir)
	if got := tab.Rows[0][1]; got != "\uFFFDsa" {
		t.Errorf("utf8-lossy: %q", got)
	}
}

func TestFileSourceEncodings(t *testing.T) {
	utf16le := func(s string, bom bool) []byte {
		var b []byte
		if bom {
			b = append(b, 0xFF, 0xFE)
		}
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u), byte(u>>8))
		}
		return b
	}
	utf16be := func(s string) []byte {
		var b []byte
		for _, u := range utf16.Encode([]rune(s)) {
			b = append(b, byte(u>>8), byte(u))
		}
		return b
	}
	const text = "id,name\n1,Ödön €\n"
	for _, tc := range []struct {
		encoding string
		content  []byte
	}{
		{"", []byte("\xEF\xBB\xBF" + text)},
		{"utf-8", []byte(text)},
		{"windows-1252", []byte("id,name\n1,\xD6d\xF6n \x80\n")},
		{"cp1252", []byte("id,name\n1,\xD6d\xF6n \x80\n")},
		{"utf-16le", utf16le(text, true)},
		{"UTF-16LE", utf16le(text, false)},
		{"utf-16be", utf16be(text)},
		{"utf-16", utf16le(text, true)},
		{"iso-8859-15", []byte("id,name\n1,\xD6d\xF6n \xA4\n")}, // via the IANA index
	} {
		dir := writeFile(t, t.TempDir(), "f.csv", tc.content)
		tab, err := ReadFile(spec.SourceFile{Path: "f.csv", Encoding: tc.encoding}, dir)
		if err != nil {
			t.Errorf("%q: %v", tc.encoding, err)
			continue
		}
		checkColumns(t, tab.Columns, "id:int", "name:text")
		checkRows(t, tab.Rows, []any{int64(1), "Ödön €"})
	}
	_, err := ReadFile(spec.SourceFile{Path: "latin1.csv", Encoding: "klingon-8"}, filesDir)
	checkErr(t, err, 0, "latin1.csv", `unknown encoding "klingon-8"`, "latin1", "utf-16le")
}

func TestFileSourceMalformedRowNamesItsLine(t *testing.T) {
	_, err := ReadFile(spec.SourceFile{Path: "malformed.csv"}, filesDir)
	checkErr(t, err, 4, "malformed.csv:4:", "bare \"")

	// A cover row above the header still counts.
	dir := writeFile(t, t.TempDir(), "m.csv", []byte("Report\nid,comment\n1,ok\n2,\"open\n"))
	_, err = ReadFile(spec.SourceFile{Path: "m.csv", RemoveTopRows: 1}, dir)
	checkErr(t, err, 4, "m.csv:4")

	dir = writeFile(t, t.TempDir(), "n.csv", []byte("a;b\n1;2\n3\n"))
	_, err = ReadFile(spec.SourceFile{Path: "n.csv", Separator: ";"}, dir)
	checkErr(t, err, 3, "n.csv:3: row has 1 fields, the header has 2")
}

func TestFileSourceHeader(t *testing.T) {
	dir := writeFile(t, t.TempDir(), "h.csv", []byte(" id , ,name\n1,2,3\n"))
	tab := readAll(t, spec.SourceFile{Path: "h.csv"}, dir)
	checkColumns(t, tab.Columns, "id:int", "column_2:int", "name:int")

	writeFile(t, dir, "dup.csv", []byte("id,name,id\n"))
	_, err := ReadFile(spec.SourceFile{Path: "dup.csv"}, dir)
	checkErr(t, err, 1, `names column "id" twice (columns 1 and 3)`)

	writeFile(t, dir, "empty.csv", nil)
	_, err = ReadFile(spec.SourceFile{Path: "empty.csv"}, dir)
	checkErr(t, err, 0, "empty.csv", "want a header row")

	writeFile(t, dir, "short.csv", []byte("title\nsubtitle\n"))
	_, err = ReadFile(spec.SourceFile{Path: "short.csv", RemoveTopRows: 2}, dir)
	checkErr(t, err, 0, "no header row after the 2 rows removed")
	_, err = ReadFile(spec.SourceFile{Path: "short.csv", RemoveTopRows: 5}, dir)
	checkErr(t, err, 0, "remove_top_rows is 5 but the file has only 2 lines")

	_, err = ReadFile(spec.SourceFile{Path: "missing.csv"}, dir)
	if err == nil || !strings.Contains(err.Error(), "missing.csv") || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestFileSourceSeparatorsAndEndings(t *testing.T) {
	want := [][]any{{int64(1), "Acme", "has, a comma"}, {int64(2), "Beta", "quoted"}}
	checkRows(t, readAll(t, spec.SourceFile{Path: "orders.tsv"}, filesDir).Rows, want...)

	dir := t.TempDir()
	tsv, _ := os.ReadFile(filepath.Join(filesDir, "orders.tsv"))
	writeFile(t, dir, "orders", tsv)
	writeFile(t, dir, "orders.csv", tsv)
	writeFile(t, dir, "orders.dat", tsv)
	for _, src := range []spec.SourceFile{
		{Path: "orders", FileEnding: "tsv"},
		{Path: "orders", FileEnding: ".TSV"},
		{Path: "orders.dat", FileEnding: "tsv"},
		{Path: "orders.csv", Separator: "\t"},
		{Path: "orders.csv", Separator: `\t`},
		{Path: "orders", Separator: "\t"}, // no extension, no hint: CSV
	} {
		tab, err := ReadFile(src, dir)
		if err != nil {
			t.Errorf("%+v: %v", src, err)
			continue
		}
		checkRows(t, tab.Rows, want...)
	}
	writeFile(t, dir, "pipes.csv", []byte("a|b\n1|x,y\n"))
	checkRows(t, readAll(t, spec.SourceFile{Path: "pipes.csv", Separator: "|"}, dir).Rows, []any{int64(1), "x,y"})

	for _, tc := range []struct {
		src  spec.SourceFile
		want string
	}{
		{spec.SourceFile{Path: "orders.csv", FileEnding: "jsonl"}, "ends in .csv but file_ending says jsonl"},
		{spec.SourceFile{Path: "orders", FileEnding: "xml"}, `unknown file_ending "xml"`},
		{spec.SourceFile{Path: "orders", FileEnding: "parquet"}, "Parquet is not supported"},
		{spec.SourceFile{Path: "orders.json"}, "set file_ending: jsonl"},
		{spec.SourceFile{Path: "orders.csv", Separator: ";;"}, `separator ";;"`},
		{spec.SourceFile{Path: "orders.csv", Separator: `"`}, "other than a quote"},
		{spec.SourceFile{Path: "events.jsonl", Separator: ","}, "does not apply to JSON lines"},
	} {
		_, err := ReadFile(tc.src, dir)
		checkErr(t, err, 0, tc.src.Path+": ", tc.want)
	}
}

func TestFileSourceJSONLines(t *testing.T) {
	r, err := OpenFile(spec.SourceFile{Path: "events", FileEnding: "jsonl"}, filesDir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Format() != FormatJSONLines {
		t.Errorf("format %s", r.Format())
	}
	checkColumns(t, r.Columns(), "id:int", "kind:text", "at:date", "meta:text", "score:float")
	rows, lines := readLines(t, r)
	checkRows(t, rows,
		[]any{int64(1), "click", "2026-01-31", nil, nil},
		[]any{int64(2), "view", "2026-02-01", `{"page":"/","ms":12}`, nil},
		[]any{int64(3), nil, nil, nil, 0.5},
	)
	if !reflect.DeepEqual(lines, []int{1, 3, 4}) {
		t.Errorf("lines = %v, want 1 3 4 (the blank line counts)", lines)
	}

	dir := t.TempDir()
	for _, tc := range []struct {
		content string
		line    int
		want    string
	}{
		{"{\"a\": 1}\n[1, 2]\n", 2, "want a JSON object, one per line, got an array"},
		{"{\"a\": 1}\n{\"a\": }\n", 2, "invalid JSON"},
		{"{\"a\": 1}\n{\"a\": 2\n", 2, "not closed"},
		{"{\"a\": 1} {\"a\": 2}\n", 1, "text after the object"},
		{"{\"a\": \"\xE5\"}\n", 1, "invalid UTF-8"},
	} {
		writeFile(t, dir, "e.ndjson", []byte(tc.content))
		_, err := ReadFile(spec.SourceFile{Path: "e.ndjson"}, dir)
		checkErr(t, err, tc.line, "e.ndjson:", tc.want)
	}
	// JSON types are kept: a string of digits is text, true is a bool.
	writeFile(t, dir, "t.jsonl", []byte(`{"zip": "01234", "n": "12", "ok": true, "x": 1}`+"\n"+`{"zip": "99999", "n": "7", "ok": false, "x": "mixed"}`+"\n"))
	tab := readAll(t, spec.SourceFile{Path: "t.jsonl"}, dir)
	checkColumns(t, tab.Columns, "zip:text", "n:text", "ok:bool", "x:text")
	checkRows(t, tab.Rows, []any{"01234", "12", true, "1"}, []any{"99999", "7", false, "mixed"})
}

func TestFileSourceInferSchemaLength(t *testing.T) {
	dir := writeFile(t, t.TempDir(), "n.csv", []byte("n,flag\n1,true\n2,false\nx,maybe\n"))
	two, zero := 2, 0

	r, err := OpenFile(spec.SourceFile{Path: "n.csv", InferSchemaLength: &two}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	checkColumns(t, r.Columns(), "n:int", "flag:bool")
	for range 2 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	_, err = r.Next()
	checkErr(t, err, 4, `n.csv:4: column "n": value "x" is not an int, the type inferred from the first 2 rows; raise infer_schema_length`)

	tab := readAll(t, spec.SourceFile{Path: "n.csv"}, dir) // unset: every row decides
	checkColumns(t, tab.Columns, "n:text", "flag:text")
	tab = readAll(t, spec.SourceFile{Path: "n.csv", InferSchemaLength: &zero}, dir)
	checkColumns(t, tab.Columns, "n:text", "flag:text")
	checkRows(t, tab.Rows, []any{"1", "true"}, []any{"2", "false"}, []any{"x", "maybe"})

	// A JSON line with a key the sample did not have.
	one := 1
	writeFile(t, dir, "k.jsonl", []byte("{\"a\": 1}\n{\"a\": 2, \"b\": 3}\n"))
	_, err = ReadFile(spec.SourceFile{Path: "k.jsonl", InferSchemaLength: &one}, dir)
	checkErr(t, err, 2, `k.jsonl:2: column "b": a key not in the first 1 rows`)
	// With 0 nothing is typed, but the first row still names the columns.
	writeFile(t, dir, "k.jsonl", []byte("{\"a\": 1, \"b\": true}\n{\"b\": false, \"a\": 2}\n"))
	tab = readAll(t, spec.SourceFile{Path: "k.jsonl", InferSchemaLength: &zero}, dir)
	checkColumns(t, tab.Columns, "a:text", "b:text")
	checkRows(t, tab.Rows, []any{"1", "true"}, []any{"2", "false"})
}

func TestCellTypes(t *testing.T) {
	for s, want := range map[string]ColumnType{
		"42": TypeInt, "-7": TypeInt, "+3": TypeInt, "0": TypeInt, " 5 ": TypeInt,
		"007": TypeText, "12345678901234567890": TypeText, "1_000": TypeText,
		"1.5": TypeFloat, "-0.25": TypeFloat, "1e3": TypeFloat, ".5": TypeFloat, "0.5": TypeFloat,
		"NaN": TypeText, "Inf": TypeText, "1.2.3": TypeText, "00.5": TypeText, "--1": TypeText,
		"TRUE": TypeBool, "false": TypeBool, "yes": TypeText,
		"2026-01-31": TypeDate, "2026-02-30": TypeText, "hello": TypeText,
	} {
		got := inferType([]rawRecord{{cells: []cell{csvCell(s)}}}, 0, dateLayout{})
		if got != want {
			t.Errorf("%q is %s, want %s", s, got, want)
		}
	}
}

// ReadFile reads a whole file source into memory; see OpenFile.
func ReadFile(src spec.SourceFile, baseDir string) (*FileTable, error) {
	r, err := OpenFile(src, baseDir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	t := &FileTable{Path: r.Path(), Format: r.Format(), Columns: r.Columns(), Rows: [][]any{}}
	for {
		row, err := r.Next()
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, row)
	}
}
