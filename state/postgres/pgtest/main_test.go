package pgtest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its test: a
// Terminator must end its loop, and close its connection, when stopped.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
