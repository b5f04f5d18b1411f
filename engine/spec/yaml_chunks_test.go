package spec_test

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/spec"
)

// parseBothWays parses data chunked on workers cores — in one chunk per
// worker, and again in a chunk per entry (what a spec larger than workers
// chunks of the chunk bound is cut into) — and then whole on one, and
// fails unless each chunked parse gives what the whole one gives, model
// for model and position for position, or the same problems. It returns
// the result of the chunk per worker.
func parseBothWays(t *testing.T, data []byte, workers int) (*spec.Spec, error) {
	t.Helper()
	restore := spec.ForceChunks(1)
	whole, werr := spec.Parse("t.yaml", data)
	restore()
	var first *spec.Spec
	var ferr error
	for _, bound := range []int{0, 1} {
		restore, restoreBytes := spec.ForceChunks(workers), func() {}
		if bound > 0 {
			restoreBytes = spec.ForceChunkBytes(bound)
		}
		chunked, cerr := spec.Parse("t.yaml", data)
		restoreBytes()
		restore()
		how := fmt.Sprintf("%d workers, chunks of at most %d bytes", workers, bound)
		if bound == 0 {
			how = fmt.Sprintf("%d workers, a chunk each", workers)
			first, ferr = chunked, cerr
		}
		if fmt.Sprint(cerr) != fmt.Sprint(werr) {
			t.Fatalf("%s: chunked parse says\n%v\nwhole parse says\n%v", how, cerr, werr)
		}
		if !reflect.DeepEqual(chunked, whole) {
			for i := range min(len(chunked.Models), len(whole.Models)) {
				if !reflect.DeepEqual(chunked.Models[i], whole.Models[i]) {
					t.Fatalf("%s: model %d differs:\nchunked %+v\nwhole   %+v", how, i, chunked.Models[i], whole.Models[i])
				}
			}
			t.Fatalf("%s: chunked parse gives %d models, whole %d", how, len(chunked.Models), len(whole.Models))
		}
	}
	return first, ferr
}

// takesChunks reports whether data takes the chunked parse on workers.
func takesChunks(data []byte, workers int) bool {
	defer spec.ForceChunks(workers)()
	return spec.TakesChunks(data)
}

func TestChunkedParseIsTheWholeParse(t *testing.T) {
	shop, err := os.ReadFile("../../examples/shop/bollhav.yaml")
	if err != nil {
		t.Fatal(err)
	}
	specs := map[string][]byte{"examples/shop": shop}
	for _, seed := range []int64{1, 2, 3} {
		for _, models := range []int{30, 250} {
			specs[fmt.Sprintf("gen seed %d, %d models", seed, models)] = gen.Spec(gen.Config{Models: models, Seed: seed})
		}
	}
	for name, data := range specs {
		for _, workers := range []int{2, 3, 5} {
			t.Run(fmt.Sprintf("%s/workers=%d", name, workers), func(t *testing.T) {
				if !takesChunks(data, workers) {
					t.Fatal("the spec did not take the chunked parse")
				}
				sp, err := parseBothWays(t, data, workers)
				if err != nil || len(sp.Models) < 2*workers {
					t.Fatalf("got %d models, %v", len(sp.Models), err)
				}
			})
		}
	}
}

