package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/internal/testenv"
)

// eventRecorder records a handler's notifications per object key, in order, as
// "add <rv> initial=<bool>", "update <old rv> -> <new rv>", "delete <rv>" or
// "delete tombstone <rv>" (a DeletedFinalStateUnknown).
type eventRecorder struct {
	mu     sync.Mutex
	byKey  map[string][]string
	events int
}

func (r *eventRecorder) record(obj interface{}, text string) {
	key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byKey == nil {
		r.byKey = map[string][]string{}
	}
	r.byKey[key] = append(r.byKey[key], text)
	r.events++
}

func rvOf(obj interface{}) string {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if m, err := metaOf(obj); err == nil {
		return m.GetResourceVersion()
	}
	return fmt.Sprintf("<%T>", obj)
}

func (r *eventRecorder) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj interface{}, initial bool) {
			r.record(obj, fmt.Sprintf("add %s initial=%v", rvOf(obj), initial))
		},
		UpdateFunc: func(old, obj interface{}) {
			r.record(obj, fmt.Sprintf("update %s -> %s", rvOf(old), rvOf(obj)))
		},
		DeleteFunc: func(obj interface{}) {
			if _, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				r.record(obj, "delete tombstone "+rvOf(obj))
				return
			}
			r.record(obj, "delete "+rvOf(obj))
		},
	}
}

func (r *eventRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events
}

