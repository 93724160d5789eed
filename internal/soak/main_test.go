package soak

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/kinformer/kinformer/internal/testenv"
)

// TestMain fails the package's test binary when any test leaves a goroutine running after
// it returns. Idle HTTP/2 connections of the clientsets close on their own schedule; what
// must not survive is kinformer's own goroutines.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, testenv.LeakOptions()...)
}
