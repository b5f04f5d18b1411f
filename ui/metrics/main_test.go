package metrics_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its test: a Monitor
// or a server that was stopped must leave nothing running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
