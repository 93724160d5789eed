package bench

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's test binary when any test leaves a goroutine
// running after it returns. Started with relistChildEnv set, the binary is
// a child process of BenchmarkRelistModes and runs only that.
func TestMain(m *testing.M) {
	if spec := os.Getenv(relistChildEnv); spec != "" {
		os.Exit(runRelistChild(spec))
	}
	goleak.VerifyTestMain(stopAPIServerAfter{m})
}

// stopAPIServerAfter runs the tests and benchmarks, then stops the API server of
// scenario 5 (shared by all its runs), before goleak looks for leftovers.
type stopAPIServerAfter struct{ m *testing.M }

func (w stopAPIServerAfter) Run() int {
	code := w.m.Run()
	stopSharedAPIServer()
	return code
}
