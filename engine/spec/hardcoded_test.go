package spec

import (
	"strings"
	"testing"
)

func TestContentHashKnownAnswers(t *testing.T) {
	// Computed outside Go (printf '%s' '{"sql":"SELECT 1"}' | sha256sum), so a
	// change to the canonical form — which would re-apply every constant in
	// every deployment — cannot slip through as a self-consistent update.
	cases := []struct {
		h    SourceHardcoded
		want string
	}{
		{SourceHardcoded{SQL: "SELECT 1"}, "sha256:f25189374bfbf48658282bc196f4f8b6d09c7e4aa745f5b2351c827a8ef5aad9"},
		{SourceHardcoded{Rows: []map[string]any{{"id": int64(1), "code": "SE"}, {"code": "NO", "id": 2}}},
			"sha256:b0098a7e646f60d42e8e9e7270d9f3541d8855049ebdc396bcb86aeb32aa81ab"},
	}
	for _, c := range cases {
		if got := c.h.ContentHash(); got != c.want {
			t.Errorf("ContentHash(%+v) = %s, want %s", c.h, got, c.want)
		}
	}
}

func TestContentHashIgnoresMapOrder(t *testing.T) {
	// Go randomizes map iteration; building the same rows many times in
	// different insertion orders must always give one hash.
	want := (&SourceHardcoded{Rows: []map[string]any{{"a": int64(1), "b": "x", "c": true, "d": nil, "e": 2.5}}}).ContentHash()
	for i := range 50 {
		row := map[string]any{}
		keys := []string{"e", "d", "c", "b", "a"}
		if i%2 == 0 {
			keys = []string{"a", "b", "c", "d", "e"}
		}
		vals := map[string]any{"a": int64(1), "b": "x", "c": true, "d": nil, "e": 2.5}
		for _, k := range keys {
			row[k] = vals[k]
		}
		if got := (&SourceHardcoded{Rows: []map[string]any{row}}).ContentHash(); got != want {
			t.Fatalf("hash changed with insertion order: %s != %s", got, want)
		}
	}
}

func TestContentHashFromSpecIgnoresKeyOrder(t *testing.T) {
	load := func(row string) string {
		t.Helper()
		sp, err := Parse("bollhav.yaml", yamlLines(lModels, lDaily, "    temporality: timeless", lUp,
			"      - name: ref.countries",
			"        hardcoded: {rows: ["+row+"]}"))
		if err != nil {
			t.Fatal(err)
		}
		return sp.Models[0].Upstream[0].Hardcoded.ContentHash()
	}
	a := load("{id: 1, code: SE, name: Sweden}")
	if b := load("{name: Sweden, code: SE, id: 1}"); a != b {
		t.Errorf("reordered keys: %s != %s", a, b)
	}
	if c := load("{id: 1, code: SE, name: Sverige}"); a == c {
		t.Error("a changed value kept the hash")
	}
	if c := load("{id: 1.0, code: SE, name: Sweden}"); a == c {
		t.Error("1 and 1.0 (int and float columns) hashed alike")
	}
	if c := load(`{id: "1", code: SE, name: Sweden}`); a == c {
		t.Error(`1 and "1" hashed alike`)
	}
}

func TestContentHashChanges(t *testing.T) {
	base := &SourceHardcoded{Rows: []map[string]any{{"id": int64(1)}}, Extra: map[string]any{"owner": "finance"}}
	h := base.ContentHash()
	if !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 {
		t.Fatalf("hash %q: want sha256: and 64 hex digits", h)
	}
	distinct := map[string]*SourceHardcoded{
		"another value": {Rows: []map[string]any{{"id": int64(2)}}},
		"another row":   {Rows: []map[string]any{{"id": int64(1)}, {"id": int64(1)}}},
		"rows reversed": {Rows: []map[string]any{{"id": int64(2)}, {"id": int64(1)}}},
		"sql":           {SQL: "SELECT 1 AS id"},
		"other sql":     {SQL: "SELECT 1 AS id "},
		// rows and sql never collide, even when the sql spells the rows' JSON
		"sql spelling the rows": {SQL: `[{"id":1}]`},
		"no rows":               {Rows: []map[string]any{}},
	}
	seen := map[string]string{h: "base"}
	for name, c := range distinct {
		got := c.ContentHash()
		if prev, dup := seen[got]; dup {
			t.Errorf("%s hashes like %s", name, prev)
		}
		seen[got] = name
	}
	withoutExtra := &SourceHardcoded{Rows: []map[string]any{{"id": int64(1)}}}
	if withoutExtra.ContentHash() != h {
		t.Error("extra is configuration, not content, but changed the hash")
	}
}
