package informers_test

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	informerscorev1 "github.com/kinformer/kinformer/informers/core/v1"
)

var (
	podsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nodesGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
)

func newPod(ns, name string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}}
}

// newFakeClientset returns a fake clientset holding objs; see the smoke tests for
// why NewSimpleClientset.
func newFakeClientset(objs ...runtime.Object) *fake.Clientset {
	return fake.NewSimpleClientset(objs...) //nolint:staticcheck // fast, enough for these tests
}

// startAndSync starts factory until the test ends, waits for its caches, and
// registers the cancel-then-Shutdown cleanup.
func startAndSync(t *testing.T, factory informers.SharedInformerFactory) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
	})
	factory.StartWithContext(ctx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
	return ctx
}

func podKeys(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	sort.Strings(out)
	return out
}

// handlerEvent is one handler notification.
type handlerEvent struct {
	kind string // add, update, delete
	key  string
}

func TestPodInformerAndListerFollowTheClientset(t *testing.T) {
	client := newFakeClientset(newPod("a", "pre", map[string]string{"app": "web"}))
	watches := countWatches(client)
	factory := informers.NewSharedInformerFactory(client, 0)
	pods := factory.Core().V1().Pods()

	events := make(chan handlerEvent, 100)
	_, err := pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			events <- handlerEvent{"add", obj.(*corev1.Pod).Namespace + "/" + obj.(*corev1.Pod).Name}
		},
		UpdateFunc: func(_, obj interface{}) {
			events <- handlerEvent{"update", obj.(*corev1.Pod).Namespace + "/" + obj.(*corev1.Pod).Name}
		},
		DeleteFunc: func(obj interface{}) {
			key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
			assert.NoError(t, err)
			events <- handlerEvent{"delete", key}
		},
	})
	require.NoError(t, err)
	typedEvents := make(chan handlerEvent, 100)
	_, err = pods.TypedInformer().AddTypedEventHandler(informerscorev1.PodHandlerFuncs{
		AddFunc:    func(p *corev1.Pod) { typedEvents <- handlerEvent{"add", p.Namespace + "/" + p.Name} },
		UpdateFunc: func(_, p *corev1.Pod) { typedEvents <- handlerEvent{"update", p.Namespace + "/" + p.Name} },
		DeleteFunc: func(d informerscorev1.DeletedPod) { typedEvents <- handlerEvent{"delete", d.GetObjectName().String()} },
	})
	require.NoError(t, err)

	ctx := startAndSync(t, factory)
	watches.waitFor(t, podsGVR)
	expect := func(want ...handlerEvent) {
		t.Helper()
		for _, ch := range []chan handlerEvent{events, typedEvents} {
			for _, w := range want {
				select {
				case got := <-ch:
					require.Equal(t, w, got)
				case <-time.After(waitTimeout):
					t.Fatalf("timed out waiting for %v", w)
				}
			}
		}
	}
	expect(handlerEvent{"add", "a/pre"})

	podsClient := client.CoreV1().Pods("a")
	_, err = podsClient.Create(ctx, newPod("a", "web-1", map[string]string{"app": "web"}), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = client.CoreV1().Pods("b").Create(ctx, newPod("b", "db-1", map[string]string{"app": "db"}), metav1.CreateOptions{})
	require.NoError(t, err)
	expect(handlerEvent{"add", "a/web-1"}, handlerEvent{"add", "b/db-1"})

	lister := pods.Lister()
	all, err := lister.List(labels.Everything())
	require.NoError(t, err)
	assert.Equal(t, []string{"a/pre", "a/web-1", "b/db-1"}, podKeys(all))
	web, err := lister.List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"a/pre", "a/web-1"}, podKeys(web))
	inB, err := lister.Pods("b").List(labels.Everything())
	require.NoError(t, err)
	assert.Equal(t, []string{"b/db-1"}, podKeys(inB))
	got, err := lister.Pods("a").Get("web-1")
	require.NoError(t, err)
	assert.Equal(t, "web", got.Labels["app"])

	updated := newPod("a", "web-1", map[string]string{"app": "web", "tier": "front"})
	_, err = podsClient.Update(ctx, updated, metav1.UpdateOptions{})
	require.NoError(t, err)
	expect(handlerEvent{"update", "a/web-1"})
	front, err := lister.Pods("a").List(labels.SelectorFromSet(labels.Set{"tier": "front"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"a/web-1"}, podKeys(front))

	require.NoError(t, podsClient.Delete(ctx, "web-1", metav1.DeleteOptions{}))
	expect(handlerEvent{"delete", "a/web-1"})
	_, err = lister.Pods("a").Get("web-1")
	require.True(t, apierrors.IsNotFound(err), "got %v", err)
	var status apierrors.APIStatus
	require.True(t, errors.As(err, &status))
	assert.Equal(t, "pod", status.Status().Details.Kind)
	assert.Equal(t, `pod "web-1" not found`, err.Error())
	_, err = lister.Pods("b").Get("pre")
	assert.True(t, apierrors.IsNotFound(err))
}

