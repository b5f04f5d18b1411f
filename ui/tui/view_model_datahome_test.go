package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/state/stores"
)

// The model view says where a model on a connection keeps its data: the
// connection's variable and the warehouse its DSN points at, never the
// user or the password; a model without one says nothing of it.
func TestModelViewSaysWhereItsDataLives(t *testing.T) {
	t.Setenv("BOLLHAV_TEST_WAREHOUSE", "postgres://loader:s3cretPW@wh.example:5433/shop?sslmode=disable")
	s := enginetest.Open(t, enginetest.SQLite)
	dir := t.TempDir()
	sp := enginetest.Parse(t, `models:
  - {name: raw.orders, pipeline: ingest, chunking: {interval: 1h, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
  - {name: mart.daily, pipeline: core, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     connection: {dsn_env_var: BOLLHAV_TEST_WAREHOUSE}, upstream: [{name: raw.orders, contract: encapsulate}],
     run: {sql: ["INSERT INTO {{ this }} SELECT 1"]}}
`)
	// The warehouses the CLI would build: their Locate reads the DSN.
	wh := &executor.Warehouses{Open: stores.OpenWarehouse, Locate: stores.WarehouseLocation}
	t.Cleanup(func() { _ = wh.Close() })
	e := engine.New(s, sp, engine.Options{SpecDir: dir, Actor: "test", Warehouses: wh, Now: func() time.Time { return uiClock }})
	if _, err := e.Apply(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := startUI(t, e, 120, 40, Options{View: "model", Model: "mart.daily"})
	frame := r.waitSettled(t, viewModel)
	head := strings.Split(frame, "\n")[1]
	if !strings.Contains(head, "data in $BOLLHAV_TEST_WAREHOUSE (postgres wh.example:5433/shop)") {
		t.Errorf("the header does not say where mart.daily's data lives: %q", head)
	}
	if strings.Contains(frame, "s3cretPW") || strings.Contains(frame, "loader") {
		t.Errorf("the screen shows the DSN's user or password:\n%s", frame)
	}
	r2 := startUI(t, e, 120, 40, Options{View: "model", Model: "raw.orders"})
	if frame := r2.waitSettled(t, viewModel); strings.Contains(frame, "data in") {
		t.Errorf("raw.orders has no connection, yet:\n%s", frame)
	}
}
