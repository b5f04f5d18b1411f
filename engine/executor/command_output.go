package executor

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// The stderr tail kept as a failed unit's error: enough to show a stack
// trace's last frames or a database error, small enough for a state row and
// a terminal cell.
const (
	tailBytes = 2048
	tailLines = 20
)

// maxLineLen caps one output line: longer lines are cut there, so a command
// that prints megabytes without a newline cannot make bollhav buffer them.
const maxLineLen = 64 << 10

// tailBuffer keeps the last tailBytes bytes written to it.
type tailBuffer struct {
	buf []byte
	cut bool // bytes were dropped from the front
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= tailBytes {
		t.cut = t.cut || len(t.buf) > 0 || len(p) > tailBytes
		t.buf = append(t.buf[:0], p[len(p)-tailBytes:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - tailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// tail is the buffer as error text: valid UTF-8, blank edges trimmed, the
// last tailLines lines, and "…" in front when anything was dropped.
func (t *tailBuffer) tail() string {
	b := t.buf
	cut := t.cut
	if cut {
		// The first line was cut mid-way; a partial rune at the front is
		// dropped by ToValidUTF8 below.
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), ""))
	lines := strings.Split(s, "\n")
	if len(lines) > tailLines {
		lines, cut = lines[len(lines)-tailLines:], true
	}
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	s = strings.Join(lines, "\n")
	if cut && s != "" {
		s = "…\n" + s
	}
	return s
}

// teeReader is io.TeeReader for a writer that never fails.
type teeReader struct {
	r io.Reader
	w io.Writer
}

func (t teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.w.Write(p[:n])
	}
	return n, err
}

// eachLine calls fn for every line of r, without its line ending, as it
// arrives. A line longer than maxLineLen is passed cut, with truncated set,
// and the rest of it skipped. It stops at EOF or the first read error (a
// closed pipe or an expired read deadline are both just the end).
func eachLine(r io.Reader, fn func(line []byte, truncated bool)) {
	br := bufio.NewReaderSize(r, maxLineLen)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			fn(line, true)
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			if err != nil {
				return
			}
			continue
		}
		if len(line) > 0 {
			fn(bytes.TrimRight(line, "\r\n"), false)
		}
		if err != nil {
			return
		}
	}
}

// rowsWrittenKey starts the stdout line a command reports its rows with.
const rowsWrittenKey = "rows_written"

// stdoutScan reads the rows_written protocol from a command's stdout: the
// last well-formed line wins, and any line that is recognisably an attempt
// at it ("rows_written = 5", "rows_written=-1", "rows_written: many") is an
// error naming the line, because silently ignoring it would record an
// unknown row count, and a HAS_DATA edge would act on that.
type stdoutScan struct {
	n    int
	rows *int64
	err  error
}

func (s *stdoutScan) line(raw []byte, truncated bool, red *redactor) {
	s.n++
	line := strings.TrimSpace(string(raw))
	rest, ok := strings.CutPrefix(line, rowsWrittenKey)
	if !ok || rest == "" || !strings.ContainsRune(" \t=:", rune(rest[0])) {
		return
	}
	if v, ok := strings.CutPrefix(rest, "="); ok && !truncated {
		if n, ok := parseCount(v); ok {
			s.rows = &n
			return
		}
	}
	if s.err == nil {
		// Redact before cutting, so a secret cut in half cannot slip past.
		shown := red.apply(line)
		if len(shown) > 80 {
			shown = shown[:80] + "…"
		}
		s.err = fmt.Errorf("stdout line %d: malformed %q: want rows_written=N with N a non-negative integer", s.n, strings.ToValidUTF8(shown, ""))
	}
}

// parseCount reads a non-negative decimal integer with no sign or blanks.
func parseCount(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}
