package cache

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache/internal/diag"
	"github.com/kinformer/kinformer/cache/internal/snapshot"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// holdNextList makes srv hold the next LIST request that selects picks
// until the returned gate is opened (or the request's context ends, which
// is then its answer); the requests before and after it pass.
func holdNextList(srv *fakeapi.Server, selects func(options metav1.ListOptions) bool) *fakeapi.Gate {
	gate := fakeapi.NewGate()
	var taken atomic.Bool
	srv.BeforeList(func(ctx context.Context, options metav1.ListOptions) error {
		if selects(options) && taken.CompareAndSwap(false, true) {
			return gate.Pass(ctx)
		}
		return nil
	})
	return gate
}

// waitHeld waits until a request is held at gate.
func waitHeld(t *testing.T, gate *fakeapi.Gate) {
	t.Helper()
	select {
	case <-gate.Arrived():
	case <-time.After(waitTimeout):
		t.Fatal("no LIST request was held back")
	}
}

// relistContinued selects the requests that continue a paged list.
func relistContinued(options metav1.ListOptions) bool { return options.Continue != "" }

// relistInformer starts a RealFIFO informer with opts over srv with a
// recording handler and waits until it has synced.
func relistInformer(t *testing.T, srv *fakeapi.Server, opts SharedIndexInformerOptions) (*sharedIndexInformer, *eventRecorder) {
	t.Helper()
	t.Cleanup(srv.StopWatches)
	informer := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, opts).(*sharedIndexInformer)
	rec := &eventRecorder{}
	reg, err := informer.AddEventHandler(rec)
	require.NoError(t, err)
	runInformer(t, informer)
	waitUntilSynced(t, informer.HasSyncedChecker(), reg.HasSyncedChecker())
	return informer, rec
}

// caughtUpNow reports whether WaitForResourceVersion(rv) returns at once.
func caughtUpNow(informer SharedInformer, rv string) bool {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return WaitForResourceVersion(ctx, informer, rv) == nil
}

// relistModes are the two ways an informer applies relists.
var relistModes = []struct {
	name       string
	pageByPage bool
}{
	{"atomic", false},
	{"page by page", true},
}

// TestRelistWhileItsLastPageIsHeldBack: while the second page of a relist
// is held back by the server, an atomic relist leaves the cache as it was
// and tells handlers nothing; a relist applied page by page has applied
// and notified its first page. Either way the cache's resourceVersion has
// not moved. Once the page arrives, the cache holds the listed state, and
// handlers were told in the mode's order: an atomic relist's deletions
// first (client-go's order), a page-by-page relist's last.
func TestRelistWhileItsLastPageIsHeldBack(t *testing.T) {
	for _, mode := range relistModes {
		t.Run(mode.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			createAtoE(srv)
			srv.PageSize(2, true)
			informer, rec := relistInformer(t, srv, SharedIndexInformerOptions{RelistPageByPage: mode.pageByPage})
			require.Equal(t, relistInitialAdds, rec.get())
			waitForNextWatch(t, srv)

			held := holdNextList(srv, relistContinued)
			relistSilentChanges(srv) // the relist's pages: a, c@7 | d, f@9
			srv.Expire()
			waitHeld(t, held)

			if mode.pageByPage {
				got := rec.waitN(t, 7)
				assert.Equal(t, []string{"update ns/a@1 -> ns/a@1", "update ns/c@3 -> ns/c@7"}, got[5:])
				assert.Equal(t, []string{"ns/a@1", "ns/b@2", "ns/c@7", "ns/d@4", "ns/e@5"}, describedStore(informer.GetStore()))
			} else {
				assert.Equal(t, []string{"ns/a@1", "ns/b@2", "ns/c@3", "ns/d@4", "ns/e@5"}, describedStore(informer.GetStore()))
				assert.Equal(t, relistInitialAdds, rec.get())
			}
			assert.Equal(t, "5", informer.GetStore().LastStoreSyncResourceVersion())

			held.Open()
			got := rec.waitN(t, 11)
			if mode.pageByPage {
				assert.Equal(t, []string{
					"update ns/a@1 -> ns/a@1",
					"update ns/c@3 -> ns/c@7",
					"update ns/d@4 -> ns/d@4",
					"add ns/f@9 initial=false",
					"delete tombstone(ns/b@2)",
					"delete tombstone(ns/e@5)",
				}, got[5:])
			} else {
				assert.ElementsMatch(t, []string{"delete tombstone(ns/b@2)", "delete tombstone(ns/e@5)"}, got[5:7])
				assert.Equal(t, []string{
					"update ns/a@1 -> ns/a@1",
					"update ns/c@3 -> ns/c@7",
					"update ns/d@4 -> ns/d@4",
					"add ns/f@9 initial=false",
				}, got[7:])
			}
			assert.Equal(t, []string{"ns/a@1", "ns/c@7", "ns/d@4", "ns/f@9"}, describedStore(informer.GetStore()))
			require.Eventually(t, func() bool { return informer.GetStore().LastStoreSyncResourceVersion() == "9" }, waitTimeout, time.Millisecond)
		})
	}
}

