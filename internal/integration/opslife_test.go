package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
	"github.com/kinformer/kinformer/internal/faultproxy"
	"github.com/kinformer/kinformer/internal/testenv"
)

// countingConfig returns a copy of cfg whose requests are counted: LIST
// requests, and watches that stream an initial list (sendInitialEvents).
func countingConfig(cfg *rest.Config, lists, streams *atomic.Int64) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			q := r.URL.Query()
			switch {
			case r.Method == http.MethodGet && q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true":
				streams.Add(1)
			case r.Method == http.MethodGet && q.Get("watch") != "true" && r.URL.Path[len(r.URL.Path)-1] == 's':
				lists.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
	return cfg
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestFreshnessReadYourWrites writes through the API and waits for the
// informer to catch up with the write's resourceVersion: the lister then
// sees the write.
func TestFreshnessReadYourWrites(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	ns := testenv.Namespace(t, cs)
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	lister := factory.Core().V1().ConfigMaps().Lister()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer factory.Shutdown()
	defer cancel()
	factory.StartWithContext(ctx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
	informer := factory.Core().V1().ConfigMaps().Informer()

	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("cm-%d", i)
		created, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
		require.NoError(t, err)
		require.NoError(t, cache.WaitForResourceVersion(ctx, informer, created.ResourceVersion))
		got, err := lister.ConfigMaps(ns).Get(name)
		require.NoError(t, err, "the lister sees the write once the wait returned")
		assert.Equal(t, created.ResourceVersion, got.ResourceVersion)

		created.Data["v"] = "2"
		updated, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, created, metav1.UpdateOptions{})
		require.NoError(t, err)
		require.NoError(t, cache.WaitForResourceVersion(ctx, informer, updated.ResourceVersion))
		got, err = lister.ConfigMaps(ns).Get(name)
		require.NoError(t, err)
		assert.Equal(t, "2", got.Data["v"])
	}

	// A deletion: waiting for the resourceVersion of the delete (from the
	// object as the API returned it before) is not possible, so wait for
	// the last write before it and check the lister, then the deletion by
	// its event's version via a later write.
	require.NoError(t, cs.CoreV1().ConfigMaps(ns).Delete(ctx, "cm-0", metav1.DeleteOptions{}))
	marker, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "marker"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, cache.WaitForResourceVersion(ctx, informer, marker.ResourceVersion))
	_, err = lister.ConfigMaps(ns).Get("cm-0")
	assert.True(t, apierrors.IsNotFound(err), "the deletion before the marker is visible: %v", err)
}

