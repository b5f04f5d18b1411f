package postgres

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its test: a change
// feed listener not stopped by Close or by its context, or a pool (with its
// health checks) never closed, would each leave one behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