func TestFactoryFiltersByNamespaceAndListOptions(t *testing.T) {
	objs := []runtime.Object{
		newPod("a", "web-a", map[string]string{"app": "web"}),
		newPod("a", "db-a", map[string]string{"app": "db"}),
		newPod("b", "web-b", map[string]string{"app": "web"}),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"app": "web"}}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}},
	}
	webOnly := func(tweaks *atomic.Int32) func(*metav1.ListOptions) {
		return func(o *metav1.ListOptions) {
			tweaks.Add(1)
			o.LabelSelector = "app=web"
		}
	}
	cases := []struct {
		name       string
		newFactory func(client kubernetes.Interface, tweaks *atomic.Int32) informers.SharedInformerFactory
		wantPods   []string
		wantNodes  []string
		tweaked    bool
	}{
		{
			name: "no options",
			newFactory: func(c kubernetes.Interface, _ *atomic.Int32) informers.SharedInformerFactory {
				return informers.NewSharedInformerFactoryWithOptions(c, 0)
			},
			wantPods:  []string{"a/db-a", "a/web-a", "b/web-b"},
			wantNodes: []string{"/n1", "/n2"},
		},
		{
			name: "WithNamespace leaves cluster-scoped resources alone",
			newFactory: func(c kubernetes.Interface, _ *atomic.Int32) informers.SharedInformerFactory {
				return informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace("a"))
			},
			wantPods:  []string{"a/db-a", "a/web-a"},
			wantNodes: []string{"/n1", "/n2"},
		},
		{
			name: "WithTweakListOptions",
			newFactory: func(c kubernetes.Interface, tweaks *atomic.Int32) informers.SharedInformerFactory {
				return informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithTweakListOptions(webOnly(tweaks)))
			},
			wantPods:  []string{"a/web-a", "b/web-b"},
			wantNodes: []string{"/n1"},
			tweaked:   true,
		},
		{
			name: "both, and nil options are ignored",
			newFactory: func(c kubernetes.Interface, tweaks *atomic.Int32) informers.SharedInformerFactory {
				return informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace("b"), nil, informers.WithTweakListOptions(webOnly(tweaks)))
			},
			wantPods:  []string{"b/web-b"},
			wantNodes: []string{"/n1"},
			tweaked:   true,
		},
		{
			name: "deprecated NewFilteredSharedInformerFactory",
			newFactory: func(c kubernetes.Interface, tweaks *atomic.Int32) informers.SharedInformerFactory {
				return informers.NewFilteredSharedInformerFactory(c, 0, "a", webOnly(tweaks))
			},
			wantPods:  []string{"a/web-a"},
			wantNodes: []string{"/n1"},
			tweaked:   true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client := newFakeClientset(objs...)
			var tweaks atomic.Int32
			factory := tc.newFactory(client, &tweaks)
			pods, nodes := factory.Core().V1().Pods(), factory.Core().V1().Nodes()
			pods.Informer()
			nodes.Informer()
			watches := countWatches(client)
			startAndSync(t, factory)
			watches.waitFor(t, podsGVR, nodesGVR)

			gotPods, err := pods.Lister().List(labels.Everything())
			require.NoError(t, err)
			assert.Equal(t, tc.wantPods, podKeys(gotPods))
			gotNodes, err := nodes.Lister().List(labels.Everything())
			require.NoError(t, err)
			var nodeNames []string
			for _, n := range gotNodes {
				nodeNames = append(nodeNames, "/"+n.Name)
			}
			sort.Strings(nodeNames)
			assert.Equal(t, tc.wantNodes, nodeNames)
			if tc.tweaked {
				// One LIST and one WATCH per informer at least.
				assert.GreaterOrEqual(t, tweaks.Load(), int32(4))
			} else {
				assert.Zero(t, tweaks.Load())
			}
		})
	}
}