// TestWatchLivenessBlackHole runs an informer through the fault proxy, which forwards its
// first watch (the initial list's) up to the first periodic bookmark of the real server's
// watch cache and then black-holes it: silence, while the connection stays healthy, so
// HTTP/2 pings do not notice. The watch cache sends a watch bookmarks other than the
// initial-events-end one only once it has seen a change newer than the watch's start (then
// about once a minute): a pod created after the sync is that change. That bookmark arms the
// liveness deadline; once it passes, the watch is reopened from the last resourceVersion
// and a pod created during the silence arrives, without a relist. Every watch request,
// the streaming initial list's included, asks for client-go's timeout of 5 to 10 minutes.
// The waits are hang guards only: how long the bookmark and the deadline take is logged.
func TestWatchLivenessBlackHole(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	ns := testenv.Namespace(t, cs)
	type watchRequest struct {
		rv, timeoutSeconds string
		initialEvents      bool
	}
	var mu sync.Mutex
	var watches []watchRequest
	proxy, err := faultproxy.New(env.Config(), faultproxy.Options{
		OnRequest: func(info faultproxy.RequestInfo, _ *faultproxy.Fault) {
			if info.Verb != faultproxy.Watch || info.Resource != "pods" || info.Namespace != ns {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			watches = append(watches, watchRequest{
				rv:             info.Query.Get("resourceVersion"),
				timeoutSeconds: info.Query.Get("timeoutSeconds"),
				initialEvents:  info.Query.Get("sendInitialEvents") == "true",
			})
		},
	})
	require.NoError(t, err)
	defer func() { _ = proxy.Close() }()
	watchRequests := func() []watchRequest {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(watches)
	}

	// The first watch of the namespace's pods is black-holed after its first periodic
	// bookmark.
	hole := proxy.Inject(faultproxy.Rule{
		Match: faultproxy.Match{Verb: faultproxy.Watch, Resource: "pods", Namespace: ns},
		Fault: faultproxy.Fault{Kind: faultproxy.BlackHole, AfterBookmark: true},
		Times: 1,
	})
	defer hole.Remove()

	const deadline = 6 * time.Second
	factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(proxy.Config()), 0,
		informers.WithNamespace(ns), informers.WithWatchIdleTimeout(deadline))
	informer := factory.Core().V1().Pods().Informer()
	idleErrs := make(chan *cache.WatchIdleTimeoutError, 10)
	var otherErrs atomic.Int64
	require.NoError(t, informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		var idle *cache.WatchIdleTimeoutError
		if !errors.As(err, &idle) {
			otherErrs.Add(1)
			return
		}
		select {
		case idleErrs <- idle:
		default:
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer factory.Shutdown()
	defer cancel()
	start := time.Now()
	factory.StartWithContext(ctx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
	listsBefore := proxy.Requests()[faultproxy.List]
	_, err = cs.CoreV1().Pods(ns).Create(ctx, itPod(ns, "before-black-hole", nil), metav1.CreateOptions{})
	require.NoError(t, err)

	require.Eventually(t, func() bool { return proxy.Counts()[faultproxy.BlackHole] > 0 }, 3*time.Minute, 50*time.Millisecond,
		"the watch never delivered a periodic bookmark")
	silentAt := time.Now()
	_, err = cs.CoreV1().Pods(ns).Create(ctx, itPod(ns, "during-black-hole", nil), metav1.CreateOptions{})
	require.NoError(t, err)

	var idle *cache.WatchIdleTimeoutError
	select {
	case idle = <-idleErrs:
	case <-time.After(2 * time.Minute):
		t.Fatal("the black-holed watch never hit the liveness deadline")
	}
	firedAt := time.Now()
	require.Eventually(t, func() bool {
		_, err := factory.Core().V1().Pods().Lister().Pods(ns).Get("during-black-hole")
		return err == nil
	}, 2*time.Minute, 10*time.Millisecond, "the pod never arrived after the deadline")
	t.Logf("periodic bookmark %v after the start, deadline fired %v after the silence began (deadline %v), pod arrived %v after it",
		silentAt.Sub(start).Round(time.Millisecond), firedAt.Sub(silentAt).Round(time.Millisecond), deadline, time.Since(silentAt).Round(time.Millisecond))

	assert.Equal(t, deadline, idle.Timeout)
	assert.Equal(t, listsBefore, proxy.Requests()[faultproxy.List], "no relist")
	assert.Zero(t, otherErrs.Load(), "no other watch error")
	got := watchRequests()
	t.Logf("watch requests: %+v", got)
	require.Len(t, got, 2, "the black-holed watch and the one reopened after the deadline")
	assert.Equal(t, clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient), got[0].initialEvents,
		"the first watch is the streaming initial list when the client streams lists")
	assert.False(t, got[1].initialEvents, "the watch is reopened, not relisted by a streaming list")
	assert.Equal(t, idle.ResourceVersion, got[1].rv, "reopened from the last resourceVersion")
	for _, w := range got {
		seconds, err := strconv.Atoi(w.timeoutSeconds)
		require.NoError(t, err, "timeoutSeconds of %+v", w)
		assert.True(t, seconds >= 300 && seconds < 600, "a watch asked for a timeout of %d s, not client-go's 5 to 10 minutes", seconds)
	}
	cancel()
}

// TestReleaseInformerAfterCRDDeleted runs a dynamic informer for a custom
// resource beside a pod informer, deletes the CRD, releases its informer:
// its goroutines end, the pod informer keeps delivering, and a new informer
// for a re-created CRD works.
func TestReleaseInformerAfterCRDDeleted(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	dyn := dynamic.NewForConfigOrDie(env.Config())
	ns := testenv.Namespace(t, cs)
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	group := "release" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10) + ".example.com"
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "gadgets"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	createCRD := func() {
		crd := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata":   map[string]interface{}{"name": "gadgets." + group},
			"spec": map[string]interface{}{
				"group": group,
				"scope": "Namespaced",
				"names": map[string]interface{}{"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
				"versions": []interface{}{map[string]interface{}{
					"name": "v1", "served": true, "storage": true,
					"schema": map[string]interface{}{"openAPIV3Schema": map[string]interface{}{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
				}},
			},
		}}
		_, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			_, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			return err == nil
		}, time.Minute, 100*time.Millisecond, "the CRD is not served")
	}
	createGadget := func(name string) {
		g := &unstructured.Unstructured{Object: map[string]interface{}{"apiVersion": group + "/v1", "kind": "Gadget", "metadata": map[string]interface{}{"name": name, "namespace": ns}}}
		_, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, g, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	createCRD()
	createGadget("g1")

	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
	defer factory.Shutdown()
	defer cancel() // before Shutdown
	pods := factory.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	baseline := goleak.IgnoreCurrent()

	gadgets := factory.ForResource(gvr)
	var mu sync.Mutex
	var seen []string
	_, err := gadgets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj interface{}) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, obj.(*unstructured.Unstructured).GetName())
	}})
	require.NoError(t, err)
	factory.Start(ctx.Done())
	require.True(t, factory.WaitForCacheSync(ctx.Done())[gvr])

	require.NoError(t, dyn.Resource(crdGVR).Delete(ctx, "gadgets."+group, metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		_, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		return err != nil
	}, time.Minute, 100*time.Millisecond, "the CRD is still served")

	released, err := factory.(informers.ResourceReleaser).ReleaseResource(ctx, gvr)
	require.NoError(t, err)
	assert.True(t, released)
	require.NoError(t, goleak.Find(append(testenv.LeakOptions(), baseline)...), "the released informer left goroutines behind")

	_, err = cs.CoreV1().Pods(ns).Create(ctx, itPod(ns, "after-release", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := pods.Lister().ByNamespace(ns).Get("after-release")
		return err == nil
	}, time.Minute, 10*time.Millisecond, "the pod informer stopped delivering")

	createCRD()
	createGadget("g2")
	again := factory.ForResource(gvr)
	factory.Start(ctx.Done())
	require.True(t, factory.WaitForCacheSync(ctx.Done())[gvr])
	got, err := again.Lister().List(labels.Everything())
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "g2", got[0].(*unstructured.Unstructured).GetName())
	mu.Lock()
	assert.Equal(t, []string{"g1"}, seen, "the released informer's handler got nothing more")
	mu.Unlock()
	require.NoError(t, dyn.Resource(crdGVR).Delete(ctx, "gadgets."+group, metav1.DeleteOptions{}))
}

