package lean

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's test binary when any test leaves a goroutine
// running after it returns.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