// TestChunkedParseLayouts puts the layouts a spec may have through the
// chunked parse: each must give what the whole parse gives, chunked where
// the split can vouch for itself and whole where it cannot.
func TestChunkedParseLayouts(t *testing.T) {
	base := string(gen.Spec(gen.Config{Models: 24, Seed: 1}))
	runOf := func(m string) string { return fmt.Sprintf("run: {command: [./bin/load, %s], timeout: 30m}", m) }
	cases := []struct {
		name    string
		edit    func(string) string
		chunked bool
		wantErr string
	}{
		{name: "as generated", edit: func(s string) string { return s }, chunked: true},
		{name: "CRLF line endings", edit: func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }},
		{name: "entries at column 0", edit: func(s string) string {
			return strings.ReplaceAll(strings.ReplaceAll(s, "\n  ", "\n"), "\n- name", "\n- name")
		}, chunked: true},
		{name: "comments at column 0 between entries", edit: func(s string) string {
			return strings.ReplaceAll(s, "\n  - name: p001", "\n# pipeline one\n  - name: p001")
		}, chunked: true},
		{name: "a comment after the key", edit: func(s string) string {
			return strings.Replace(s, "models:\n", "models:   # every model\n", 1)
		}, chunked: true},
		{name: "defaults after the list", edit: func(s string) string {
			return s + "defaults:\n  retry: {attempts: 4, delay: 1m}\n"
		}},
		{name: "keep-chomping block scalars at the ends of chunks", edit: func(string) string {
			return timelessModels(12, func(i int) string { return fmt.Sprintf("        - |+\n          line %d\n\n", i) })
		}, chunked: true},
		{name: "quoted strings that swallow the next entry's lines", edit: func(string) string {
			return timelessModels(12, func(int) string { return "        - \"\n" })
		}},
		{name: "a quoted string closed after the list", edit: func(string) string {
			return timelessModels(11, func(int) string { return "        - \"\n" }) + "x\"\n"
		}},
		{name: "an alias to an anchor in an earlier chunk", edit: func(s string) string {
			s = strings.Replace(s, runOf("p000_raw.m0000"), "run: &load "+strings.TrimPrefix(runOf("p000_raw.m0000"), "run: "), 1)
			return strings.Replace(s, runOf("p001_mart.m0023"), "run: *load", 1)
		}, chunked: true},
		{name: "an alias after its anchor is redefined", edit: func(s string) string {
			s = strings.Replace(s, runOf("p000_raw.m0000"), "run: &load "+strings.TrimPrefix(runOf("p000_raw.m0000"), "run: "), 1)
			s = strings.Replace(s, runOf("p001_raw.m0012"), "run: &load "+strings.TrimPrefix(runOf("p001_raw.m0012"), "run: "), 1)
			return strings.Replace(s, runOf("p001_mart.m0023"), "run: *load", 1)
		}, chunked: true},
		{name: "an alias before its anchor", edit: func(s string) string {
			s = strings.Replace(s, runOf("p000_raw.m0000"), "run: *load", 1)
			return strings.Replace(s, runOf("p001_mart.m0023"), "run: &load "+strings.TrimPrefix(runOf("p001_mart.m0023"), "run: "), 1)
		}, chunked: true, wantErr: "alias *load names no anchor defined before it"},
		{name: "one model twice, in different chunks", edit: func(s string) string {
			return strings.Replace(s, "name: p001_mart.m0023", "name: p000_raw.m0000", 1)
		}, chunked: true, wantErr: "p000_raw.m0000"},
		{name: "a syntax error in the last chunk", edit: func(s string) string {
			return strings.Replace(s, runOf("p001_mart.m0023"), "run: {command: [unclosed", 1)
		}, wantErr: "invalid YAML"},
		{name: "a tab in the list", edit: func(s string) string {
			return strings.Replace(s, "\n  - name: p001", "\n\t- name: p001", 1)
		}, wantErr: "cannot start any token"},
		{name: "the models key twice", edit: func(s string) string { return s + "models:\n  - name: a.b\n" }},
		{name: "an inline list", edit: func(s string) string { return "models: []\n" }, wantErr: ""},
		{name: "a second document", edit: func(s string) string { return s + "---\nmodels: []\n" }, wantErr: "second one"},
		{name: "models: inside a quoted string", edit: func(s string) string {
			return strings.Replace(s, "models:\n", "description: \"a\nmodels:\n  - b\"\nmodels:\n", 1)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := []byte(c.edit(base))
			if got := takesChunks(data, 3); got != c.chunked {
				t.Errorf("took the chunked parse: %v, want %v", got, c.chunked)
			}
			_, err := parseBothWays(t, data, 3)
			if c.chunked && c.wantErr == "" {
				for _, bound := range []int{0, 1} {
					restore, restoreBytes := spec.ForceChunks(3), func() {}
					if bound > 0 {
						restoreBytes = spec.ForceChunkBytes(bound)
					}
					_, err := spec.ParseChunksOnly(data)
					restoreBytes()
					restore()
					if err != nil {
						t.Fatalf("chunks of at most %d bytes: the chunked parse fell back to the whole one: %v", bound, err)
					}
				}
			}
			switch {
			case c.wantErr == "" && err != nil && c.chunked:
				t.Fatalf("unexpected problems: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("problems %v, want one naming %q", err, c.wantErr)
			}
		})
	}
}

