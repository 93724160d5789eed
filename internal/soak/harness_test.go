package soak

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
	"github.com/kinformer/kinformer/internal/faultproxy"
	"github.com/kinformer/kinformer/internal/invariant"
	"github.com/kinformer/kinformer/internal/testenv"
)

// seedEnv names the variable that replays a run's seed.
const seedEnv = "KINFORMER_SOAK_SEED"

const soakNamespace = "soak"

// soakConfig sizes one soak run.
type soakConfig struct {
	// objects per resource, in the order of buildResources.
	objects [5]int
	// rate is the writer's target in writes per second.
	rate int
	// duration is the least time the writer and the faults run; the phase lasts until
	// every scheduled fault was injected.
	duration time.Duration
	// faultEvery is the pause between two faults.
	faultEvery time.Duration
	// extraFaults are drawn at random after one of each kind.
	extraFaults int
	// settle bounds the wait for convergence after the faults stop.
	settle time.Duration
}

// shortSeeds are the seeds TestSoakShort runs in `make test`: fixed, so that a run
// replays its fault sequence and a failure names a seed that reproduces it. The first
// found two bugs of the page-by-page relist (an expired snapshot asked for, a restarted
// list cut at its first page); the second is another order of the same faults.
var shortSeeds = []uint64{5222281293862270487, 1}

// seedsToRun returns the seeds a soak test runs: the one in KINFORMER_SOAK_SEED when it is
// set (a replay), a fresh random one under `make soak` (KINFORMER_SOAK=long), and fixed
// otherwise.
func seedsToRun(t *testing.T, fixed []uint64) []uint64 {
	if s := os.Getenv(seedEnv); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "%s=%q", seedEnv, s)
		return []uint64{seed}
	}
	if os.Getenv("KINFORMER_SOAK") == "long" || len(fixed) == 0 {
		return []uint64{rand.Uint64() >> 1}
	}
	return fixed
}

// soakResource is one informer under test with what the writer needs to change its objects.
type soakResource struct {
	name     string // the resource (plural)
	listMode bool   // forced onto LIST instead of the streaming list
	typed    bool   // typed objects (the dynamic informer stores whatever it gets)
	informer cache.SharedIndexInformer
	recorder *invariant.Recorder
	writes   *invariant.WriteLog

	create func(ctx context.Context, name string, gen int) (string, error)
	update func(ctx context.Context, name string, gen int) (string, error)
	remove func(ctx context.Context, name string) error
	list   func(ctx context.Context) (map[string]string, error)

	watchErrs atomic.Int64
	// exists[i] is whether object i exists as far as the writer knows.
	mu     sync.Mutex
	exists []bool
	gen    []int
}

var widgetGVR = schema.GroupVersionResource{Group: "soak.kinformer.dev", Version: "v1", Resource: "widgets"}

// soakRun is one soak run.
type soakRun struct {
	t     *testing.T
	cfg   soakConfig
	seed  uint64
	env   *testenv.Env
	proxy *faultproxy.Proxy
	admin kubernetes.Interface
	dyn   dynamic.Interface
	res   []*soakResource
	// targeted counts the faults aimed at each resource (the scheduler's goroutine only).
	targeted map[string]int
	// starters start the informer factories.
	starters []func(<-chan struct{})
}

func objectName(i int) string { return fmt.Sprintf("o-%05d", i) }

// labelPatch is the merge patch of an update.
func labelPatch(gen int) []byte {
	return []byte(fmt.Sprintf(`{"metadata":{"labels":{"gen":"%d"}}}`, gen))
}

