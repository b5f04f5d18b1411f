package state

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its test: a
// Follower whose context ended must close its channel and return, or every
// UI that ever followed a feed would keep a reader alive.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
