package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine/enginetest/gen"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/state/sqlite"
)

// TestBlockedPrintsPagesAsTheWholeListing: `bollhav blocked`, which prints
// a page at a time as the units are ranked, prints byte for byte what the
// table and the JSON of the whole listing (Blocked, read at once) are, on
// a generated project with blocked units of temporal and timeless models
// over several pages, for the environment and for one pipeline.
func TestBlockedPrintsPagesAsTheWholeListing(t *testing.T) {
	dir := t.TempDir()
	cfg := gen.Config{Models: 60, Units: 8000, Seed: 3}
	db, _, e := blockedFixture(t, "sqlite", dir, cfg)
	specPath := filepath.Join(dir, "bollhav.yaml")
	if err := os.WriteFile(specPath, gen.Spec(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	// The generated state blocks no timeless unit: block one, which
	// prints "-" for its window.
	recs, err := s.Models(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Temporality == "timeless" {
			if _, err := s.SetStatus(t.Context(), state.StatusChange{Model: r.Name, From: []state.UnitStatus{state.Pending, state.Applied},
				To: state.Blocked, Reason: "an upstream is missing", Now: gen.AsOf}); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	all, err := e.Blocked(t.Context(), gate.BlockedFilter{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	timeless := 0
	for _, u := range all {
		if u.Window.IsZero() {
			timeless++
		}
	}
	if len(all) <= 2*blockedPageSize || timeless == 0 || all[0].Holds < 10 {
		t.Fatalf("%d blocked units, %d timeless, the first holding %d: too few to page", len(all), timeless, all[0].Holds)
	}
	// The generated spec has lint warnings, which go to stderr; only the
	// listing on stdout is compared.
	world := []string{"--spec", specPath, "--dsn", db, "--as-of", state.FormatTime(gen.AsOf)}
	for _, pipeline := range []string{"", all[len(all)-1].Pipeline} {
		var want []gate.BlockedUnit
		for _, u := range all {
			if pipeline == "" || u.Pipeline == pipeline {
				want = append(want, u)
			}
		}
		args := append([]string{"blocked"}, world...)
		if pipeline != "" {
			args = append(args, "--pipeline", pipeline)
		}

		var table bytes.Buffer
		rows := make([][]string, 0, len(want))
		for _, u := range want {
			rows = append(rows, blockedRow(u))
		}
		printTable(&table, blockedHeader, rows)
		code, out, errOut := run(t, args...)
		wantText := table.String() + countLine(len(want))
		if code != 0 || out != wantText {
			t.Errorf("pipeline %q, text: code %d, stderr %q; %d bytes, want %d:\n%s", pipeline, code, errOut, len(out), len(wantText), firstDiff(out, wantText))
		}

		var js bytes.Buffer
		whole := blockedJSON{Units: []blockedUnitJSON{}}
		for _, u := range want {
			whole.Units = append(whole.Units, blockedUnitOf(u))
		}
		writeJSON(&js, whole)
		code, out, errOut = run(t, append(args, "-o", "json")...)
		if code != 0 || out != js.String() {
			t.Errorf("pipeline %q, JSON: code %d, stderr %q:\n%s", pipeline, code, errOut, firstDiff(out, js.String()))
		}
	}
}

// countLine is the table's last line for n units.
func countLine(n int) string {
	var b bytes.Buffer
	(&blockedPrinter{w: &b, n: n}).end()
	return b.String()
}

// firstDiff shows where got and want part.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(i-200, 0)
	return "got  …" + got[lo:min(i+200, len(got))] + "\nwant …" + want[lo:min(i+200, len(want))]
}

// TestBlockedPrinterLaysOutLaterPages: the widest model and a timeless
// unit that come only on a later page are laid out before the first, so
// the columns line up as in the table of the whole listing, written out
// here by hand.
func TestBlockedPrinterLaysOutLaterPages(t *testing.T) {
	w := state.Window{Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)}
	models := []gate.StuckModel{{Model: "a.b", Units: 1, Span: w}, {Model: "a.much.longer.name", Units: 1}}
	var out bytes.Buffer
	p := &blockedPrinter{w: &out}
	for _, pg := range []gate.StuckPage{
		{Models: models, Units: []gate.BlockedUnit{{Model: "a.b", Window: w, Holds: 12, Reason: "r1"}}},
		{Models: models, Units: []gate.BlockedUnit{{Model: "a.much.longer.name", Holds: 3, Reason: "r2"}}},
	} {
		if err := p.page(pg); err != nil {
			t.Fatal(err)
		}
	}
	p.end()
	want := "MODEL               SINCE                 UNTIL                 HOLDS  REASON\n" +
		"a.b                 2026-01-01T00:00:00Z  2026-01-01T01:00:00Z  12     r1\n" +
		"a.much.longer.name  -                     -                     3      r2\n" +
		"2 blocked units\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
