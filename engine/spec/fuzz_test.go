package spec

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"testing"
)

// FuzzParseSpec feeds arbitrary bytes to the loader. Whatever the input, it
// must return either a spec or Errors — never panic, never both — with
// every error positioned in the file, sorted and free of control characters
// (it is printed to terminals), and a loaded spec must be
// safe to use: every model has an upstream and every ref resolves or errs.
// The seed corpus in testdata/fuzz/FuzzParseSpec runs under plain go test.
func FuzzParseSpec(f *testing.F) {
	f.Add(shopSpec(f))
	f.Add([]byte(designSpec))
	f.Add([]byte("models:\n  - name: a.b\n    <<: {temporality: timeless}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sp, err := Parse("f.yaml", data)
		if (sp == nil) == (err == nil) {
			t.Fatalf("spec %v and error %v", sp, err)
		}
		if err != nil {
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error %T %v is not Errors", err, err)
			}
			if !slices.IsSortedFunc(errs, func(a, b *Error) int {
				if a.Pos.Line != b.Pos.Line {
					return a.Pos.Line - b.Pos.Line
				}
				return a.Pos.Column - b.Pos.Column
			}) {
				t.Fatalf("errors not sorted:\n%v", errs)
			}
			for _, e := range errs {
				if e.Pos.File != "f.yaml" || e.Msg == "" {
					t.Fatalf("error without file or message: %#v", e)
				}
				for _, r := range e.Error() {
					if r < ' ' || r == 0x7f || r >= 0x80 && r < 0xa0 {
						t.Fatalf("error carries control character %U: %q", r, e.Error())
					}
				}
			}
			return
		}
		env := Env{Suffix: "pr1"}
		for _, m := range sp.Models {
			if len(m.Upstream) == 0 || sp.Model(m.Name) == nil {
				t.Fatalf("model %s: no upstream or not found", m.Name)
			}
			_ = m.Target(env)
			for _, s := range m.Upstream {
				_, _ = m.Ref(s.Name, env)
				if s.Hardcoded != nil {
					_ = s.Hardcoded.ContentHash()
				}
			}
		}
	})
}

// FuzzChunkedParse holds the chunked parse to the whole one on arbitrary
// input: whatever the bytes, parsed in chunks (when they take that path) —
// one per worker, or, as a spec larger than the chunk bound is cut, as
// many as entries or of a few dozen bytes each — they give the spec or the
// problems that one parse of the whole gives.
func FuzzChunkedParse(f *testing.F) {
	f.Add(shopSpec(f), uint8(2))
	f.Add([]byte(designSpec), uint8(3))
	f.Add([]byte("models:\n- name: a.b\n  run: &r {command: [x]}\n- name: a.c\n  run: *r\n- name: a.d\n- name: a.e\n"), uint8(2))
	f.Add([]byte("models:\n- name: a.b\n  run: &r {command: [x]}\n- name: a.c\n  run: *r\n- name: a.d\n- name: a.e\n"), uint8(6))
	f.Fuzz(func(t *testing.T, data []byte, workers uint8) {
		w := 2 + int(workers%4)
		bound := []int{0, 1, 48}[int(workers/4)%3]
		restore, restoreBytes := ForceChunks(w), func() {}
		if bound > 0 {
			restoreBytes = ForceChunkBytes(bound)
		}
		chunked, cerr := Parse("f.yaml", data)
		restoreBytes()
		restore()
		restore = ForceChunks(1)
		whole, werr := Parse("f.yaml", data)
		restore()
		if fmt.Sprint(cerr) != fmt.Sprint(werr) || !reflect.DeepEqual(chunked, whole) {
			t.Fatalf("%d workers, chunks of at most %d bytes: chunked %v, %v; whole %v, %v", w, bound, chunked, cerr, whole, werr)
		}
	})
}

// shopSpec is the example project's spec, the fuzzers' realistic seed; a
// seed that cannot be read fails the fuzzer rather than silently going
// missing (one did, from a path a directory short).
func shopSpec(f *testing.F) []byte {
	b, err := os.ReadFile("../../examples/shop/bollhav.yaml")
	if err != nil {
		f.Fatal(err)
	}
	return b
}
