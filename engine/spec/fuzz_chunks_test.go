package spec

import (
	"fmt"
	"os"
	"reflect"
	"testing"
)

// FuzzChunkedParse holds the chunked parse to the whole one on arbitrary
// input: whatever the bytes, parsed in chunks (when they take that path)
// they give the spec or the problems that one parse of the whole gives.
func FuzzChunkedParse(f *testing.F) {
	if b, err := os.ReadFile("../../examples/shop/bollhav.yaml"); err == nil {
		f.Add(b, uint8(2))
	}
	f.Add([]byte(designSpec), uint8(3))
	f.Add([]byte("models:\n- name: a.b\n  run: &r {command: [x]}\n- name: a.c\n  run: *r\n- name: a.d\n- name: a.e\n"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, workers uint8) {
		w := 2 + int(workers%4)
		restore := ForceChunks(w)
		chunked, cerr := Parse("f.yaml", data)
		restore()
		restore = ForceChunks(1)
		whole, werr := Parse("f.yaml", data)
		restore()
		if fmt.Sprint(cerr) != fmt.Sprint(werr) || !reflect.DeepEqual(chunked, whole) {
			t.Fatalf("%d workers: chunked %v, %v; whole %v, %v", w, chunked, cerr, whole, werr)
		}
	})
}
