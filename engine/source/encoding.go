package source

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
)

// textDecoder turns a file's bytes into UTF-8 text.
type textDecoder struct {
	// enc is nil for UTF-8, which is read as is.
	enc encoding.Encoding
	// strict is set for plain UTF-8: invalid bytes are an error naming the
	// line, since they almost always mean a Latin-1 or Windows file read
	// with the default encoding, which would otherwise load as mojibake.
	strict bool
}

// encodings maps the names users write (polars', Python's, IANA's) to
// decoders. Names are compared in lower case with _ read as -.
var encodings = map[string]textDecoder{
	"utf-8":        {strict: true},
	"utf8":         {strict: true},
	"utf8-lossy":   {enc: unicode.UTF8}, // polars' name: invalid bytes become U+FFFD
	"utf-8-lossy":  {enc: unicode.UTF8},
	"latin1":       {enc: charmap.ISO8859_1},
	"latin-1":      {enc: charmap.ISO8859_1},
	"iso-8859-1":   {enc: charmap.ISO8859_1},
	"iso8859-1":    {enc: charmap.ISO8859_1},
	"l1":           {enc: charmap.ISO8859_1},
	"windows-1252": {enc: charmap.Windows1252},
	"cp1252":       {enc: charmap.Windows1252},
	"win1252":      {enc: charmap.Windows1252},
	"utf-16le":     {enc: unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)},
	"utf-16be":     {enc: unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)},
	// Without a BOM, little-endian: what Windows ("Unicode text") writes.
	"utf-16": {enc: unicode.UTF16(unicode.LittleEndian, unicode.UseBOM)},
}

// lookupEncoding finds the decoder for an encoding name; "" is UTF-8. Names
// not in the table are looked up among IANA's charsets, so an ISO-8859-15
// or Shift_JIS file still reads.
func lookupEncoding(name string) (textDecoder, error) {
	key := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-")
	if key == "" {
		return encodings["utf-8"], nil
	}
	if d, ok := encodings[key]; ok {
		return d, nil
	}
	if enc, err := ianaindex.IANA.Encoding(name); err == nil && enc != nil {
		return textDecoder{enc: enc}, nil
	}
	return textDecoder{}, fmt.Errorf("unknown encoding %q: want utf-8 (the default), utf8-lossy, latin1 (iso-8859-1), windows-1252, utf-16le, utf-16be or another IANA charset name", name)
}

// utf8BOM is the byte order mark some tools put in front of UTF-8 text; after
// decoding, a UTF-16 file's BOM looks the same.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// reader returns the decoded text of r with any byte order mark stripped (so
// the first column's name is not "\ufeffid") and its first removeTop
// physical lines skipped: the cover sheet or title rows above the header
// that remove_top_rows is for. skipped is how many lines were removed, so
// line numbers in errors still count from the top of the file.
func (d textDecoder) reader(r io.Reader, path string, removeTop int) (text *bufio.Reader, skipped int, err error) {
	if d.enc != nil {
		r = d.enc.NewDecoder().Reader(r)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	for skipped < removeTop {
		n, err := skipLine(br)
		if n > 0 {
			skipped++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, skipped, &FileError{Path: path, Line: skipped + 1, Err: err}
		}
	}
	if skipped < removeTop {
		return nil, skipped, &FileError{Path: path, Err: fmt.Errorf("remove_top_rows is %d but the file has only %d lines", removeTop, skipped)}
	}
	return br, skipped, nil
}

// skipLine discards one line, however long, and returns its length.
func skipLine(br *bufio.Reader) (int, error) {
	n := 0
	for {
		b, err := br.ReadSlice('\n')
		n += len(b)
		if err != bufio.ErrBufferFull {
			return n, err
		}
	}
}
