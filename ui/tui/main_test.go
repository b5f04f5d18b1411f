package tui

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/bollhav/bollhav/engine/enginetest"
)

// TestMain fails the package when a goroutine outlives its test: a program
// that quit must leave behind no change feed, no feed subscription, no load
// and no run it started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// teatest.NewTestModel starts a goroutine per program that waits for
		// SIGINT/SIGTERM on a channel it never closes, so it outlives every
		// program, by teatest's design; it holds nothing of ours.
		goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"),
		// The demo folder the demo tests copy is seeded once (CopyOfTemplate).
		goleak.Cleanup(func(int) { enginetest.RemoveTemplates() }),
	)
}
