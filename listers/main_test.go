package listers_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the test binary when a test leaves a goroutine running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
