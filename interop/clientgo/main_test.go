package clientgo

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's test binary when any test leaves a goroutine
// running after it returns: client-go's informers and kinformer's alike must
// be gone once their context has ended and Run has returned.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
