package controllerruntime_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kinformer/kinformer/internal/bench"
	"github.com/kinformer/kinformer/interop/controllerruntime"
)

const (
	// managerSyncChildEnv holds the JSON managerSyncSpec of a child process
	// of BenchmarkManagerSync; TestMain runs the child instead of the tests
	// when it is set.
	managerSyncChildEnv = "KINFORMER_CTRLRT_BENCH_CHILD"
	// managerSyncPodsEnv overrides the number of pods (10,000), for
	// trying the benchmark out at a small size.
	managerSyncPodsEnv = "KINFORMER_CTRLRT_BENCH_PODS"
	// managerSyncAAEnv, set to "client-go" or "kinformer", runs that engine
	// on both sides (an A/A control: the spread of identical code); the
	// benchmark is then named ManagerSync/aa=<engine>/pods=N.
	managerSyncAAEnv = "KINFORMER_CTRLRT_BENCH_AA"
	// managerSyncNamespace holds the benchmark's pods.
	managerSyncNamespace = "bench-manager-sync"
	// managerSyncTimeout bounds a child's whole job, and the parent's wait
	// on it (twice that).
	managerSyncTimeout = 5 * time.Minute
)

// managerSyncSpec tells a child process of BenchmarkManagerSync what to run.
type managerSyncSpec struct {
	// Kinformer selects kinformer's engine (controllerruntime.NewInformer);
	// otherwise the cache runs controller-runtime's default.
	Kinformer bool
	Pods      int
	// Host, BearerToken and CAFile reach the API server.
	Host, BearerToken, CAFile string
}

// managerSyncPods is the population, filled once per benchmark process.
var managerSyncPods struct {
	once sync.Once
	err  error
}

// managerSyncRotation alternates which side of a pair runs first.
var managerSyncRotation atomic.Int64

// BenchmarkManagerSync is a controller-runtime manager starting against the
// real kube-apiserver of TestMain, which holds 10,000 pods built by
// bench.NewPod (labels, annotations, an owner reference, two containers with
// resources, env, ports and probes; the values a deployment's pods repeat are
// repeated, names, IPs and owner ids unique), its cache on controller-runtime's
// default engine (client-go's SharedIndexInformer, side c) or on kinformer's
// (cache.Options{NewInformer: controllerruntime.NewInformer}, side k).
//
// One op is one pair: each side once, in its own child process (the test
// binary started again), in an order that alternates from op to op. The
// child builds a manager (metrics and health probes off, no leader
// election, its cache limited to the pods' namespace) with one controller
// for pods whose reconciler does nothing (the controller's handler only
// enqueues each pod's key), gets the pod informer from the cache, starts
// the manager and waits for the cache to sync; then it waits until the
// reconciler was called for every pod, checks that the cache lists every
// pod, stops the manager and waits for Start to return. Figures, per side:
//
//   - sync-ms: from manager.New to the pod informer's HasSynced reporting
//     true, polled every millisecond (discovery of the pod's REST mapping,
//     the list, the informer's store filled);
//   - peaklive-MB: the highest live heap of a GC cycle in that time
//     (bench.HeapPhase, one GC forced at the end), above the live heap
//     before manager.New;
//   - retained-MB: the live heap after two forced GCs, once the reconciler
//     has seen every pod, the manager still running, above the same
//     baseline.
//
// With KINFORMER_CTRLRT_BENCH_AA=client-go (or kinformer) both sides run
// that engine, as an A/A control. `make bench` runs it as its own group;
// `make bench-ctrlrt` alone. By hand:
//
//	cd interop/controllerruntime
//	KINFORMER_TESTENV_BIN=$(../../internal/testenv/build.sh) \
//	  go test -run '^$' -bench '^BenchmarkManagerSync$' -benchtime 1x -count 10 -timeout 60m .
func BenchmarkManagerSync(b *testing.B) {
	env := sharedEnv(b)
	pods := 10000
	if s := os.Getenv(managerSyncPodsEnv); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("%s=%q: want a positive number of pods", managerSyncPodsEnv, s)
		}
		pods = n
	}
	managerSyncPods.once.Do(func() {
		start := time.Now()
		managerSyncPods.err = bench.CreatePods(env.Clientset(), managerSyncNamespace, pods)
		if managerSyncPods.err == nil {
			b.Logf("created %d pods in %v", pods, time.Since(start).Round(time.Millisecond))
		}
	})
	if managerSyncPods.err != nil {
		b.Fatal(managerSyncPods.err)
	}
	kinformerSide := map[string]bool{bench.SideClientGo: false, bench.SideKinformer: true}
	name := fmt.Sprintf("pods=%d", pods)
	switch aa := os.Getenv(managerSyncAAEnv); aa {
	case "":
	case "client-go", "kinformer":
		kinformerSide[bench.SideClientGo] = aa == "kinformer"
		kinformerSide[bench.SideKinformer] = aa == "kinformer"
		name = "aa=" + aa + "/" + name
	default:
		b.Fatalf("%s=%q: want client-go or kinformer", managerSyncAAEnv, aa)
	}
	cfg := env.Config()
	b.Run(name, func(b *testing.B) {
		samples := map[string][]float64{}
		for range b.N {
			sides := []string{bench.SideClientGo, bench.SideKinformer}
			if managerSyncRotation.Add(1)%2 == 0 {
				sides[0], sides[1] = sides[1], sides[0]
			}
			for _, side := range sides {
				spec := managerSyncSpec{
					Kinformer: kinformerSide[side], Pods: pods,
					Host: cfg.Host, BearerToken: cfg.BearerToken, CAFile: cfg.CAFile,
				}
				figs, err := runManagerSyncChild(spec)
				if err != nil {
					b.Fatalf("side %s: %v", side, err)
				}
				for unit, v := range figs {
					samples[side+"-"+unit] = append(samples[side+"-"+unit], v)
				}
			}
		}
		for unit, vs := range samples {
			b.ReportMetric(bench.Median(vs), unit)
		}
	})
}

