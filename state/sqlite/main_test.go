package sqlite

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a goroutine outlives its test: a change
// feed never stopped, a scan whose rows were never closed or a store never
// closed would each leave one behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
