package cache

import (
	"context"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	clientcache "k8s.io/client-go/tools/cache"
)

// fakeClientsetInformer is a shared informer under the fake-clientset differential
// test, ours or client-go's, seen through the calls the scenario makes.
type fakeClientsetInformer struct {
	add       func(h ResourceEventHandler) (reg interface{ HasSynced() bool }, err error)
	shutDown  func(reg interface{}) error
	remove    func(reg interface{}) error
	run       func(ctx context.Context)
	hasSynced func() bool
	isStopped func() bool
	list      func() []interface{}
	byIndex   func(ns string) ([]interface{}, error)
}

// fakePodListWatch returns a ListWatch over cs's pods and a channel receiving a
// value whenever a watch is opened.
func fakePodListWatch(cs *fake.Clientset) (list func(context.Context, metav1.ListOptions) (runtime.Object, error), watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error), opened <-chan struct{}) {
	ch := make(chan struct{}, 100)
	cs.PrependWatchReactor("pods", func(clienttesting.Action) (bool, watch.Interface, error) {
		ch <- struct{}{}
		return false, nil, nil
	})
	list = func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
		return cs.CoreV1().Pods("").List(ctx, options)
	}
	watchFn = func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
		return cs.CoreV1().Pods("").Watch(ctx, options)
	}
	return list, watchFn, ch
}

func ourFakeClientsetInformer(cs *fake.Clientset, useDeltaFIFO bool) (fakeClientsetInformer, <-chan struct{}) {
	list, watchFn, opened := fakePodListWatch(cs)
	lw := ToListWatcherWithWatchListSemantics(&ListWatch{ListWithContextFunc: list, WatchFuncWithContext: watchFn}, cs)
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{
		Indexers:     Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
		UseDeltaFIFO: useDeltaFIFO,
	})
	return fakeClientsetInformer{
		add: func(h ResourceEventHandler) (interface{ HasSynced() bool }, error) {
			return informer.AddEventHandler(h)
		},
		shutDown: func(reg interface{}) error {
			return ShutDownEventHandler(informer, reg.(ResourceEventHandlerRegistration))
		},
		remove: func(reg interface{}) error {
			r, _ := reg.(ResourceEventHandlerRegistration)
			return informer.RemoveEventHandler(r)
		},
		run:       informer.RunWithContext,
		hasSynced: informer.HasSynced,
		isStopped: informer.IsStopped,
		list:      informer.GetStore().List,
		byIndex:   func(ns string) ([]interface{}, error) { return informer.GetIndexer().ByIndex(NamespaceIndex, ns) },
	}, opened
}

func clientGoFakeClientsetInformer(cs *fake.Clientset) (fakeClientsetInformer, <-chan struct{}) {
	list, watchFn, opened := fakePodListWatch(cs)
	lw := clientcache.ToListWatcherWithWatchListSemantics(&clientcache.ListWatch{ListWithContextFunc: list, WatchFuncWithContext: watchFn}, cs)
	informer := clientcache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc})
	return fakeClientsetInformer{
		add: func(h ResourceEventHandler) (interface{ HasSynced() bool }, error) {
			return informer.AddEventHandler(h)
		},
		shutDown: func(reg interface{}) error {
			return clientcache.ShutDownEventHandler(informer, reg.(clientcache.ResourceEventHandlerRegistration))
		},
		remove: func(reg interface{}) error {
			r, _ := reg.(clientcache.ResourceEventHandlerRegistration)
			return informer.RemoveEventHandler(r)
		},
		run:       informer.RunWithContext,
		hasSynced: informer.HasSynced,
		isStopped: informer.IsStopped,
		list:      informer.GetStore().List,
		byIndex: func(ns string) ([]interface{}, error) {
			return informer.GetIndexer().ByIndex(clientcache.NamespaceIndex, ns)
		},
	}, opened
}

// fakeClientsetResult is everything the scenario observed.
type fakeClientsetResult struct {
	early, removed, late []string
	store, byNamespace   []string
	// errs records, per checked call, whether it failed.
	errs map[string]bool
}