// listAllPages lists all pages of a resource through list and returns key → rv.
func listAllPages[L any](ctx context.Context, list func(ctx context.Context, o metav1.ListOptions) (L, error), items func(L) ([]metav1.Object, string)) (map[string]string, error) {
	out := map[string]string{}
	opts := metav1.ListOptions{Limit: 1000}
	for {
		l, err := list(ctx, opts)
		if err != nil {
			return nil, err
		}
		objs, cont := items(l)
		for _, o := range objs {
			out[o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
		}
		if cont == "" {
			return out, nil
		}
		opts.Continue = cont
	}
}

func asObjects[T any, PT interface {
	*T
	metav1.Object
}](items []T) []metav1.Object {
	out := make([]metav1.Object, len(items))
	for i := range items {
		out[i] = PT(&items[i])
	}
	return out
}

// newSoakRun starts the cluster, the CRD, the proxy and the writer's clients.
func newSoakRun(t *testing.T, cfg soakConfig, seed uint64) *soakRun {
	t.Logf("soak seed %d (replay with %s=%d)", seed, seedEnv, seed)
	// A restart fault SIGTERMs the server and SIGKILLs it a second later: kube-apiserver
	// lingers while the informers' watches are open and etcd while kube-apiserver watches
	// it, so the default 10 s grace would make every restart a 10 s outage of waiting.
	// kube-apiserver's CPU bounds the write rate (see TestSoakCeiling); with GOGC=400 its
	// garbage collector took 3% of its CPU instead of 10% in a profile of the writer's load.
	env := testenv.Start(t, testenv.Options{StopGrace: time.Second, APIServerEnv: []string{"GOGC=400"}})
	if env == nil {
		return nil
	}
	// The writer's clients have no client-side rate limiter: the writer paces itself.
	wcfg := env.Config()
	wcfg.QPS = -1
	run := &soakRun{t: t, cfg: cfg, seed: seed, env: env, targeted: map[string]int{}, admin: kubernetes.NewForConfigOrDie(wcfg), dyn: dynamic.NewForConfigOrDie(wcfg)}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := run.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: soakNamespace}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, env.CreateCRD(ctx, widgetGVR, "Widget"))
	p, err := faultproxy.New(env.Config(), faultproxy.Options{Seed: seed, OnRequest: func(info faultproxy.RequestInfo, f *faultproxy.Fault) {
		if os.Getenv("KINFORMER_SOAK_TRACE") == "" {
			return
		}
		kind := "-"
		if f != nil {
			kind = string(f.Kind)
		}
		fmt.Fprintf(os.Stderr, "%s proxy %s %s %s rv=%s continue=%v initial=%s fault=%s\n", time.Now().Format("15:04:05.000"),
			info.Verb, info.Resource, info.Namespace, info.Query.Get("resourceVersion"), info.Query.Get("continue") != "", info.Query.Get("sendInitialEvents"), kind)
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	run.proxy = p
	run.buildResources()
	return run
}

// buildResources makes the five resources, their informers (through the proxy) and the
// writer's functions (straight to the API server).
func (run *soakRun) buildResources() {
	cs, dyn := run.admin, run.dyn
	ns := soakNamespace
	jsonCS := kubernetes.NewForConfigOrDie(run.proxy.Config())
	protoCfg := run.proxy.Config()
	protoCfg.ContentType = "application/vnd.kubernetes.protobuf"
	protoCfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	protoCS := kubernetes.NewForConfigOrDie(protoCfg)
	// Pages of 500 for the LISTs of the LIST-served informers, so that relists of the
	// pods (more than 500) meet continue tokens whatever the server's watch cache does.
	// (Watches carry a timeout, lists do not.) A paged list at a resourceVersion asks for
	// data not older than it, as the Reflector's own paged lists do: without a match the
	// server would answer with the exact, old snapshot.
	jsonFactory := informers.NewSharedInformerFactoryWithOptions(jsonCS, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			if o.TimeoutSeconds != nil || o.Limit != 0 || o.Continue != "" {
				return
			}
			o.Limit = 500
			if o.ResourceVersion != "" && o.ResourceVersion != "0" && o.ResourceVersionMatch == "" {
				o.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
			}
		}))
	protoFactory := informers.NewSharedInformerFactoryWithOptions(protoCS, 0, informers.WithNamespace(ns))
	dynFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(run.proxy.Config()), 0, ns, nil)
	meta := func(name string, gen int) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"gen": strconv.Itoa(gen)}}
	}
	rv := func(o metav1.Object, err error) (string, error) {
		if err != nil {
			return "", err
		}
		return o.GetResourceVersion(), nil
	}
	mp := types.MergePatchType
	run.res = []*soakResource{
		{
			name: "pods", listMode: true, typed: true,
			informer: jsonFactory.Core().V1().Pods().Informer(),
			create: func(ctx context.Context, name string, gen int) (string, error) {
				return rv(cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: meta(name, gen), Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:1"}}}}, metav1.CreateOptions{}))
			},
			update: func(ctx context.Context, name string, gen int) (string, error) {
				return rv(cs.CoreV1().Pods(ns).Patch(ctx, name, mp, labelPatch(gen), metav1.PatchOptions{}))
			},
			remove: func(ctx context.Context, name string) error {
				return cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
			},
			list: func(ctx context.Context) (map[string]string, error) {
				return listAllPages(ctx, cs.CoreV1().Pods(ns).List, func(l *corev1.PodList) ([]metav1.Object, string) { return asObjects(l.Items), l.Continue })
			},
		},
		{
			name: "configmaps", listMode: true, typed: true,
			informer: jsonFactory.Core().V1().ConfigMaps().Informer(),
			create: func(ctx context.Context, name string, gen int) (string, error) {
				return rv(cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta(name, gen), Data: map[string]string{"k": name}}, metav1.CreateOptions{}))
			},
			update: func(ctx context.Context, name string, gen int) (string, error) {
				return rv(cs.CoreV1().ConfigMaps(ns).Patch(ctx, name, mp, labelPatch(gen), metav1.PatchOptions{}))
			},
			remove: func(ctx context.Context, name string) error {
				return cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{})
			},
			list: func(ctx context.Context) (map[string]string, error) {
				return listAllPages(ctx, cs.CoreV1().ConfigMaps(ns).List, func(l *corev1.ConfigMapList) ([]metav1.Object, string) { return asObjects(l.Items), l.Continue })
			},
		},
		{
			name: "secrets", typed: true,
			informer: protoFactory.Core().V1().Secrets().Informer(),
			create: func(ctx context.Context, name string, gen int) (string, error) {
				return rv(cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: meta(name, gen), Data: map[string][]byte{"k": []byte(name)}}, metav1.CreateOptions{}))
			},
			update: func(ctx context.Context, name string, gen int) (string, error) {
				return rv(cs.CoreV1().Secrets(ns).Patch(ctx, name, mp, labelPatch(gen), metav1.PatchOptions{}))
			},
			remove: func(ctx context.Context, name string) error {
				return cs.CoreV1().Secrets(ns).Delete(ctx, name, metav1.DeleteOptions{})
			},
			list: func(ctx context.Context) (map[string]string, error) {
				return listAllPages(ctx, cs.CoreV1().Secrets(ns).List, func(l *corev1.SecretList) ([]metav1.Object, string) { return asObjects(l.Items), l.Continue })
			},
		},
		{
			name: "services", typed: true,
			informer: protoFactory.Core().V1().Services().Informer(),
			create: func(ctx context.Context, name string, gen int) (string, error) {
				return rv(cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: meta(name, gen), Spec: corev1.ServiceSpec{
					ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}))
			},
			update: func(ctx context.Context, name string, gen int) (string, error) {
				return rv(cs.CoreV1().Services(ns).Patch(ctx, name, mp, labelPatch(gen), metav1.PatchOptions{}))
			},
			remove: func(ctx context.Context, name string) error {
				return cs.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{})
			},
			list: func(ctx context.Context) (map[string]string, error) {
				return listAllPages(ctx, cs.CoreV1().Services(ns).List, func(l *corev1.ServiceList) ([]metav1.Object, string) { return asObjects(l.Items), l.Continue })
			},
		},
		{
			name:     "widgets",
			informer: dynFactory.ForResource(widgetGVR).Informer(),
			create: func(ctx context.Context, name string, gen int) (string, error) {
				u := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "soak.kinformer.dev/v1", "kind": "Widget",
					"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"gen": strconv.Itoa(gen)}},
					"spec":     map[string]any{"size": int64(gen)},
				}}
				return rv(dyn.Resource(widgetGVR).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}))
			},
			update: func(ctx context.Context, name string, gen int) (string, error) {
				return rv(dyn.Resource(widgetGVR).Namespace(ns).Patch(ctx, name, mp, labelPatch(gen), metav1.PatchOptions{}))
			},
			remove: func(ctx context.Context, name string) error {
				return dyn.Resource(widgetGVR).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
			},
			list: func(ctx context.Context) (map[string]string, error) {
				return listAllPages(ctx, dyn.Resource(widgetGVR).Namespace(ns).List, func(l *unstructured.UnstructuredList) ([]metav1.Object, string) {
					return asObjects(l.Items), l.GetContinue()
				})
			},
		},
	}
	for i, r := range run.res {
		r.recorder = invariant.NewRecorder(r.name)
		r.writes = invariant.NewWriteLog()
		r.exists = make([]bool, run.cfg.objects[i])
		r.gen = make([]int, run.cfg.objects[i])
		_, err := r.informer.AddEventHandler(r.recorder.Handler())
		require.NoError(run.t, err)
		r := r
		require.NoError(run.t, r.informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			r.watchErrs.Add(1)
		}))
	}
	run.t.Cleanup(func() {
		jsonFactory.Shutdown()
		protoFactory.Shutdown()
		dynFactory.Shutdown()
	})
	run.starters = []func(<-chan struct{}){jsonFactory.Start, protoFactory.Start, dynFactory.Start}
}

