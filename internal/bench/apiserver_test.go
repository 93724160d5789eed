package bench

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kinformer/kinformer/internal/testenv"
)

// apiServerNamespace holds the pods of scenario 5.
const apiServerNamespace = "bench"

// sharedAPIServer is the real etcd and kube-apiserver of scenario 5, started
// and filled with pods once per benchmark process (creating 10,000 pods
// takes a while) and stopped by TestMain.
var sharedAPIServer struct {
	once sync.Once
	env  *testenv.Env
	pods int
	err  error
}

// stopSharedAPIServer stops scenario 5's server, if it was started.
func stopSharedAPIServer() {
	if sharedAPIServer.env != nil {
		sharedAPIServer.env.Stop()
	}
}

// sharedAPIServerEnv starts the server and creates pods pods in it, once.
func sharedAPIServerEnv(b *testing.B, pods int) *testenv.Env {
	b.Helper()
	if testenv.BinDir() == "" {
		b.Skipf("scenario 5 needs a real etcd and kube-apiserver: run `make bench`, or build them with "+
			"internal/testenv/build.sh and set %s to the folder it prints", testenv.BinDirEnv)
	}
	sharedAPIServer.once.Do(func() {
		env, err := testenv.New(nil, testenv.Options{})
		if err != nil {
			sharedAPIServer.err = fmt.Errorf("starting the API server: %w", err)
			return
		}
		sharedAPIServer.env = env
		start := time.Now()
		sharedAPIServer.err = CreatePods(env.Clientset(), apiServerNamespace, pods)
		sharedAPIServer.pods = pods
		if sharedAPIServer.err != nil {
			return
		}
		b.Logf("scenario 5: created %d pods in %v", pods, time.Since(start).Round(time.Millisecond))
	})
	if sharedAPIServer.err != nil {
		b.Fatal(sharedAPIServer.err)
	}
	if sharedAPIServer.pods != pods {
		b.Fatalf("the API server holds %d pods, not %d", sharedAPIServer.pods, pods)
	}
	return sharedAPIServer.env
}

// BenchmarkAPIServer is the initial sync of 10,000 pods from a real
// kube-apiserver (internal/testenv, started once per process in the parent
// and stopped by TestMain, so that it runs only during its own `go test`
// invocation) by each implementation's factory pod informer, each side in
// its own child process, through a clientset on its default configuration
// (client-go then already prefers protobuf for built-in types) and one
// configured for JSON (kinformer's factory asks for protobuf in both). Both
// informers use the streaming list when the server offers it (client-go
// v0.37's default). The floor is one LIST in protobuf through the
// clientset plus the floorStore inserts. Figures as BenchmarkHTTP's:
// sync-ms, peaklive-MB, retained-MB, allocs/pod, cpu-us/pod. The
// projection row is BenchmarkProjection's typed row with the fair
// baseline on the real server (kinformer with BenchProjection against
// client-go with a transform keeping the same fields, no floor): the
// server's own encoding dominates its sync time, so its figure is the
// client's CPU per pod.
func BenchmarkAPIServer(b *testing.B) {
	pods := 10000
	env := sharedAPIServerEnv(b, pods)
	cfg := env.Config()
	for _, tc := range []struct {
		name, contentType string
		projection        bool
	}{
		{"default", "", false},
		{"json", MediaJSON, false},
		{"projection/baseline=" + baselineSameFields, "", true},
	} {
		b.Run(tc.name+"/"+paramName("pods", pods), func(b *testing.B) {
			samples := figureSamples{}
			spec := childSpec{
				Scenario: childClientset, Pods: pods, ContentType: tc.contentType,
				URL: cfg.Host, BearerToken: cfg.BearerToken, CAFile: cfg.CAFile,
				FloorStreams: true, Projection: tc.projection, Baseline: baselineSameFields,
			}
			sides := memorySides
			if tc.projection {
				sides = []string{SideKinformer, SideClientGo}
			}
			for range b.N {
				runPairInChildren(b, spec, sides, samples)
			}
			samples.report(b)
		})
	}
}