func (r *eventRecorder) get() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]string, len(r.byKey))
	for k, v := range r.byKey {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// podRVs returns the resourceVersion of every pod of ns, by key.
func podRVs(t *testing.T, cs kubernetes.Interface, ns string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	out := map[string]string{}
	for _, p := range list.Items {
		out[p.Namespace+"/"+p.Name] = p.ResourceVersion
	}
	return out
}

// TestWarmRestartAfterCompaction: a pod informer of a factory with a
// snapshot directory stops (writing its snapshot); while it is down pods are
// updated, deleted and created, and etcd is compacted past the snapshot's
// resourceVersion. With the watch cache off, the restarted informer's watch
// from the snapshot's version gets 410 Gone; it relists once and reconciles
// against the loaded objects. Every pod's handler sequence is then exact:
// the loaded pods get one add flagged initial; the relist gives an update
// (old -> new resourceVersion) to each updated pod, an update with the same
// version on both sides to each unchanged pod (client-go's relist does the
// same: every listed object that is cached is an update), a tombstone delete
// to each deleted pod and an add (not initial) to each created pod; nothing
// else. The store then equals a fresh LIST.
func TestWarmRestartAfterCompaction(t *testing.T) {
	if !testenv.Available(t) {
		return
	}
	t.Parallel()
	env := testenv.Start(t, testenv.Options{APIServerFlags: []string{"--watch-cache=false"}})
	cs := env.Clientset()
	ns := testenv.Namespace(t, cs)
	const per = 5
	for _, prefix := range []string{"keep", "upd", "del"} {
		itCreatePods(t, cs, ns, prefix, per, map[string]string{"v": "1"})
	}
	dir := t.TempDir()

	type run struct {
		factory informers.SharedInformerFactory
		events  *eventRecorder
		errs    func() []error
		counter *itRequestCounter
		cancel  context.CancelFunc
	}
	start := func() *run {
		r := &run{events: &eventRecorder{}, counter: &itRequestCounter{}}
		ccs := kubernetes.NewForConfigOrDie(r.counter.wrap(env.Config()))
		r.factory = informers.NewSharedInformerFactoryWithOptions(ccs, 0, informers.WithNamespace(ns), informers.WithSnapshotDir(dir))
		informer := r.factory.Core().V1().Pods().Informer()
		_, err := informer.AddEventHandler(r.events.handler())
		require.NoError(t, err)
		var mu sync.Mutex
		var errs []error
		require.NoError(t, informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
		}))
		r.errs = func() []error {
			mu.Lock()
			defer mu.Unlock()
			return append([]error(nil), errs...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		r.cancel = cancel
		t.Cleanup(func() { cancel(); r.factory.Shutdown() })
		r.factory.StartWithContext(ctx)
		require.NoError(t, r.factory.WaitForCacheSyncWithContext(ctx).AsError())
		return r
	}

	// First run: lists, then stops and writes the snapshot.
	first := start()
	before := podRVs(t, cs, ns)
	require.Len(t, before, 3*per)
	itStoreMatchesServer(t, first.factory.Core().V1().Pods().Informer().GetStore(), itListPods(cs, ns), time.Minute)
	first.cancel()
	first.factory.Shutdown()
	_, err := os.Stat(filepath.Join(dir, informers.SnapshotFileName(reflect.TypeOf(&corev1.Pod{}))))
	require.NoError(t, err, "the first run wrote its snapshot")

	// While it is down: update, delete, create, then compact etcd.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for i := 0; i < per; i++ {
		_, err := cs.CoreV1().Pods(ns).Patch(ctx, fmt.Sprintf("upd-%d", i), types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"v":"2"}}}`), metav1.PatchOptions{})
		require.NoError(t, err)
		require.NoError(t, cs.CoreV1().Pods(ns).Delete(ctx, fmt.Sprintf("del-%d", i), metav1.DeleteOptions{GracePeriodSeconds: new(int64)}))
	}
	itCreatePods(t, cs, ns, "new", per, map[string]string{"v": "1"})
	after := podRVs(t, cs, ns)
	require.Len(t, after, 3*per, "the deleted pods are gone (no kubelet, grace period 0)")
	_, err = env.CompactEtcd(ctx)
	require.NoError(t, err)

	// Second run: loads the snapshot, its watch gets 410, it relists.
	second := start()
	store := second.factory.Core().V1().Pods().Informer().GetStore()
	itStoreMatchesServer(t, store, itListPods(cs, ns), time.Minute)

	want := map[string][]string{}
	for i := 0; i < per; i++ {
		keep, upd, del, created := fmt.Sprintf("%s/keep-%d", ns, i), fmt.Sprintf("%s/upd-%d", ns, i), fmt.Sprintf("%s/del-%d", ns, i), fmt.Sprintf("%s/new-%d", ns, i)
		want[keep] = []string{"add " + before[keep] + " initial=true", "update " + before[keep] + " -> " + after[keep]}
		want[upd] = []string{"add " + before[upd] + " initial=true", "update " + before[upd] + " -> " + after[upd]}
		want[del] = []string{"add " + before[del] + " initial=true", "delete tombstone " + before[del]}
		want[created] = []string{"add " + after[created] + " initial=false"}
		require.Equal(t, before[keep], after[keep])
		require.NotEqual(t, before[upd], after[upd])
	}
	wantEvents := 0
	for _, seq := range want {
		wantEvents += len(seq)
	}
	require.Eventually(t, func() bool { return second.events.count() >= wantEvents }, time.Minute, 10*time.Millisecond,
		"handler got %d of %d events: %v", second.events.count(), wantEvents, second.events.get())
	// Anything after the expected events would come from the open watch;
	// nothing changes any more, so a bookmark is the most it may deliver.
	assert.Equal(t, want, second.events.get())

	saw410 := false
	for _, err := range second.errs() {
		var serr *cache.SnapshotError
		assert.False(t, errors.As(err, &serr), "the snapshot was not rejected: %v", err)
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			saw410 = true
		}
	}
	assert.True(t, saw410, "the watch from the snapshot's version got 410; errors: %v", second.errs())
	lists, streams := second.counter.list.Load(), second.counter.watchList.Load()
	t.Logf("warm restart after compaction: LIST requests %d, streaming lists %d", lists, streams)
	assert.Equal(t, int64(1), lists+streams, "one relist after the 410 (a LIST or a streaming list)")

	keys := store.ListKeys()
	sort.Strings(keys)
	var wantKeys []string
	for key := range after {
		wantKeys = append(wantKeys, key)
	}
	sort.Strings(wantKeys)
	assert.Equal(t, wantKeys, keys)
}
