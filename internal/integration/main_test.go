// Package integration runs kinformer against a real kube-apiserver and etcd built and started
// by internal/testenv. Without the binaries the tests skip (or fail under
// KINFORMER_REQUIRE_INTEGRATION=1, as `make test` sets).
package integration

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/kinformer/kinformer/internal/pbdecode"
	"github.com/kinformer/kinformer/internal/testenv"
)

// shared is the cluster that tests which do not stop or compact anything run against; nil
// when the binaries are missing.
var shared *testenv.Env

func TestMain(m *testing.M) {
	code := func() int {
		if testenv.BinDir() != "" {
			env, err := testenv.New(nil, testenv.Options{Users: []string{itUserListOnly, itUserNobody}})
			if err != nil {
				fmt.Fprintf(os.Stderr, "integration: starting the shared cluster: %v\n", err)
				return 1
			}
			defer env.Stop()
			shared = env
		}
		// Every object the tests read from the server in protobuf is
		// decoded by apimachinery too and compared.
		return pbdecode.RunVerifying(m, os.Stderr)
	}()
	if code == 0 {
		// Idle HTTP/2 connections of the clientsets close on their own schedule; what must not
		// survive a test is kinformer's own goroutines.
		if err := goleak.Find(testenv.LeakOptions()...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// sharedEnv returns the shared cluster, skipping (or failing) t when there is none.
func sharedEnv(t *testing.T) *testenv.Env {
	t.Helper()
	if !testenv.Available(t) {
		return nil
	}
	if shared == nil {
		t.Fatal("binaries present but the shared cluster did not start")
	}
	return shared
}