// classify records the outcome of one write in the resource's log and updates what the
// writer believes exists. op is an invariant.Kind*.
func (r *soakResource) classify(i int, op string, rv string, err error) {
	key := soakNamespace + "/" + objectName(i)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil && op == invariant.KindDelete:
		r.writes.Deleted(key)
		r.exists[i] = false
	case err == nil:
		r.writes.Wrote(op, key, rv)
		r.exists[i] = true
	case apierrors.IsAlreadyExists(err):
		r.writes.Failed(op)
		r.exists[i] = true
	case apierrors.IsNotFound(err):
		r.writes.Failed(op)
		r.exists[i] = false
	case certainlyRefused(err):
		r.writes.Failed(op)
	default:
		// The request may or may not have been applied.
		r.writes.Uncertain(op, key)
		r.exists[i] = op != invariant.KindDelete
	}
}

// certainlyRefused reports errors after which the server certainly did not apply a write: it
// answered with a client error, or the connection was refused.
func certainlyRefused(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		return code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests
	}
	return strings.Contains(err.Error(), "connection refused")
}

// populate creates the initial objects with 32 concurrent writers.
func (run *soakRun) populate(ctx context.Context) int {
	type job struct{ r, i int }
	jobs := make(chan job)
	var wg sync.WaitGroup
	var created atomic.Int64
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r := run.res[j.r]
				for attempt := 0; attempt < 5; attempt++ {
					rv, err := r.create(ctx, objectName(j.i), 0)
					r.classify(j.i, invariant.KindAdd, rv, err)
					if err == nil || apierrors.IsAlreadyExists(err) {
						created.Add(1)
						break
					}
				}
			}
		}()
	}
	for ri, n := range run.cfg.objects {
		for i := 0; i < n; i++ {
			jobs <- job{ri, i}
		}
	}
	close(jobs)
	wg.Wait()
	return int(created.Load())
}