// recordingNewFunc returns a NewInformerFunc that records the resync
// period it is given and builds a plain pod informer.
func recordingNewFunc(calls *atomic.Int32, resync *atomic.Int64) func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer {
	return func(client kubernetes.Interface, period time.Duration) cache.SharedIndexInformer {
		calls.Add(1)
		resync.Store(int64(period))
		return informerscorev1.NewPodInformer(client, metav1.NamespaceAll, period, cache.Indexers{})
	}
}

func TestWithCustomResyncConfigSetsTheResyncPerType(t *testing.T) {
	factory := informers.NewSharedInformerFactoryWithOptions(newFakeClientset(), time.Minute,
		informers.WithCustomResyncConfig(map[metav1.Object]time.Duration{&corev1.Pod{}: 5 * time.Second}),
		informers.WithCustomResyncConfig(map[metav1.Object]time.Duration{&appsv1.Deployment{}: 7 * time.Second}),
	)
	cases := []struct {
		obj  runtime.Object
		want time.Duration
	}{
		{&corev1.Pod{}, 5 * time.Second},
		{&appsv1.Deployment{}, 7 * time.Second},
		{&corev1.Node{}, time.Minute},
	}
	for _, tc := range cases {
		var calls atomic.Int32
		var resync atomic.Int64
		factory.InformerFor(tc.obj, recordingNewFunc(&calls, &resync))
		assert.Equal(t, int32(1), calls.Load(), "%T", tc.obj)
		assert.Equal(t, tc.want, time.Duration(resync.Load()), "%T", tc.obj)
	}
	// Nothing was started, so Shutdown returns at once.
	factory.Shutdown()
}

func TestWithTransformTransformsCachedObjects(t *testing.T) {
	client := newFakeClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p", Annotations: map[string]string{"big": "data"}}})
	var seen atomic.Int32
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTransform(func(obj interface{}) (interface{}, error) {
		if pod, ok := obj.(*corev1.Pod); ok {
			seen.Add(1)
			pod = pod.DeepCopy()
			pod.Annotations = nil
			pod.Labels = map[string]string{"transformed": "yes"}
			return pod, nil
		}
		return obj, nil
	}))
	lister := factory.Core().V1().Pods().Lister()
	startAndSync(t, factory)
	pod, err := lister.Pods("a").Get("p")
	require.NoError(t, err)
	assert.Nil(t, pod.Annotations)
	assert.Equal(t, "yes", pod.Labels["transformed"])
	assert.Equal(t, int32(1), seen.Load())
}

