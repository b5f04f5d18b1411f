package ui_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
	"github.com/bollhav/bollhav/ui"
	"github.com/bollhav/bollhav/ui/cli"
)

// demo is the demo shop (`bollhav demo --no-ui`) seeded into a temporary
// folder, and an engine over its store as the UI opens it.
type demo struct {
	dir    string
	e      *engine.Engine
	outage state.Window // raw.payments' failed hour
}

func seedDemo(t *testing.T) *demo {
	t.Helper()
	if testing.Short() {
		t.Skip("seeds the demo shop")
	}
	dir := filepath.Join(t.TempDir(), "shop")
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"demo", "--dir", dir, "--no-ui"}, cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb}); code != 0 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	sp, err := spec.Load(filepath.Join(dir, "bollhav.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlite.Open(t.Context(), filepath.Join(dir, ".bollhav", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	b, err := os.ReadFile(filepath.Join(dir, "scripts", "outage"))
	if err != nil {
		t.Fatal(err)
	}
	at, err := time.Parse(time.RFC3339, strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return &demo{dir: dir, e: &engine.Engine{Store: store, Spec: sp, SpecDir: dir, Actor: "test"},
		outage: state.Window{Since: at, Until: at.Add(time.Hour)}}
}

// units are model's units by status, read from the store.
func (d *demo) units(t *testing.T, model string) []state.Unit {
	t.Helper()
	var out []state.Unit
	if err := d.e.Store.ScanUnits(context.Background(), state.UnitQuery{Model: model}, func(u state.Unit) error {
		out = append(out, u)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDemoWhyShowsTheRootCausesWholeError: at 80×24, enter on the first
// incident explains the blocked revenue day, and the root cause's error is
// on the screen whole — the provider's "503" and, on its own line of the
// error, "the payment provider is down" — not cut to one line.
func TestDemoWhyShowsTheRootCausesWholeError(t *testing.T) {
	d := seedDemo(t)
	r := ui.StartDemoUI(t, d.e, 80, 24, ui.Options{})
	r.WaitIncidents(t)
	r.Keys("enter")
	f := r.WaitWhy(t)
	ui.CheckFrame(t, f, 80, 24)
	for _, want := range []string{"why core.daily_revenue", "← root cause", "503 Service Unavailable", "the payment provider is down; retry later"} {
		if !strings.Contains(f, want) {
			t.Errorf("the why screen lacks %q:\n%s", want, f)
		}
	}
}