// runManagerSyncChild runs spec in a child process and returns its figures.
func runManagerSyncChild(spec managerSyncSpec) (map[string]float64, error) {
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*managerSyncTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), managerSyncChildEnv+"="+string(js))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("child (kinformer engine: %v): %w; its stderr:\n%s", spec.Kinformer, err, tail(stderr.String(), 64<<10))
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if js, ok := strings.CutPrefix(sc.Text(), "result "); ok {
			var figs map[string]float64
			return figs, json.Unmarshal([]byte(js), &figs)
		}
	}
	return nil, fmt.Errorf("child (kinformer engine: %v) printed no result; its stdout:\n%s", spec.Kinformer, tail(string(out), 64<<10))
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// managerSyncChildMain is the child's main, which TestMain calls when
// managerSyncChildEnv is set: it runs the spec, prints "result <JSON>" and
// returns the exit code.
func managerSyncChildMain(specJSON string) int {
	var spec managerSyncSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "manager sync child: bad spec:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), managerSyncTimeout)
	defer cancel()
	figs, err := managerSync(ctx, spec)
	if err == nil {
		var out []byte
		if out, err = json.Marshal(figs); err == nil {
			_, err = fmt.Printf("result %s\n", out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager sync child:", err)
		return 1
	}
	return 0
}

// managerSync is one side of one op of BenchmarkManagerSync (see there).
func managerSync(ctx context.Context, spec managerSyncSpec) (map[string]float64, error) {
	cfg := &rest.Config{Host: spec.Host, BearerToken: spec.BearerToken, TLSClientConfig: rest.TLSClientConfig{CAFile: spec.CAFile}}
	opts := manager.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  crcache.Options{DefaultNamespaces: map[string]crcache.Config{managerSyncNamespace: {}}},
	}
	if spec.Kinformer {
		opts.Cache.NewInformer = controllerruntime.NewInformer
	}
	var reconciled atomic.Int64
	allReconciled := make(chan struct{})
	noop := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		if reconciled.Add(1) == int64(spec.Pods) {
			close(allReconciled)
		}
		return reconcile.Result{}, nil
	})

	heap := bench.StartHeapPhase()
	start := time.Now()
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("manager.New: %w", err)
	}
	if err := builder.ControllerManagedBy(mgr).Named("bench-pods").For(&corev1.Pod{}).Complete(noop); err != nil {
		return nil, fmt.Errorf("building the pod controller: %w", err)
	}
	// Getting the informer before Start registers it without waiting.
	informer, err := mgr.GetCache().GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("GetInformer for pods: %w", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(runCtx) }()
	// The informer's HasSynced is polled every millisecond: the cache's
	// WaitForCacheSync polls every 100 ms (client-go's
	// WaitForCacheSync), too coarse for the figure.
	poll := time.NewTicker(time.Millisecond)
	for !informer.HasSynced() {
		select {
		case <-poll.C:
		case err := <-done:
			poll.Stop()
			return nil, fmt.Errorf("the manager stopped before the cache synced: %v", err)
		case <-ctx.Done():
			poll.Stop()
			return nil, fmt.Errorf("the pod informer did not sync: %w", ctx.Err())
		}
	}
	synced := time.Now()
	poll.Stop()
	peak, _ := heap.End()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("the cache did not sync: %w", ctx.Err())
	}

	select {
	case <-allReconciled:
	case err := <-done:
		return nil, fmt.Errorf("the manager stopped before the reconciler saw every pod: %v", err)
	case <-ctx.Done():
		return nil, fmt.Errorf("the reconciler saw %d of %d pods: %w", reconciled.Load(), spec.Pods, ctx.Err())
	}
	retained := heap.Retained()

	var list corev1.PodList
	if err := mgr.GetCache().List(ctx, &list, client.InNamespace(managerSyncNamespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the cached pods: %w", err)
	}
	if len(list.Items) != spec.Pods {
		return nil, fmt.Errorf("the cache holds %d pods, want %d", len(list.Items), spec.Pods)
	}
	stop()
	select {
	case err := <-done:
		if err != nil {
			return nil, fmt.Errorf("manager.Start returned: %w", err)
		}
	case <-time.After(time.Minute):
		return nil, errors.New("the manager did not stop within a minute of its context's end")
	}
	return map[string]float64{
		"sync-ms":     float64(synced.Sub(start).Microseconds()) / 1000,
		"peaklive-MB": peak,
		"retained-MB": retained,
	}, nil
}