// TestWaitForResourceVersionDuringRelist: a write at rv 6 (d) followed by
// one at rv 7 (b) reach the informer by a relist whose first page holds b
// and whose second, held back, holds d. Until the relist is complete the
// cache does not claim rv 6 (d is still at rv 4 there), whatever the queue
// and however relists are applied; once it is, WaitForResourceVersion(6)
// returns and d is at rv 6.
func TestWaitForResourceVersionDuringRelist(t *testing.T) {
	for _, q := range queueKinds {
		for _, mode := range relistModes {
			t.Run(q.name+"/"+mode.name, func(t *testing.T) {
				srv := fakeapi.NewServer(false)
				createAtoE(srv)
				srv.PageSize(2, true)
				informer, _ := relistInformer(t, srv, SharedIndexInformerOptions{UseDeltaFIFO: q.useDeltaFIFO, RelistPageByPage: mode.pageByPage})
				waitForNextWatch(t, srv)

				held := holdNextList(srv, relistContinued)
				srv.UpdateMissed("d") // 6
				srv.UpdateMissed("b") // 7: pages a, b@7 | c, d@6 | e
				srv.Expire()
				waitHeld(t, held)

				if mode.pageByPage {
					require.Eventually(t, func() bool {
						b, _, _ := informer.GetStore().GetByKey("ns/b")
						return describeObj(b) == "ns/b@7"
					}, waitTimeout, time.Millisecond, "the first page is applied")
				}
				assert.False(t, caughtUpNow(informer, "6"), "the cache claims rv 6 while d is still at rv 4")
				assert.Equal(t, "5", informer.GetStore().LastStoreSyncResourceVersion())
				d, _, err := informer.GetStore().GetByKey("ns/d")
				require.NoError(t, err)
				assert.Equal(t, "ns/d@4", describeObj(d))

				held.Open()
				ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
				defer cancel()
				require.NoError(t, WaitForResourceVersion(ctx, informer, "6"))
				d, _, err = informer.GetStore().GetByKey("ns/d")
				require.NoError(t, err)
				assert.Equal(t, "ns/d@6", describeObj(d))
				assert.Equal(t, "7", informer.GetStore().LastStoreSyncResourceVersion())
			})
		}
	}
}

