package enginetest

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/state"
)

func TestEachOpensFreshStores(t *testing.T) {
	Each(t, func(t *testing.T, s state.Store) {
		if got := s.Backend(); got != t.Name()[len(t.Name())-len(got):] {
			t.Errorf("backend %q under subtest %s", got, t.Name())
		}
		ms, err := s.Models(t.Context(), "")
		if err != nil || len(ms) != 0 {
			t.Fatalf("fresh store has models %v (err %v)", ms, err)
		}
		ids, err := s.Register(t.Context(), "", []state.ModelRecord{{Name: "a.b", Pipeline: "default",
			Temporality: "timeless", Definition: []byte(`{}`), ContentHash: "sha256:x"}}, nil, time.Unix(0, 0))
		if err != nil || ids.TaskIDs["a.b"] != 1 {
			t.Fatalf("Register: %v %v", ids, err)
		}
	})
}

func TestStores(t *testing.T) {
	ss := Stores(t)
	if ss[SQLite] == nil {
		t.Fatal("no sqlite store")
	}
	for name, s := range ss {
		if s.Backend() != name {
			t.Errorf("store %s reports backend %s", name, s.Backend())
		}
	}
}
