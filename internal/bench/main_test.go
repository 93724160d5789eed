package bench

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's test binary when any test leaves a goroutine
// running after it returns. Started with childEnv set, the binary is a
// child process of a benchmark (child_test.go) and runs only the side its
// spec names.
func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(runChildProcess(spec))
	}
	goleak.VerifyTestMain(stopAPIServerAfter{m})
}

// stopAPIServerAfter runs the tests and benchmarks, then stops the API servers of
// scenario 5 and of the sharded scenario (each shared by all its runs), before goleak
// looks for leftovers.
type stopAPIServerAfter struct{ m *testing.M }

func (w stopAPIServerAfter) Run() int {
	code := w.m.Run()
	stopSharedAPIServer()
	stopShardedAPIServer()
	return code
}