// TestSnapshotDuringRelistKeepsDeletions: an informer stopped while an
// atomic relist waits for its second page saves its cache at the
// resourceVersion it had before the relist, so that the informer restarted
// from the snapshot still learns of the deletion (e, rv 6) that the relist
// would have found. A relist applied page by page has put b@7 in the cache
// already: that mix is not saved, and the restarted informer lists.
func TestSnapshotDuringRelistKeepsDeletions(t *testing.T) {
	for _, mode := range relistModes {
		t.Run(mode.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			t.Cleanup(srv.StopWatches)
			createAtoE(srv)
			path := filepath.Join(t.TempDir(), "pods.snap")
			srv.PageSize(2, true)
			opts := SharedIndexInformerOptions{SnapshotFile: path, RelistPageByPage: mode.pageByPage}
			informer := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, opts)
			stop := runInformerUntil(t, informer)
			waitForNextWatch(t, srv)

			held := holdNextList(srv, relistContinued)
			srv.DeleteMissed("e") // 6
			srv.UpdateMissed("b") // 7: pages a, b@7 | c, d
			srv.Expire()
			waitHeld(t, held)
			want := []string{"ns/a@1", "ns/b@2", "ns/c@3", "ns/d@4", "ns/e@5"}
			if mode.pageByPage {
				want = []string{"ns/a@1", "ns/b@7", "ns/c@3", "ns/d@4", "ns/e@5"}
				require.Eventually(t, func() bool {
					return assert.ObjectsAreEqual(want, describedStore(informer.GetStore()))
				}, waitTimeout, time.Millisecond, "the first page is applied")
			}
			stop()

			objects, rv, err := readPodSnapshot(t, path, snapshot.Tie{})
			if mode.pageByPage {
				// b@7 under rv 5 is no state the cache ever had as a whole:
				// no snapshot is written (and this informer had none).
				require.ErrorIs(t, err, os.ErrNotExist)
			} else {
				require.NoError(t, err)
				assert.Equal(t, "5", rv, "the snapshot's resourceVersion")
				assert.Equal(t, want, describedStore(objectListOf(objects)))
			}

			restarted := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, opts)
			runInformerUntil(t, restarted)
			require.Eventually(t, func() bool {
				return assert.ObjectsAreEqual([]string{"ns/a@1", "ns/b@7", "ns/c@3", "ns/d@4"}, describedStore(restarted.GetStore()))
			}, waitTimeout, time.Millisecond, "the restarted informer holds %v", describedStore(restarted.GetStore()))
		})
	}
}

// TestDeltaFIFOResourceVersionNeverAheadOfContent: with UseDeltaFIFO and
// a@5, b@6, a@7 queued, applying a (both of its deltas, popped together)
// must not make the cache claim rv 7 while b@6 is still queued: the cache's
// resourceVersion (what WaitForResourceVersion and a snapshot saved then
// rely on) stays at 5 until b is applied too. The queue and the consumer
// are wired as a shared informer wires them.
func TestDeltaFIFOResourceVersionNeverAheadOfContent(t *testing.T) {
	logger := testLogger(t)
	store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, withResourceVersionWatermark(nil))
	queue := newInformerQueue(logger, informerQueueConfig{objectType: &v1.Pod{}, store: store, useDeltaFIFO: true})
	rec := &eventRecorder{}
	applier := newInformerApplier(logger, queue, store, rec, nil)
	var waiters diag.ResourceVersionWaiters
	watermark := func() string { return storeResourceVersion(store) }
	pop := func() {
		t.Helper()
		_, err := queue.Pop(applier.Process)
		require.NoError(t, err)
		waiters.Notify(watermark)
	}
	caughtUp := func(rv string) bool {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return waiters.Wait(ctx, rv, watermark) == nil
	}

	require.NoError(t, queue.Replace([]interface{}{newPod("a", "1"), newPod("b", "2")}, "2"))
	pop()
	pop()
	require.Equal(t, "2", storeResourceVersion(store))

	require.NoError(t, queue.Update(newPod("a", "5")))
	require.NoError(t, queue.Update(newPod("b", "6")))
	require.NoError(t, queue.Update(newPod("a", "7")))
	pop() // a@5 and a@7
	assert.Equal(t, []string{"ns/a@7", "ns/b@2"}, describedStore(store))
	assert.Equal(t, "5", storeResourceVersion(store), "b@6 is still queued")
	assert.False(t, caughtUp("6"), "the cache claims rv 6 while b@6 is still queued")
	assert.True(t, caughtUp("5"))

	pop() // b@6
	assert.Equal(t, []string{"ns/a@7", "ns/b@6"}, describedStore(store))
	assert.Equal(t, "7", storeResourceVersion(store))
	assert.True(t, caughtUp("7"))

	// A list that leaves nothing to apply catches the cache up at once:
	// no pop would.
	empty := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{}, withResourceVersionWatermark(nil))
	emptyQueue := newInformerQueue(logger, informerQueueConfig{objectType: &v1.Pod{}, store: empty, useDeltaFIFO: true})
	require.NoError(t, emptyQueue.Replace(nil, "3"))
	assert.Equal(t, "3", storeResourceVersion(empty))
}

