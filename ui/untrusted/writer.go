package untrusted

import "io"

// Writer is a stream that only ever carries plain text, every write of
// which is made safe as Text makes it: the command line's stderr, where
// errors quote a unit's error, a warehouse's or a store's words, and where
// bollhav itself writes no styling. Each Write is cleaned on its own, so a
// character that one Write splits from the next reads as the escapes of
// its bytes; fmt's and slog's writers write a message whole.
type Writer struct{ w io.Writer }

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w} }

// Write writes p, cleaned, to the underlying writer and returns len(p) when
// all of it was written.
func (w *Writer) Write(p []byte) (int, error) {
	s := string(p)
	clean := Text(s)
	if _, err := io.WriteString(w.w, clean); err != nil {
		return 0, err
	}
	return len(p), nil
}
