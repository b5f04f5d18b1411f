package cli

import (
	"io"
	"testing"
	"time"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/executor"
	"github.com/bollhav/bollhav/engine/spec"
)

// TestRunProgressKeepsTheDataExecutorsTransaction: the progress view wraps
// the run's executor to see units start. The wrapper must still be an
// Applier for sql and query models, or `bollhav run` would commit their
// rows and their applied state in two transactions instead of one.
func TestRunProgressKeepsTheDataExecutorsTransaction(t *testing.T) {
	sp, err := spec.Parse("bollhav.yaml", []byte(`models:
  - {name: core.orders, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"},
     run: {query: "SELECT 1 AS id", write: {mode: append}}}
  - {name: raw.orders, chunking: {interval: 1d, start: "2026-01-01T00:00:00Z"}, run: {command: ["true"]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	e := engine.New(enginetest.Open(t, enginetest.SQLite), sp, engine.Options{})
	v := newRunView(io.Discard, palette{}, nil, nil, true, false, time.Now)
	wrapped := v.executor(e.Executor())
	a, ok := wrapped.(executor.Applier)
	if !ok {
		t.Fatalf("the progress wrapper %T hides the data executor's Applier", wrapped)
	}
	if !a.AppliesItself(sp.Model("core.orders")) || a.AppliesItself(sp.Model("raw.orders")) {
		t.Error("AppliesItself is not the data executor's answer: a query model applies itself, a command model does not")
	}
}