// runFakeClientsetScenario drives one informer over a fake clientset: pods
// created, updated and deleted, one handler removed midway, one added late,
// then the informer stopped.
func runFakeClientsetScenario(t *testing.T, build func(cs *fake.Clientset) (fakeClientsetInformer, <-chan struct{})) fakeClientsetResult {
	ctx, cancel := context.WithCancel(klogContext(t))
	defer cancel()
	cs := fake.NewClientset(newPod("a", "1"), newPod("b", "2"))
	subject, opened := build(cs)
	res := fakeClientsetResult{errs: map[string]bool{}}

	early, removed := &eventRecorder{}, &eventRecorder{}
	earlyReg, err := subject.add(early)
	require.NoError(t, err)
	removedReg, err := subject.add(removed)
	require.NoError(t, err)

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); subject.run(runCtx) }()
	defer func() { stop(); <-done }()
	require.Eventually(t, func() bool { return subject.hasSynced() && earlyReg.HasSynced() && removedReg.HasSynced() }, waitTimeout, eventuallyTick)
	// The fake clientset does not replay events from a resource version:
	// change nothing before the watch is open.
	select {
	case <-opened:
	case <-ctx.Done():
	}

	pods := cs.CoreV1().Pods("ns")
	_, err = pods.Create(ctx, newPod("c", "3"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = pods.Update(ctx, newPod("a", "4"), metav1.UpdateOptions{})
	require.NoError(t, err)
	require.NoError(t, pods.Delete(ctx, "b", metav1.DeleteOptions{}))
	early.waitN(t, 5)
	removed.waitN(t, 5)

	res.errs["shut down removed handler"] = subject.shutDown(removedReg) != nil
	res.errs["remove it again"] = subject.remove(removedReg) != nil
	res.errs["remove nil registration"] = subject.remove(nil) != nil

	_, err = pods.Create(ctx, newPod("d", "5"), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = pods.Update(ctx, newPod("c", "6"), metav1.UpdateOptions{})
	require.NoError(t, err)
	early.waitN(t, 7)

	late := &eventRecorder{}
	lateReg, err := subject.add(late)
	require.NoError(t, err)
	require.Eventually(t, lateReg.HasSynced, waitTimeout, eventuallyTick)
	require.NoError(t, pods.Delete(ctx, "a", metav1.DeleteOptions{}))
	_, err = pods.Update(ctx, newPod("d", "7"), metav1.UpdateOptions{})
	require.NoError(t, err)
	early.waitN(t, 9)
	late.waitN(t, 5)

	res.early, res.removed, res.late = early.get(), removed.get(), late.get()
	// The replay of the cache to a late handler has no defined order.
	sort.Strings(res.late[:3])
	res.store = describedStore(listFunc(subject.list))
	inNS, err := subject.byIndex("ns")
	require.NoError(t, err)
	res.byNamespace = describedStore(listFunc(func() []interface{} { return inNS }))

	stop()
	<-done
	res.errs["stopped"] = subject.isStopped()
	_, err = subject.add(&eventRecorder{})
	res.errs["add after stop"] = err != nil
	return res
}

// TestSharedInformerOnFakeClientsetMatchesClientGo runs the same fake-clientset
// scenario on client-go's SharedIndexInformer and on ours (with both
// queues) and compares what the handlers saw, the cache and the errors.
func TestSharedInformerOnFakeClientsetMatchesClientGo(t *testing.T) {
	want := runFakeClientsetScenario(t, clientGoFakeClientsetInformer)
	// Sanity: the scenario does what it claims on client-go.
	require.Equal(t, []string{
		"add ns/a@1 initial=true",
		"add ns/b@2 initial=true",
		"add ns/c@3 initial=false",
		"update ns/a@1 -> ns/a@4",
		"delete ns/b@2",
		"add ns/d@5 initial=false",
		"update ns/c@3 -> ns/c@6",
		"delete ns/a@4",
		"update ns/d@5 -> ns/d@7",
	}, want.early)
	require.Equal(t, want.early[:5], want.removed)
	require.Equal(t, []string{
		"add ns/a@4 initial=true",
		"add ns/c@6 initial=true",
		"add ns/d@5 initial=true",
		"delete ns/a@4",
		"update ns/d@5 -> ns/d@7",
	}, want.late)
	require.Equal(t, []string{"ns/c@6", "ns/d@7"}, want.store)

	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			got := runFakeClientsetScenario(t, func(cs *fake.Clientset) (fakeClientsetInformer, <-chan struct{}) {
				return ourFakeClientsetInformer(cs, q.useDeltaFIFO)
			})
			if q.useDeltaFIFO {
				// The DeltaFIFO pops per key: only the order per object
				// is fixed.
				assert.Equal(t, perObject(want.early), perObject(got.early))
				assert.Equal(t, perObject(want.removed), perObject(got.removed))
				assert.Equal(t, perObject(want.late), perObject(got.late))
				got.early, got.removed, got.late = want.early, want.removed, want.late
			}
			assert.Equal(t, want, got)
		})
	}
}