func TestFactoryReturnsOneInformerPerType(t *testing.T) {
	factory := informers.NewSharedInformerFactory(newFakeClientset(), 0)
	pods := factory.Core().V1().Pods().Informer()
	assert.True(t, pods == factory.Core().V1().Pods().Informer(), "second Pods() returned another informer")
	assert.True(t, pods == factory.Core().V1().Pods().TypedInformer(), "TypedInformer is not the shared informer")
	var calls atomic.Int32
	var resync atomic.Int64
	assert.True(t, pods == factory.InformerFor(&corev1.Pod{}, recordingNewFunc(&calls, &resync)), "InformerFor(&Pod{}) returned another informer")
	assert.Zero(t, calls.Load(), "newFunc called although an informer existed")
	nodes := factory.Core().V1().Nodes().Informer()
	assert.False(t, pods == nodes)
	// Same Go type in another group/version is a different informer.
	assert.False(t, factory.Events().V1().Events().Informer() == factory.Core().V1().Events().Informer())
	// The typed conversions keep the identity.
	assert.True(t, informerscorev1.ToPodIndexInformer(pods) == pods)
	plain := informerscorev1.PodInformer(factory.Core().V1().Pods())
	assert.True(t, informerscorev1.ToTypedPodInformer(plain).TypedInformer() == pods)
	// A nil newFunc for an unknown type yields nil instead of a panic.
	assert.Nil(t, factory.InformerFor(&corev1.Secret{}, nil))
	factory.Shutdown()
}

func TestForResourceReturnsTheTypedInformer(t *testing.T) {
	client := newFakeClientset(
		newPod("a", "p", nil),
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "d"}},
	)
	factory := informers.NewSharedInformerFactory(client, 0)
	cases := []struct {
		gvr   schema.GroupVersionResource
		typed cache.SharedIndexInformer
	}{
		{podsGVR, factory.Core().V1().Pods().Informer()},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, factory.Apps().V1().Deployments().Informer()},
		{schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, factory.Batch().V1().CronJobs().Informer()},
		{schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}, factory.Networking().V1().Ingresses().Informer()},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, factory.Rbac().V1().ClusterRoles().Informer()},
	}
	for _, tc := range cases {
		generic, err := factory.ForResource(tc.gvr)
		require.NoError(t, err, tc.gvr)
		assert.True(t, generic.Informer() == tc.typed, "%v", tc.gvr)
	}
	for _, unknown := range []schema.GroupVersionResource{
		{Group: "example.com", Version: "v1", Resource: "widgets"},
		{Version: "v1", Resource: "pod"},
		{Group: "apps", Version: "v1beta9", Resource: "deployments"},
		{},
	} {
		generic, err := factory.ForResource(unknown)
		assert.Error(t, err, unknown)
		assert.Nil(t, generic)
	}

	startAndSync(t, factory)
	podsGeneric, err := factory.ForResource(podsGVR)
	require.NoError(t, err)
	obj, err := podsGeneric.Lister().ByNamespace("a").Get("p")
	require.NoError(t, err)
	assert.Equal(t, "p", obj.(*corev1.Pod).Name)
	_, err = podsGeneric.Lister().ByNamespace("a").Get("missing")
	assert.True(t, apierrors.IsNotFound(err))
	deployments, err := factory.ForResource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"})
	require.NoError(t, err)
	all, err := deployments.Lister().List(labels.Everything())
	require.NoError(t, err)
	require.Len(t, all, 1)
}

// countingInformer wraps an informer and counts and controls its runs.
type countingInformer struct {
	cache.SharedIndexInformer
	runs    atomic.Int32
	release chan struct{} // if not nil, a run returns only after it is closed
}

func (c *countingInformer) RunWithContext(ctx context.Context) {
	c.runs.Add(1)
	c.SharedIndexInformer.RunWithContext(ctx)
	if c.release != nil {
		<-c.release
	}
}

func (c *countingInformer) Run(stopCh <-chan struct{}) {
	c.runs.Add(1)
	c.SharedIndexInformer.Run(stopCh)
}

func countingNewFunc(informer *countingInformer, build func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer) func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer {
	return func(client kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		informer.SharedIndexInformer = build(client, resync)
		return informer
	}
}

