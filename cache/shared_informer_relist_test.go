package cache

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// heldPageLW serves an infServer's pods in pages (see pagedLW) and can
// hold back a LIST request: once hold is armed, the first request it
// selects signals held and waits for release (or for its context to end,
// which is then its answer).
type heldPageLW struct {
	*pagedLW

	mu      sync.Mutex
	hold    func(options metav1.ListOptions) bool
	held    chan struct{}
	release chan struct{}
}

func newHeldPageLW(srv *infServer, pageSize int) *heldPageLW {
	return &heldPageLW{pagedLW: &pagedLW{srv: srv, pageSize: pageSize, alwaysPage: true}}
}

// holdNext arms the hold for the next request hold selects.
func (l *heldPageLW) holdNext(hold func(options metav1.ListOptions) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hold = hold
	l.held = make(chan struct{})
	l.release = make(chan struct{})
}

// waitHeld waits until a request is held.
func (l *heldPageLW) waitHeld(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	held := l.held
	l.mu.Unlock()
	select {
	case <-held:
	case <-time.After(infTimeout):
		t.Fatal("no LIST request was held back")
	}
}

// releaseHeld lets the held request go on.
func (l *heldPageLW) releaseHeld() {
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.release)
}

func (l *heldPageLW) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	l.mu.Lock()
	hold := l.hold != nil && l.hold(options)
	var release chan struct{}
	if hold {
		l.hold = nil
		close(l.held)
		release = l.release
	}
	l.mu.Unlock()
	if hold {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return l.pagedLW.List(options)
}

func (l *heldPageLW) WatchWithContext(_ context.Context, options metav1.ListOptions) (watch.Interface, error) {
	return l.pagedLW.Watch(options)
}

// relistContinued selects the requests that continue a paged list.
func relistContinued(options metav1.ListOptions) bool { return options.Continue != "" }

// relistInformer starts a RealFIFO informer with opts over lw with a
// recording handler and waits until it has synced.
func relistInformer(t *testing.T, srv *infServer, lw ListerWatcher, opts SharedIndexInformerOptions) (*sharedIndexInformer, *infRecorder) {
	t.Helper()
	t.Cleanup(srv.stopWatches)
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, opts).(*sharedIndexInformer)
	rec := &infRecorder{}
	reg, err := informer.AddEventHandler(rec)
	require.NoError(t, err)
	infRunInformer(t, informer)
	infWaitSynced(t, informer.HasSyncedChecker(), reg.HasSyncedChecker())
	return informer, rec
}

// caughtUpNow reports whether WaitForResourceVersion(rv) returns at once.
func caughtUpNow(informer SharedInformer, rv string) bool {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return WaitForResourceVersion(ctx, informer, rv) == nil
}

// TestRelistIsInvisibleUntilItsLastPage: while the second page of a relist
// is held back by the server, listers see the cache as it was before the
// relist, its resourceVersion has not moved, and handlers have heard
// nothing; once the page arrives, the cache switches to the listed state
// and handlers are told in client-go's order: the deletions first, then
// the updates and adds in list order.
func TestRelistIsInvisibleUntilItsLastPage(t *testing.T) {
	srv := newInfServer()
	createAtoE(srv)
	lw := newHeldPageLW(srv, 2)
	informer, rec := relistInformer(t, srv, lw, SharedIndexInformerOptions{})
	require.Equal(t, relistInitialAdds, rec.get())
	rvWaitWatch(t, srv)

	lw.holdNext(relistContinued)
	relistSilentChanges(srv) // the relist's pages: a, c@7 | d, f@9
	srv.expire()
	lw.waitHeld(t)

	old := []string{"ns/a@1", "ns/b@2", "ns/c@3", "ns/d@4", "ns/e@5"}
	assert.Equal(t, old, infStoreContents(informer.GetStore()))
	assert.Equal(t, "5", informer.GetStore().LastStoreSyncResourceVersion())
	assert.Equal(t, relistInitialAdds, rec.get())

	lw.releaseHeld()
	got := rec.waitN(t, 11)
	assert.ElementsMatch(t, []string{"delete tombstone(ns/b@2)", "delete tombstone(ns/e@5)"}, got[5:7])
	assert.Equal(t, []string{
		"update ns/a@1 -> ns/a@1",
		"update ns/c@3 -> ns/c@7",
		"update ns/d@4 -> ns/d@4",
		"add ns/f@9 initial=false",
	}, got[7:])
	assert.Equal(t, []string{"ns/a@1", "ns/c@7", "ns/d@4", "ns/f@9"}, infStoreContents(informer.GetStore()))
	assert.Equal(t, "9", informer.GetStore().LastStoreSyncResourceVersion())
}

