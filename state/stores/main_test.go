package stores

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its test: a store
// opened through a DSN and never closed keeps its pool's goroutines alive.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