// TestChunkedAliasResolvesToTheNearestAnchor checks the meaning, not only
// the sameness: an alias takes the latest anchor of its name before it, in
// whichever chunk that stands. Each model in turn aliases the run of the
// model before it, which anchors it, so some pair straddles every cut
// between chunks, the anchor the last entry of one chunk and the alias the
// first of the next (where byte offsets in the chunks would misorder them).
func TestChunkedAliasResolvesToTheNearestAnchor(t *testing.T) {
	base := string(gen.Spec(gen.Config{Models: 24, Seed: 1}))
	sp, err := spec.Parse("t.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	runOf := func(m string) string { return fmt.Sprintf("run: {command: [./bin/load, %s], timeout: 30m}", m) }
	for i := 1; i < len(sp.Models); i++ {
		anchor, alias := sp.Models[i-1].Name, sp.Models[i].Name
		s := strings.Replace(base, runOf(anchor), "run: &load {command: [./bin/anchored], timeout: 30m}", 1)
		s = strings.Replace(s, runOf(alias), "run: *load", 1)
		parseBothWays(t, []byte(s), 3)
		// In one chunk per worker, and in one chunk per entry: there the
		// anchor's chunk is decoded before the alias's is parsed.
		for _, bound := range []int{0, 1} {
			restore, restoreBytes := spec.ForceChunks(3), func() {}
			if bound > 0 {
				restoreBytes = spec.ForceChunkBytes(bound)
			}
			got, err := spec.ParseChunksOnly([]byte(s)) // no whole parse to fall back on
			restoreBytes()
			restore()
			if err != nil {
				t.Fatalf("%s aliasing %s, chunks of at most %d bytes: %v", alias, anchor, bound, err)
			}
			if cmd := strings.Join(got.Model(alias).Run.Command, " "); cmd != "./bin/anchored" {
				t.Fatalf("%s runs %q, want the anchored ./bin/anchored of %s (chunks of at most %d bytes)", alias, cmd, anchor, bound)
			}
		}
	}
}

// TestParallelDecodeKeepsTheSpecWideAliasBound spreads alias expansions over
// six models, each well under the spec-wide bound and the six together over
// it: decoded in three parts no part reaches the bound, and the spec must
// still be refused as the one decoder refuses it.
func TestParallelDecodeKeepsTheSpecWideAliasBound(t *testing.T) {
	var b strings.Builder
	b.WriteString("models:\n")
	for m := range 6 {
		fmt.Fprintf(&b, "  - name: a.m%d\n    temporality: timeless\n    upstream:\n      - name: r.s\n        model:\n          extra:\n", m)
		fmt.Fprintf(&b, "            l0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
		for i := 1; i <= 5; i++ { // 10^6 leaves: about 1.1M visits a model
			fmt.Fprintf(&b, "            l%d: &a%d [%s*a%d]\n", i, i, strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 9), i-1)
		}
	}
	_, err := parseBothWays(t, []byte(b.String()), 3)
	if err == nil || !strings.Contains(err.Error(), "expands to more than") {
		t.Fatalf("six models of a million values each: %v, want the alias bound", err)
	}
}

// timelessModels is a spec of n timeless models a.m0… whose run command is
// the list item item(i) gives, written from the line after "command:".
func timelessModels(n int, item func(i int) string) string {
	var b strings.Builder
	b.WriteString("models:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: a.m%d\n    temporality: timeless\n    run:\n      command:\n%s", i, item(i))
	}
	return b.String()
}