// writeStats is what a writer run measured: confirmed writes per second of the run
// and the latency of every request.
type writeStats struct {
	mu        sync.Mutex
	start     time.Time
	perSecond []int           // confirmed writes in each second since start
	done      []time.Time     // when each confirmed write was answered
	latencies []time.Duration // of every request, whatever its outcome
	attempts  int
}

func newWriteStats() *writeStats { return &writeStats{start: time.Now()} }

func (s *writeStats) add(began time.Time, took time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempts++
	s.latencies = append(s.latencies, took)
	if !ok {
		return
	}
	s.done = append(s.done, began.Add(took))
	sec := int(began.Add(took).Sub(s.start) / time.Second)
	for len(s.perSecond) <= sec {
		s.perSecond = append(s.perSecond, 0)
	}
	s.perSecond[sec]++
}

// confirmed returns the confirmed writes that ended in [from, to) since start.
func (s *writeStats) confirmed(from, to time.Duration) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for sec, c := range s.perSecond {
		if d := time.Duration(sec) * time.Second; d >= from && d < to {
			n += c
		}
	}
	return n
}

// stall returns the longest time without a confirmed write in the window that starts at
// from and ends with the first write confirmed after ready (or at end, when the writer
// stopped): how long a server restart begun at from and ready again at ready stopped the
// writer. Writes the old server still answered after from, and those the new one answered
// before it reported ready, count as the writer not stalled.
func (s *writeStats) stall(from, ready, end time.Time) time.Duration {
	s.mu.Lock()
	done := append([]time.Time(nil), s.done...)
	s.mu.Unlock()
	sort.Slice(done, func(i, j int) bool { return done[i].Before(done[j]) })
	prev, longest := from, time.Duration(0)
	for _, t := range done {
		if t.Before(from) {
			continue
		}
		longest = max(longest, t.Sub(prev))
		prev = t
		if t.After(ready) {
			return longest
		}
	}
	return max(longest, end.Sub(prev))
}