func TestFactoryStartAgainStartsOnlyNewInformers(t *testing.T) {
	client := newFakeClientset(newPod("a", "p", nil), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	factory := informers.NewSharedInformerFactory(client, 0)
	pods, nodes := &countingInformer{}, &countingInformer{}
	factory.InformerFor(&corev1.Pod{}, countingNewFunc(pods, func(c kubernetes.Interface, r time.Duration) cache.SharedIndexInformer {
		return informerscorev1.NewPodInformer(c, "", r, cache.Indexers{})
	}))
	ctx := startAndSync(t, factory)
	assert.Equal(t, int32(1), pods.runs.Load())

	// Requested after the first Start: runs once Start is called again, and
	// the pod informer is not started a second time.
	factory.InformerFor(&corev1.Node{}, countingNewFunc(nodes, func(c kubernetes.Interface, r time.Duration) cache.SharedIndexInformer {
		return informerscorev1.NewNodeInformer(c, r, cache.Indexers{})
	}))
	assert.False(t, nodes.HasSynced())
	synced := factory.WaitForCacheSync(ctx.Done())
	assert.Equal(t, map[reflect.Type]bool{reflect.TypeOf(&corev1.Pod{}): true}, synced, "only started informers are waited for")
	factory.Start(ctx.Done())
	factory.StartWithContext(ctx)
	synced = factory.WaitForCacheSync(ctx.Done())
	assert.Equal(t, map[reflect.Type]bool{reflect.TypeOf(&corev1.Pod{}): true, reflect.TypeOf(&corev1.Node{}): true}, synced)
	assert.Equal(t, int32(1), pods.runs.Load())
	assert.Equal(t, int32(1), nodes.runs.Load())
	n, err := factory.Core().V1().Nodes().Lister().Get("n")
	require.NoError(t, err)
	assert.Equal(t, "n", n.Name)
}

func TestFactoryShutdownWaitsForItsInformers(t *testing.T) {
	factory := informers.NewSharedInformerFactory(newFakeClientset(), 0)
	pods := &countingInformer{release: make(chan struct{})}
	factory.InformerFor(&corev1.Pod{}, countingNewFunc(pods, func(c kubernetes.Interface, r time.Duration) cache.SharedIndexInformer {
		return informerscorev1.NewPodInformer(c, "", r, cache.Indexers{})
	}))
	ctx, cancel := context.WithCancel(context.Background())
	factory.StartWithContext(ctx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
	cancel()

	done := make(chan struct{})
	go func() {
		defer close(done)
		factory.Shutdown()
	}()
	select {
	case <-done:
		t.Fatal("Shutdown returned while an informer goroutine was still running")
	case <-time.After(50 * time.Millisecond):
	}
	close(pods.release)
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("Shutdown did not return after the informer goroutine ended")
	}
	// Shutdown again returns at once; Start after Shutdown starts nothing.
	factory.Shutdown()
	nodes := &countingInformer{}
	factory.InformerFor(&corev1.Node{}, countingNewFunc(nodes, func(c kubernetes.Interface, r time.Duration) cache.SharedIndexInformer {
		return informerscorev1.NewNodeInformer(c, r, cache.Indexers{})
	}))
	factory.StartWithContext(context.Background())
	factory.Shutdown()
	assert.Zero(t, nodes.runs.Load())
}

func TestFactoryWaitForCacheSyncGivesUpWithTheContextsCause(t *testing.T) {
	client := newFakeClientset()
	client.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("list refused")
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	factory.Core().V1().Pods().Informer()
	factory.Core().V1().Nodes().Informer()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer factory.Shutdown()
	defer cancel(nil)
	factory.StartWithContext(ctx)

	waitCtx, waitCancel := context.WithCancelCause(ctx)
	cause := errors.New("gave up")
	var wg sync.WaitGroup
	wg.Go(func() {
		assert.Eventually(t, factory.Core().V1().Nodes().Informer().HasSynced, waitTimeout, pollInterval)
		waitCancel(cause)
	})
	res := factory.WaitForCacheSyncWithContext(waitCtx)
	wg.Wait()
	assert.ErrorIs(t, res.Err, cause)
	assert.ErrorIs(t, res.AsError(), cause)
	assert.Equal(t, map[reflect.Type]bool{reflect.TypeOf(&corev1.Pod{}): false, reflect.TypeOf(&corev1.Node{}): true}, res.Synced)
}