// TestRealFIFORelistKeepsUnchangedCachedObjects: a relist queued by an
// informer's RealFIFO keeps, for every listed object whose resourceVersion
// is the cached one's, the cached object itself, and runs the transform
// only on the objects that changed or are new.
func TestRealFIFORelistKeepsUnchangedCachedObjects(t *testing.T) {
	a1, b1 := newPod("a", "1"), newPod("b", "1")
	store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{}, withResourceVersionWatermark(nil))
	require.NoError(t, store.Replace([]interface{}{a1, b1}, "1"))
	var transformed []string
	f := newInformerQueue(klog.Background(), informerQueueConfig{
		objectType: &v1.Pod{},
		store:      store,
		transform: func(obj interface{}) (interface{}, error) {
			transformed = append(transformed, describeObj(obj))
			return obj, nil
		},
	}).(*RealFIFO)

	listedA, listedB, listedC := newPod("a", "1"), newPod("b", "2"), newPod("c", "1")
	require.NoError(t, f.Replace([]interface{}{listedA, listedB, listedC}, "3"))
	assert.Equal(t, []string{"ns/b@2", "ns/c@1"}, transformed, "the transform runs on changed and new objects only")
	_, err := f.Pop(func(obj interface{}, _ bool) error {
		info := obj.(Deltas)[0].Object.(ReplacedAllInfo)
		require.Len(t, info.Objects, 3)
		assert.Same(t, a1, info.Objects[0], "the unchanged a is the cached object")
		assert.Same(t, listedB, info.Objects[1])
		assert.Same(t, listedC, info.Objects[2])
		return nil
	})
	require.NoError(t, err)

	// Objects without a resourceVersion are never taken as unchanged.
	noRV := newPod("a", "")
	require.NoError(t, store.Update(noRV))
	listedNoRV := newPod("a", "")
	require.NoError(t, f.Replace([]interface{}{listedNoRV}, "4"))
	_, err = f.Pop(func(obj interface{}, _ bool) error {
		assert.Same(t, listedNoRV, obj.(Deltas)[0].Object.(ReplacedAllInfo).Objects[0])
		return nil
	})
	require.NoError(t, err)
}

// listedPods makes a server answer its LISTs as metav1.List pages of pod
// pointers it allocates, so that the test can see (with finalizers) which
// of the listed objects become garbage, and when. The pods of the lists
// answered while tracking is on are tracked.
type listedPods struct {
	mu        sync.Mutex
	tracking  bool
	collected map[string]bool
}

func trackListedPods(srv *fakeapi.Server) *listedPods {
	l := &listedPods{collected: map[string]bool{}}
	srv.AnswerListsAs(l.answer)
	return l
}

func (l *listedPods) answer(pods *v1.PodList) kruntime.Object {
	out := &metav1.List{ListMeta: pods.ListMeta}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range pods.Items {
		pod := pods.Items[i].DeepCopy()
		if l.tracking {
			name := describeObj(pod)
			runtime.SetFinalizer(pod, func(*v1.Pod) {
				l.mu.Lock()
				defer l.mu.Unlock()
				l.collected[name] = true
			})
		}
		out.Items = append(out.Items, kruntime.RawExtension{Object: pod})
	}
	return out
}

func (l *listedPods) track() {
	l.mu.Lock()
	l.tracking = true
	l.mu.Unlock()
}

func (l *listedPods) isCollected(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.collected[name]
}

// sameObjectRecorder records, per update, whether the old and new objects
// are the same object.
type sameObjectRecorder struct {
	mu   sync.Mutex
	same map[string]bool
}