// series returns the confirmed writes of each second since start.
func (s *writeStats) series() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.perSecond...)
}

// latency returns the latency quantiles q (0..1) of all requests.
func (s *writeStats) latency(qs ...float64) []time.Duration {
	s.mu.Lock()
	l := append([]time.Duration(nil), s.latencies...)
	s.mu.Unlock()
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	out := make([]time.Duration, len(qs))
	for i, q := range qs {
		if len(l) > 0 {
			out[i] = l[min(len(l)-1, int(q*float64(len(l))))].Round(100 * time.Microsecond)
		}
	}
	return out
}

// write runs the writer until ctx ends: with rate > 0, workers take tokens paced at rate
// per second (a token the workers are too busy to take is dropped rather than burst
// later); with rate 0 they write back to back. Worker w owns the objects whose index is w
// modulo the worker count, so no two writes to one object race. An object that exists is
// updated (3 in 4) or deleted; one that does not is created.
func (run *soakRun) write(ctx context.Context, workers, rate int, stats *writeStats) {
	tokens := make(chan struct{}, workers)
	var wg sync.WaitGroup
	if rate > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(tokens)
			const tick = 10 * time.Millisecond
			tk := time.NewTicker(tick)
			defer tk.Stop()
			start := time.Now()
			sent := 0
			for {
				select {
				case <-ctx.Done():
					return
				case <-tk.C:
				}
				due := int(time.Since(start).Seconds() * float64(rate))
				for ; sent < due; sent++ {
					select {
					case tokens <- struct{}{}:
					case <-ctx.Done():
						return
					default: // the workers are behind: drop the token rather than burst later
					}
				}
			}
		}()
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(run.seed, uint64(w)+1))
			wctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for {
				if rate > 0 {
					if _, ok := <-tokens; !ok {
						return
					}
				} else if ctx.Err() != nil {
					return
				}
				ri := rnd.IntN(len(run.res))
				r := run.res[ri]
				n := len(r.exists)
				slots := (n - w + workers - 1) / workers
				if slots <= 0 {
					continue
				}
				i := w + workers*rnd.IntN(slots)
				r.mu.Lock()
				exists := r.exists[i]
				r.gen[i]++
				gen := r.gen[i]
				r.mu.Unlock()
				opCtx, opCancel := context.WithTimeout(wctx, 10*time.Second)
				began := time.Now()
				var err error
				switch {
				case !exists:
					var rv string
					rv, err = r.create(opCtx, objectName(i), gen)
					r.classify(i, invariant.KindAdd, rv, err)
				case rnd.IntN(4) == 0:
					err = r.remove(opCtx, objectName(i))
					r.classify(i, invariant.KindDelete, "", err)
				default:
					var rv string
					rv, err = r.update(opCtx, objectName(i), gen)
					r.classify(i, invariant.KindUpdate, rv, err)
				}
				opCancel()
				if stats != nil {
					stats.add(began, time.Since(began), err == nil)
				}
			}
		}()
	}
	wg.Wait()
}

// targets returns the invariant targets of the five informers.
func (run *soakRun) targets() []invariant.Target {
	out := make([]invariant.Target, 0, len(run.res))
	for _, r := range run.res {
		out = append(out, invariant.Target{Name: r.name, Store: r.informer.GetStore(), Recorder: r.recorder, List: r.list, Writes: r.writes})
	}
	return out
}

// sortedCounts renders a count map in key order.
func sortedCounts[K ~string](m map[K]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, string(k))
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%d", k, m[K(k)])
	}
	return b.String()
}
