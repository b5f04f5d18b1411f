package graphview

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its test: the
// concurrent-render test's renderers must all have returned.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