func (r *sameObjectRecorder) OnAdd(interface{}, bool) {}
func (r *sameObjectRecorder) OnDelete(interface{})    {}
func (r *sameObjectRecorder) OnUpdate(oldObj, newObj interface{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.same[describeObj(newObj)] = oldObj == newObj
}

func (r *sameObjectRecorder) get() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.same)
}

// TestRelistDropsUnchangedDuplicatesAsTheyAreRead: while a relist waits for
// its second page, the decoded duplicates of the first page's unchanged
// objects are already garbage (the cache's objects are kept instead), and
// only the changed object is held twice. Once the relist is applied, the
// cache holds the objects it held before for every unchanged key, handlers
// get the same object as old and new for them, and the transform ran on
// the changed object only.
func TestRelistDropsUnchangedDuplicatesAsTheyAreRead(t *testing.T) {
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	createAtoE(srv)
	srv.PageSize(2, true)
	listed := trackListedPods(srv)
	informer := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, SharedIndexInformerOptions{}).(*sharedIndexInformer)
	var mu sync.Mutex
	var transformed []string
	require.NoError(t, informer.SetTransform(func(obj interface{}) (interface{}, error) {
		mu.Lock()
		defer mu.Unlock()
		transformed = append(transformed, describeObj(obj))
		return obj, nil
	}))
	rec := &eventRecorder{}
	same := &sameObjectRecorder{same: map[string]bool{}}
	_, err := informer.AddEventHandler(rec)
	require.NoError(t, err)
	_, err = informer.AddEventHandler(same)
	require.NoError(t, err)
	runInformer(t, informer)
	waitUntilSynced(t, informer.HasSyncedChecker())
	waitForNextWatch(t, srv)
	before := map[string]interface{}{}
	for _, obj := range informer.GetStore().List() {
		before[describeObj(obj)] = obj
	}
	mu.Lock()
	transformed = nil
	mu.Unlock()

	listed.track()
	held := holdNextList(srv, relistContinued)
	srv.UpdateMissed("b") // 6: pages a, b@6 | c, d | e
	srv.Expire()
	waitHeld(t, held)
	require.Eventually(t, func() bool {
		runtime.GC()
		return listed.isCollected("ns/a@1")
	}, waitTimeout, 10*time.Millisecond, "the listed duplicate of the unchanged a is garbage while the relist goes on")
	assert.False(t, listed.isCollected("ns/b@6"), "the changed b is held until the relist is applied")
	assert.Equal(t, []string{"ns/a@1", "ns/b@2", "ns/c@3", "ns/d@4", "ns/e@5"}, describedStore(informer.GetStore()))

	held.Open()
	rec.waitN(t, 10)
	assert.Equal(t, []string{
		"update ns/a@1 -> ns/a@1",
		"update ns/b@2 -> ns/b@6",
		"update ns/c@3 -> ns/c@3",
		"update ns/d@4 -> ns/d@4",
		"update ns/e@5 -> ns/e@5",
	}, rec.get()[5:])
	for _, name := range []string{"ns/a@1", "ns/c@3", "ns/d@4", "ns/e@5"} {
		obj, _, err := informer.GetStore().GetByKey(strings.Split(name, "@")[0])
		require.NoError(t, err)
		assert.Same(t, before[name], obj, "%s is the object cached before the relist", name)
	}
	require.Eventually(t, func() bool { return len(same.get()) == 5 }, waitTimeout, time.Millisecond)
	assert.Equal(t, map[string]bool{"ns/a@1": true, "ns/b@6": false, "ns/c@3": true, "ns/d@4": true, "ns/e@5": true}, same.get())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"ns/b@6"}, transformed, "the transform ran on the changed object only")
}

