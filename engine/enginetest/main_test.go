package enginetest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its test: every
// store Open hands out must be closed by the test's cleanup, pool and all.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
