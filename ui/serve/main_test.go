package serve

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its test: an SSH
// session whose client left, or a server that was shut down, must not keep
// a UI program, its change feed or a connection handler running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