// TestWaitForResourceVersionDuringRelist: a write at rv 6 (d) followed by
// one at rv 7 (b) reach the informer by a relist whose first page holds b
// and whose second, held back, holds d. Until the relist is complete the
// cache does not claim rv 6 (d is still at rv 4 there); once it is,
// WaitForResourceVersion(6) returns and d is at rv 6.
func TestWaitForResourceVersionDuringRelist(t *testing.T) {
	srv := newInfServer()
	createAtoE(srv)
	lw := newHeldPageLW(srv, 2)
	informer, _ := relistInformer(t, srv, lw, SharedIndexInformerOptions{})
	rvWaitWatch(t, srv)

	lw.holdNext(relistContinued)
	srv.updateSilently("d") // 6
	srv.updateSilently("b") // 7: pages a, b@7 | c, d@6 | e
	srv.expire()
	lw.waitHeld(t)

	assert.False(t, caughtUpNow(informer, "6"), "the cache claims rv 6 while d is still at rv 4")
	assert.Equal(t, "5", informer.GetStore().LastStoreSyncResourceVersion())
	d, _, err := informer.GetStore().GetByKey("ns/d")
	require.NoError(t, err)
	assert.Equal(t, "ns/d@4", infDescribe(d))

	lw.releaseHeld()
	ctx, cancel := context.WithTimeout(context.Background(), infTimeout)
	defer cancel()
	require.NoError(t, WaitForResourceVersion(ctx, informer, "6"))
	d, _, err = informer.GetStore().GetByKey("ns/d")
	require.NoError(t, err)
	assert.Equal(t, "ns/d@6", infDescribe(d))
	assert.Equal(t, "7", informer.GetStore().LastStoreSyncResourceVersion())
}

// TestSnapshotDuringRelistKeepsDeletions: an informer stopped while a
// relist waits for its second page saves the state it had before the
// relist, at that state's resourceVersion, so that the informer restarted
// from the snapshot still learns of the deletion (e, rv 6) that the relist
// would have found.
func TestSnapshotDuringRelistKeepsDeletions(t *testing.T) {
	srv := newInfServer()
	t.Cleanup(srv.stopWatches)
	createAtoE(srv)
	path := filepath.Join(t.TempDir(), "pods.snap")
	lw := newHeldPageLW(srv, 2)
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{SnapshotFile: path})
	stop := olRunUntil(t, informer)
	rvWaitWatch(t, srv)

	lw.holdNext(relistContinued)
	srv.removeSilently("e") // 6
	srv.updateSilently("b") // 7: pages a, b@7 | c, d
	srv.expire()
	lw.waitHeld(t)
	stop()

	objects, rv, err := readSnapshot(path, snapshotIdentity(&v1.Pod{}, ""), "", olPodCodec(t))
	require.NoError(t, err)
	assert.Equal(t, "5", rv, "the snapshot's resourceVersion")
	assert.Equal(t, []string{"ns/a@1", "ns/b@2", "ns/c@3", "ns/d@4", "ns/e@5"}, infStoreContents(olListOf(objects)))

	restarted := NewSharedIndexInformerWithOptions(lw.pagedLW, &v1.Pod{}, SharedIndexInformerOptions{SnapshotFile: path})
	olRunUntil(t, restarted)
	require.Eventually(t, func() bool {
		return assert.ObjectsAreEqual([]string{"ns/a@1", "ns/b@7", "ns/c@3", "ns/d@4"}, infStoreContents(restarted.GetStore()))
	}, infTimeout, time.Millisecond, "the restarted informer holds %v", infStoreContents(restarted.GetStore()))
}

// TestDeltaFIFOResourceVersionNeverAheadOfContent: with UseDeltaFIFO and
// a@5, b@6, a@7 queued, applying a (both of its deltas, popped together)
// must not make the cache claim rv 7 while b@6 is still queued: the cache's
// resourceVersion (what WaitForResourceVersion and a snapshot saved then
// rely on) stays at 5 until b is applied too. The queue and the consumer
// are wired as a shared informer wires them.
func TestDeltaFIFOResourceVersionNeverAheadOfContent(t *testing.T) {
	logger := infTestLogger(t)
	store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, withResourceVersionWatermark())
	queue := newInformerQueue(logger, informerQueueConfig{objectType: &v1.Pod{}, store: store, useDeltaFIFO: true})
	rec := &infRecorder{}
	applier := newInformerApplier(logger, queue, store, rec, nil)
	var waiters rvWaiters
	pop := func() {
		t.Helper()
		_, err := queue.Pop(applier.process)
		require.NoError(t, err)
		waiters.notify(store)
	}
	caughtUp := func(rv string) bool {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return waiters.wait(ctx, rv, store) == nil
	}

	require.NoError(t, queue.Replace([]interface{}{infPod("a", "1"), infPod("b", "2")}, "2"))
	pop()
	pop()
	require.Equal(t, "2", storeResourceVersion(store))

	require.NoError(t, queue.Update(infPod("a", "5")))
	require.NoError(t, queue.Update(infPod("b", "6")))
	require.NoError(t, queue.Update(infPod("a", "7")))
	pop() // a@5 and a@7
	assert.Equal(t, []string{"ns/a@7", "ns/b@2"}, infStoreContents(store))
	assert.Equal(t, "5", storeResourceVersion(store), "b@6 is still queued")
	assert.False(t, caughtUp("6"), "the cache claims rv 6 while b@6 is still queued")
	assert.True(t, caughtUp("5"))

	pop() // b@6
	assert.Equal(t, []string{"ns/a@7", "ns/b@6"}, infStoreContents(store))
	assert.Equal(t, "7", storeResourceVersion(store))
	assert.True(t, caughtUp("7"))
}