// TestWarmRestartFigures measures restarts of a pod informer with and
// without a snapshot: initial lists (LIST requests plus streaming lists) and
// time to synced, each the median of KINFORMER_WARM_ROUNDS runs (default 3).
// KINFORMER_WARM_PODS sets the number of pods (default 500; the figures in
// the report use 5000). The snapshot is written by one first start and each
// warm restart rewrites it on stop; every run checks that the lister holds
// all n pods once synced.
func TestWarmRestartFigures(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	n := 500
	if v, err := strconv.Atoi(os.Getenv("KINFORMER_WARM_PODS")); err == nil && v > 0 {
		n = v
	}
	rounds := 3
	if v, err := strconv.Atoi(os.Getenv("KINFORMER_WARM_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	ns := testenv.Namespace(t, cs)
	itCreatePods(t, cs, ns, "warm", n, nil)
	dir := t.TempDir()

	run := func(t *testing.T, snapshot bool) (lists, streams int64, took time.Duration) {
		var l, s atomic.Int64
		ccs := kubernetes.NewForConfigOrDie(countingConfig(env.Config(), &l, &s))
		opts := []informers.SharedInformerOption{informers.WithNamespace(ns)}
		if snapshot {
			opts = append(opts, informers.WithSnapshotDir(dir))
		}
		factory := informers.NewSharedInformerFactoryWithOptions(ccs, 0, opts...)
		factory.Core().V1().Pods().Informer()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		start := time.Now()
		factory.StartWithContext(ctx)
		require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
		took = time.Since(start)
		all, err := factory.Core().V1().Pods().Lister().Pods(ns).List(labels.Everything())
		require.NoError(t, err)
		require.Len(t, all, n)
		cancel()
		factory.Shutdown()
		return l.Load(), s.Load(), took
	}
	median := func(d []time.Duration) time.Duration {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[len(d)/2]
	}
	report := func(what string, lists, streams int64, took []time.Duration) {
		line := fmt.Sprintf("warm-restart figures (%d pods): %-30s runs %d, LIST requests %d, streaming lists %d (totals), time to synced median %v of %v",
			n, what, len(took), lists, streams, median(took).Round(time.Millisecond), roundToMillis(took))
		t.Log(line)
		fmt.Println(line)
	}
	measure := func(what string, snapshot bool, wantInitialLists int64) {
		var lists, streams int64
		var took []time.Duration
		for i := 0; i < rounds; i++ {
			l, s, d := run(t, snapshot)
			assert.Equal(t, wantInitialLists, l+s, "%s, run %d: initial lists", what, i+1)
			lists, streams = lists+l, streams+s
			took = append(took, d)
		}
		report(what, lists, streams, took)
	}
	measure("restart without snapshot", false, 1)
	l, s, d := run(t, true)
	report("first start with snapshot", l, s, []time.Duration{d})
	assert.Equal(t, int64(1), l+s)
	measure("warm restart from snapshot", true, 0)
}

// roundToMillis rounds durations to the millisecond, for the figures' log lines.
func roundToMillis(d []time.Duration) []time.Duration {
	out := make([]time.Duration, len(d))
	for i, v := range d {
		out[i] = v.Round(time.Millisecond)
	}
	return out
}