// TestCompleteListResetsTheWatermarkAfterABogusVersion: a watch event at a
// huge resourceVersion (a misbehaving aggregated server, or versions moved
// back by an etcd restore) does not pin the cache's watermark. The next
// complete list is the server's truth: once applied, atomically, page by
// page or through a DeltaFIFO, the watermark is the list's version, waits
// for versions not yet seen block again, and later events move it on.
func TestCompleteListResetsTheWatermarkAfterABogusVersion(t *testing.T) {
	const bogus = "18000000000000000000" // a valid uint64, far ahead
	modes := []struct {
		name string
		opts SharedIndexInformerOptions
	}{
		{"atomic", SharedIndexInformerOptions{}},
		{"page by page", SharedIndexInformerOptions{RelistPageByPage: true}},
		{"DeltaFIFO", SharedIndexInformerOptions{UseDeltaFIFO: true}},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a") // 1
			srv.Create("b") // 2
			srv.PageSize(1, true)
			informer, _ := relistInformer(t, srv, mode.opts)
			waitForNextWatch(t, srv)
			require.Equal(t, "2", informer.GetStore().LastStoreSyncResourceVersion())

			// The bogus event reaches the open watch only.
			srv.SendToWatches(watch.Event{Type: watch.Modified, Object: newPod("a", bogus)})
			require.Eventually(t, func() bool {
				return informer.GetStore().LastStoreSyncResourceVersion() == bogus
			}, waitTimeout, time.Millisecond, "the bogus event is applied")
			require.True(t, caughtUpNow(informer, "100"))

			srv.Expire()
			require.Eventually(t, func() bool {
				return assert.ObjectsAreEqual([]string{"ns/a@1", "ns/b@2"}, describedStore(informer.GetStore()))
			}, waitTimeout, time.Millisecond, "the relist is applied")
			require.Eventually(t, func() bool {
				return informer.GetStore().LastStoreSyncResourceVersion() == "2"
			}, waitTimeout, time.Millisecond, "the watermark is the list's version")
			assert.Equal(t, "2", informer.LastSyncResourceVersion())
			assert.False(t, caughtUpNow(informer, "3"), "a version not seen yet must be waited for")

			waitForNextWatch(t, srv)
			srv.Update("b") // 3
			require.Eventually(t, func() bool {
				return informer.GetStore().LastStoreSyncResourceVersion() == "3"
			}, waitTimeout, time.Millisecond, "a later event moves the watermark on")
			assert.True(t, caughtUpNow(informer, "3"))
		})
	}
}

// TestRelistKeepsACachedObjectOnlyWhenItIsTheSameObject: a relist keeps the
// cached object in place of a listed one with the same key and
// resourceVersion only when the UID matches too. Another object under the
// same key and version (an etcd restore, a cloned cluster) replaces the
// cached one and reaches update handlers as new.
func TestRelistKeepsACachedObjectOnlyWhenItIsTheSameObject(t *testing.T) {
	srv := fakeapi.NewServer(false)
	srv.Create("a") // 1
	srv.Create("b") // 2
	srv.Edit("a", func(p *v1.Pod) { p.UID = "uid-a" })
	srv.Edit("b", func(p *v1.Pod) { p.UID = "uid-b" })
	informer, rec := relistInformer(t, srv, SharedIndexInformerOptions{})
	// The change below is compacted away only for a watch already open.
	waitForNextWatch(t, srv)
	cachedB, _, err := informer.GetStore().GetByKey("ns/b")
	require.NoError(t, err)

	// a is replaced, behind the watch's back, by another object with the
	// same name and resourceVersion; b is untouched.
	srv.Edit("a", func(p *v1.Pod) { p.UID = "uid-a2" })
	srv.Expire()
	require.Eventually(t, func() bool {
		a, _, _ := informer.GetStore().GetByKey("ns/a")
		return a != nil && a.(*v1.Pod).UID == "uid-a2"
	}, waitTimeout, time.Millisecond, "the relist stores the other object")
	b, _, err := informer.GetStore().GetByKey("ns/b")
	require.NoError(t, err)
	assert.Same(t, cachedB, b, "the same object in the same state is kept")
	got := rec.waitN(t, 4)
	assert.ElementsMatch(t, []string{"update ns/a@1 -> ns/a@1", "update ns/b@2 -> ns/b@2"}, got[2:])
}
