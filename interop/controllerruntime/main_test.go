package controllerruntime_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"go.uber.org/goleak"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kinformer/kinformer/internal/testenv"
)

// shared is the cluster the tests that stop nothing run against; nil when
// the server binaries are missing (the tests then skip, or fail under
// KINFORMER_REQUIRE_INTEGRATION=1).
var shared *testenv.Env

// TestMain starts the shared cluster once for the test binary and, when every
// test passed, fails the binary if a goroutine other than the HTTP clients'
// idle connections outlived the tests. A child process of
// BenchmarkManagerSync (managerSyncChildEnv set) runs its side instead.
func TestMain(m *testing.M) {
	// controller-runtime logs through a process-wide logger; without one it
	// prints a warning with a stack trace on its first log line.
	ctrllog.SetLogger(logr.Discard())
	if spec := os.Getenv(managerSyncChildEnv); spec != "" {
		// A child process of BenchmarkManagerSync: it runs one side
		// against the parent's cluster, and nothing else.
		os.Exit(managerSyncChildMain(spec))
	}
	code := func() int {
		if testenv.BinDir() != "" {
			env, err := testenv.New(nil, testenv.Options{})
			if err != nil {
				fmt.Fprintf(os.Stderr, "controllerruntime: starting the shared cluster: %v\n", err)
				return 1
			}
			defer env.Stop()
			shared = env
		}
		return m.Run()
	}()
	if code == 0 {
		if err := goleak.Find(append(testenv.LeakOptions(), ignoreFilteredWatch)...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// ignoreFilteredWatch ignores the goroutine of apimachinery's watch.Filter,
// which controller-runtime wraps metadata-only watches in, and which
// client-go's Reflector can leave blocked on a send when its manager stops
// (kinformer's hook drains it: see drainingWatch). The test binary's final
// check ignores it because the default engine's subtests can leave it;
// TestManagerStopsWithoutLeavingGoroutines checks kinformer's engine
// without it.
var ignoreFilteredWatch = goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/watch.(*filteredWatch).loop")

// sharedEnv returns the shared cluster, skipping (or failing) t when there
// is none.
func sharedEnv(t testing.TB) *testenv.Env {
	t.Helper()
	if !testenv.Available(t) {
		return nil
	}
	if shared == nil {
		t.Fatal("server binaries present but the shared cluster did not start")
	}
	return shared
}
