package engine

import (
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// TestClock pins what the front ends read ages and gates by: the set clock,
// in UTC, or the wall clock when none is set.
func TestClock(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("CET", 3600))
	e := New(nil, nil, Options{Now: func() time.Time { return at }})
	if got := e.Clock(); !got.Equal(at) || got.Location() != time.UTC {
		t.Errorf("Clock() with Now set = %v, want %v in UTC", got, at)
	}
	before := time.Now()
	got := New(nil, nil, Options{}).Clock()
	if got.Before(before) || got.After(time.Now()) || got.Location() != time.UTC {
		t.Errorf("Clock() without Now = %v, want the wall clock in UTC", got)
	}
}

// As and InEnv are sessions: new engines over the same store, spec and
// warehouses, with an actor, read-only flag or environment of their own;
// the engine they came from is left as it was.
func TestSessionsLeaveTheirEngineAsItWas(t *testing.T) {
	store := &struct{ state.Store }{}
	sp := &spec.Spec{}
	wh := &executor.Warehouses{}
	e := New(store, sp, Options{SpecDir: "/shop", Env: spec.Env{Suffix: "pr1"}, Actor: "alice", Warehouses: wh})
	shares := func(name string, s *Engine) {
		t.Helper()
		if s == e || s.store != e.store || s.Spec() != sp || s.opts.Warehouses != wh || s.SpecDir() != "/shop" {
			t.Errorf("%s does not share e's store, spec, warehouses and spec dir in an engine of its own", name)
		}
	}
	v := e.As("ssh:bob", true)
	shares("As", v)
	if v.Actor() != "ssh:bob" || !v.ReadOnly() || v.Env() != e.Env() {
		t.Errorf("As(ssh:bob, true): actor %q, read-only %v, env %v", v.Actor(), v.ReadOnly(), v.Env())
	}
	d := e.InEnv(spec.Env{Suffix: "dev"})
	shares("InEnv", d)
	if d.Env().Suffix != "dev" || d.Actor() != "alice" || d.ReadOnly() {
		t.Errorf("InEnv(dev): env %v, actor %q, read-only %v", d.Env(), d.Actor(), d.ReadOnly())
	}
	if e.Actor() != "alice" || e.ReadOnly() || e.Env().Suffix != "pr1" {
		t.Errorf("a session changed its engine: actor %q, read-only %v, env %v", e.Actor(), e.ReadOnly(), e.Env())
	}
}
