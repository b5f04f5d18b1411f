package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/bollhav/bollhav/state"
)

// definitionTests pin the definition history: what `why` diffs an outdated
// unit's definition against.
var definitionTests = []test{
	{"RegisterKeepsEachFingerprintOnce", testDefinitionsRegister},
	{"RecordKeepsTheEarlierTime", testDefinitionsRecord},
}

// withDefinition is rec with definition body and fingerprint fp.
func withDefinition(rec state.ModelRecord, body, fp string) state.ModelRecord {
	rec.Definition, rec.ContentHash, rec.Fingerprint = []byte(body), hash(body), fp
	return rec
}

func definitionBriefs(t *testing.T, s state.Store, env, model string) []string {
	t.Helper()
	ds, err := s.Definitions(t.Context(), env, model)
	must(t, "Definitions", err)
	var out []string
	for _, d := range ds {
		eq(t, "definition's env and model", d.Env+"/"+d.Model, env+"/"+model)
		out = append(out, fmt.Sprintf("%s %s %s", d.Fingerprint, d.FirstSeen.Sub(clock(0)), jsonCompact(t, d.Definition)))
	}
	return out
}

// testDefinitionsRegister: Register keeps a model's definition under its
// fingerprint, first seen at the registration; registering it again
// (even with another content hash, a timeout changed) keeps the first
// time; a new fingerprint is a second entry; a record without a
// fingerprint keeps nothing; environments are apart.
func testDefinitionsRegister(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	eq(t, "definitions of an unregistered model", len(definitionBriefs(t, s, "", "m")), 0)
	v1 := withDefinition(fixModel("m"), `{"run": {"command": ["v1"]}}`, "00000000000000a1")
	_, err := s.Register(ctx, "", []state.ModelRecord{v1, fixModel("plain")}, nil, clock(0))
	must(t, "Register", err)
	eq(t, "after one registration", definitionBriefs(t, s, "", "m"), []string{`00000000000000a1 0s {"run":{"command":["v1"]}}`})
	eq(t, "a registration without a fingerprint", len(definitionBriefs(t, s, "", "plain")), 0)

	v1b := withDefinition(fixModel("m"), `{"run": {"command": ["v1"], "timeout": "1h"}}`, "00000000000000a1")
	_, err = s.Register(ctx, "", []state.ModelRecord{v1b}, nil, clock(10))
	must(t, "Register again", err)
	v2 := withDefinition(fixModel("m"), `{"run": {"command": ["v2"]}}`, "00000000000000b2")
	_, err = s.Register(ctx, "", []state.ModelRecord{v2}, nil, clock(20))
	must(t, "Register v2", err)
	_, err = s.Register(ctx, "dev", []state.ModelRecord{withDefinition(fixModel("m"), `{"dev": true}`, "00000000000000d3")}, nil, clock(30))
	must(t, "Register in dev", err)
	eq(t, "prod's history", definitionBriefs(t, s, "", "m"), []string{
		`00000000000000a1 0s {"run":{"command":["v1"]}}`,
		`00000000000000b2 20m0s {"run":{"command":["v2"]}}`,
	})
	eq(t, "dev's history", definitionBriefs(t, s, "dev", "m"), []string{`00000000000000d3 30m0s {"dev":true}`})
	// Going back to v1 keeps its first time.
	_, err = s.Register(ctx, "", []state.ModelRecord{v1}, nil, clock(40))
	must(t, "Register v1 again", err)
	eq(t, "history after going back", len(definitionBriefs(t, s, "", "m")), 2)
	rec, err := s.Model(ctx, "", "m")
	must(t, "Model", err)
	eq(t, "the current registration", jsonCompact(t, rec.Definition), jsonCompact(t, v1.Definition))
}

// testDefinitionsRecord: RecordDefinitions keeps what a store from before
// the history never kept, the earlier time winning; an unregistered model
// is ErrNotFound and keeps nothing of the call.
func testDefinitionsRecord(t *testing.T, s state.Store, _ *config) {
	ctx := t.Context()
	register(t, s, "", fixModel("m"))
	old := state.DefinitionRecord{Model: "m", Fingerprint: "00000000000000e0", Definition: []byte(`{"old": 1}`), FirstSeen: clock(-60)}
	must(t, "RecordDefinitions", s.RecordDefinitions(ctx, []state.DefinitionRecord{old}))
	later := old
	later.FirstSeen, later.Definition = clock(5), []byte(`{"old": 2}`)
	must(t, "RecordDefinitions again, later", s.RecordDefinitions(ctx, []state.DefinitionRecord{later}))
	eq(t, "history", definitionBriefs(t, s, "", "m"), []string{`00000000000000e0 -1h0m0s {"old":1}`})

	bad := []state.DefinitionRecord{{Model: "m", Fingerprint: "00000000000000f1", Definition: []byte(`{}`), FirstSeen: clock(1)},
		{Model: "nope", Fingerprint: "00000000000000f2", Definition: []byte(`{}`), FirstSeen: clock(1)}}
	if err := s.RecordDefinitions(ctx, bad); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("RecordDefinitions of an unregistered model = %v, want ErrNotFound", err)
	}
	eq(t, "history after a refused call", len(definitionBriefs(t, s, "", "m")), 1)
}

// jsonCompact is b without insignificant whitespace: PostgreSQL's json
// keeps the bytes, but the comparison should not depend on it.
func jsonCompact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("not JSON: %q: %v", b, err)
	}
	return buf.String()
}
