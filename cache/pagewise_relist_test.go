package cache

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// pagedServer returns an empty server that answers LISTs in pages of two,
// whatever limit the client asks for (as a server may), and, with
// unpagedToo, unpaged requests too (as a ListWatch that sets a limit
// itself).
func pagedServer(unpagedToo bool) *fakeapi.Server {
	srv := fakeapi.NewServer(false)
	srv.PageSize(2, unpagedToo)
	return srv
}

// listRequests returns how many LIST requests (pages) srv answered or
// refused.
func listRequests(srv *fakeapi.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r, "list") {
			n++
		}
	}
	return n
}

// pageByPageInformer starts an informer (with the given queue) that applies
// relists page by page over srv, with a recording handler, and waits until
// it has synced.
func pageByPageInformer(t *testing.T, srv *fakeapi.Server, useDeltaFIFO bool) (*sharedIndexInformer, *eventRecorder) {
	t.Helper()
	t.Cleanup(srv.StopWatches)
	informer := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, SharedIndexInformerOptions{
		Indexers:         Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
		UseDeltaFIFO:     useDeltaFIFO,
		RelistPageByPage: true,
	}).(*sharedIndexInformer)
	rec := &eventRecorder{}
	reg, err := informer.AddEventHandler(rec)
	require.NoError(t, err)
	runInformer(t, informer)
	waitUntilSynced(t, informer.HasSyncedChecker(), reg.HasSyncedChecker())
	return informer, rec
}

// relistSilentChanges changes the server without watch events, so that only a
// relist sees it: b (page 1) and e (page 3) vanish, c (page 2) changes, f is
// new. After the change the list is a, c | d, f in pages of two.
func relistSilentChanges(srv *fakeapi.Server) {
	srv.DeleteMissed("b") // rv 6
	srv.UpdateMissed("c") // rv 7
	srv.DeleteMissed("e") // rv 8
	srv.CreateMissed("f") // rv 9
}

// relistInitialAdds are the events of the initial list of a..e.
var relistInitialAdds = []string{
	"add ns/a@1 initial=true",
	"add ns/b@2 initial=true",
	"add ns/c@3 initial=true",
	"add ns/d@4 initial=true",
	"add ns/e@5 initial=true",
}

func createAtoE(srv *fakeapi.Server) {
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		srv.Create(name)
	}
}

// TestRelistPageByPageEvents: a relist in pages of two, with updates, an add
// and deletions spread over the pages, gives exactly the events of a
// Replace, the deletions last, on both queues; the store ends with the new
// list and the list's resource version.
func TestRelistPageByPageEvents(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := pagedServer(false)
			createAtoE(srv)
			informer, rec := pageByPageInformer(t, srv, q.useDeltaFIFO)
			assert.Equal(t, relistInitialAdds, rec.get())

			relistSilentChanges(srv)
			srv.Expire()
			got := rec.waitN(t, 11)
			assert.Equal(t, []string{
				"update ns/a@1 -> ns/a@1",
				"update ns/c@3 -> ns/c@7",
				"update ns/d@4 -> ns/d@4",
				"add ns/f@9 initial=false",
				"delete tombstone(ns/b@2)",
				"delete tombstone(ns/e@5)",
			}, got[5:])
			assert.Equal(t, []string{"ns/a@1", "ns/c@7", "ns/d@4", "ns/f@9"}, describedStore(informer.GetStore()))
			byNS, err := informer.GetIndexer().ByIndex(NamespaceIndex, "ns")
			require.NoError(t, err)
			assert.Len(t, byNS, 4)
			require.Eventually(t, func() bool { return informer.LastSyncResourceVersion() == "9" }, waitTimeout, time.Millisecond)
			// The end of the list records its resource version in the
			// cache, with either queue.
			require.Eventually(t, func() bool { return informer.GetIndexer().LastStoreSyncResourceVersion() == "9" }, waitTimeout, time.Millisecond)
			// Initial list and relist: 3 + 2 pages.
			assert.Equal(t, 5, listRequests(srv))
		})
	}
}

// TestRelistPageByPageAsksNotOlderThan: after a watch ends with 410, the
// pagewise relist at the last resourceVersion asks for data not older than
// it, not for the exact (possibly old) snapshot, which a real server would
// serve from etcd and which the next watch would reject with 410 again (the
// soak test caught an informer stuck that way).
func TestRelistPageByPageAsksNotOlderThan(t *testing.T) {
	srv := pagedServer(false)
	createAtoE(srv)
	informer, rec := pageByPageInformer(t, srv, false)
	// Expire only an open watch: one opened after it would resume from the
	// current version and never relist.
	waitForNextWatch(t, srv)
	srv.Expire()
	rec.waitN(t, 10)
	require.Eventually(t, func() bool { return listRequests(srv) == 6 }, waitTimeout, time.Millisecond)
	assert.Equal(t, []metav1.ListOptions{
		{ResourceVersion: "0", Limit: 500},
		{Continue: "0:2", Limit: 500},
		{Continue: "0:4", Limit: 500},
		{ResourceVersion: "5", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 500},
		{Continue: "1:2", Limit: 500},
		{Continue: "1:4", Limit: 500},
	}, srv.ListOptions())
	assert.Equal(t, "5", informer.LastSyncResourceVersion())
}

// TestRelistPageByPageFirstListIsAppliedWhole: the first list, with nothing cached yet,
// is handed to the store whole (one bulk Replace), not page by page: while
// its last page is held back nothing is in the store, no handler got an add
// and nothing has synced; once it arrives, every object is added (with
// isInInitialList) and the informer and the handler sync. The relist that
// follows is taken page by page (TestRelistPageByPageEvents).
func TestRelistPageByPageFirstListIsAppliedWhole(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := pagedServer(false)
			createAtoE(srv)
			// The third LIST request (the last page) is held.
			held := fakeapi.NewGate()
			var requests atomic.Int32
			srv.BeforeList(func(ctx context.Context, _ metav1.ListOptions) error {
				if requests.Add(1) == 3 {
					return held.Pass(ctx)
				}
				return nil
			})
			t.Cleanup(srv.StopWatches)
			informer := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, SharedIndexInformerOptions{UseDeltaFIFO: q.useDeltaFIFO, RelistPageByPage: true})
			rec := &eventRecorder{}
			reg, err := informer.AddEventHandler(rec)
			require.NoError(t, err)
			runInformer(t, informer)
			defer held.Open()

			select {
			case <-held.Arrived():
			case <-time.After(waitTimeout):
				t.Fatal("the third page was never asked for")
			}
			// Two pages were fetched; none of them reached the store.
			assert.Empty(t, informer.GetStore().ListKeys())
			assert.Empty(t, rec.get())
			assert.False(t, informer.HasSynced())
			assert.False(t, reg.HasSynced())

			held.Open()
			waitUntilSynced(t, informer.HasSyncedChecker(), reg.HasSyncedChecker())
			assert.Equal(t, relistInitialAdds, rec.get())
			assert.Equal(t, "5", informer.LastSyncResourceVersion())
			assert.Equal(t, 3, listRequests(srv))
		})
	}
}

// TestRelistPageByPageFailsMidway: when a page request fails, the pages
// already applied stay applied and nothing is deleted (b and e, on pages
// not reached, stay); the next list starts over and deletes what it does
// not list.
func TestRelistPageByPageFailsMidway(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := pagedServer(false)
			createAtoE(srv)
			informer, rec := pageByPageInformer(t, srv, q.useDeltaFIFO)
			// The relist's first page passes, its first continued page
			// fails; the retry's first page is held.
			retry := fakeapi.NewGate()
			var failing sync.Once
			var firstPages atomic.Int32
			srv.BeforeList(func(ctx context.Context, options metav1.ListOptions) error {
				if options.Continue != "" {
					failed := false
					failing.Do(func() { failed = true })
					if failed {
						return apierrors.NewInternalError(errors.New("etcd hiccup"))
					}
					return nil
				}
				if firstPages.Add(1) == 2 { // after the failed relist's
					return retry.Pass(ctx)
				}
				return nil
			})
			defer retry.Open()

			// The relist's first page changes b and c; its second page
			// fails.
			srv.DeleteMissed("b") // rv 6: page 1 is now a, c
			srv.UpdateMissed("c") // rv 7
			srv.DeleteMissed("e") // rv 8
			srv.CreateMissed("f") // rv 9
			srv.Expire()
			assert.Equal(t, []string{"update ns/a@1 -> ns/a@1", "update ns/c@3 -> ns/c@7"}, rec.waitN(t, 7)[5:])
			// The retry waits for us (after 3 initial pages, relist page 1
			// and the failed page 2): nothing was deleted, f not added.
			select {
			case <-retry.Arrived():
			case <-time.After(waitTimeout):
				t.Fatal("the relist was not retried")
			}
			assert.Equal(t, []string{"ns/a@1", "ns/b@2", "ns/c@7", "ns/d@4", "ns/e@5"}, describedStore(informer.GetStore()))
			assert.Len(t, rec.get(), 7)

			retry.Open()
			got := rec.waitN(t, 13)
			assert.Equal(t, []string{
				"update ns/a@1 -> ns/a@1",
				"update ns/c@3 -> ns/c@7",
				// The second attempt lists everything again.
				"update ns/a@1 -> ns/a@1",
				"update ns/c@7 -> ns/c@7",
				"update ns/d@4 -> ns/d@4",
				"add ns/f@9 initial=false",
				"delete tombstone(ns/b@2)",
				"delete tombstone(ns/e@5)",
			}, got[5:])
			assert.Equal(t, []string{"ns/a@1", "ns/c@7", "ns/d@4", "ns/f@9"}, describedStore(informer.GetStore()))
			require.Eventually(t, func() bool { return informer.LastSyncResourceVersion() == "9" }, waitTimeout, time.Millisecond)
		})
	}
}

// TestRelistPageByPageContinueExpired: a continue token that expired in the
// middle of a paged relist makes the list start over with an unpaged
// request at the relist's resource version; the objects of the first page
// are reported again, and the deletions are those of the complete list.
// When the restarted list still comes in pages (the ListWatch sets a limit
// itself), every page is applied: stopping after the first would delete the
// objects of the others (the soak test caught 207 pods deleted that way).
func TestRelistPageByPageContinueExpired(t *testing.T) {
	for _, tc := range []struct {
		name       string
		alwaysPage bool
		// lists: the initial list's 3 pages, the relist's first page and
		// expired continue, then the restarted list's pages.
		lists int
	}{
		{"unpaged restart", false, 6},
		{"restart still paged", true, 7},
	} {
		for _, q := range queueKinds {
			t.Run(tc.name+"/"+q.name, func(t *testing.T) {
				srv := pagedServer(tc.alwaysPage)
				createAtoE(srv)
				informer, rec := pageByPageInformer(t, srv, q.useDeltaFIFO)
				var mu sync.Mutex
				var restarts []metav1.ListOptions
				expired := false
				srv.BeforeList(func(_ context.Context, options metav1.ListOptions) error {
					mu.Lock()
					defer mu.Unlock()
					if options.Continue != "" && !expired {
						expired = true
						return apierrors.NewResourceExpired("continue token expired")
					}
					if expired && options.Continue == "" {
						restarts = append(restarts, options)
					}
					return nil
				})

				relistSilentChanges(srv)
				srv.Expire()
				got := rec.waitN(t, 13)
				assert.Equal(t, []string{
					"update ns/a@1 -> ns/a@1",
					"update ns/c@3 -> ns/c@7",
					"update ns/a@1 -> ns/a@1",
					"update ns/c@7 -> ns/c@7",
					"update ns/d@4 -> ns/d@4",
					"add ns/f@9 initial=false",
					"delete tombstone(ns/b@2)",
					"delete tombstone(ns/e@5)",
				}, got[5:])
				assert.Equal(t, []string{"ns/a@1", "ns/c@7", "ns/d@4", "ns/f@9"}, describedStore(informer.GetStore()))
				assert.Equal(t, tc.lists, listRequests(srv))
				mu.Lock()
				// The restart asked for the relist's resource version, unpaged.
				assert.Equal(t, []metav1.ListOptions{{ResourceVersion: "5", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}}, restarts)
				mu.Unlock()
			})
		}
	}
}

// listCalls records the calls a listSink gets, as "put ns/a@1", "remove
// ns/a@1", "pageEnd" and "end rv"; end returns the number of objects put.
type listCalls struct {
	calls []string
	puts  int
}

func (r *listCalls) put(obj interface{}) error {
	r.calls = append(r.calls, "put "+describeObj(obj))
	r.puts++
	return nil
}

func (r *listCalls) remove(obj interface{}) error {
	r.calls = append(r.calls, "remove "+describeObj(obj))
	return nil
}

func (r *listCalls) pageEnd(context.Context) error {
	r.calls = append(r.calls, "pageEnd")
	return nil
}

func (r *listCalls) end(_ context.Context, rv string) (int, error) {
	r.calls = append(r.calls, "end "+rv)
	return r.puts, nil
}

// TestStreamedListHandedOverInPages: a streaming list hands its events to
// the list's sink as they arrive and ends a page every pageSize objects
// (deletions do not count). How a sink applying relists page by page takes
// these calls is internal/queue's TestPagesStreamedList.
func TestStreamedListHandedOverInPages(t *testing.T) {
	rec := &listCalls{}
	s := &streamedList{ctx: context.Background(), sink: rec, pageSize: 2}
	require.NoError(t, s.Add(newPod("a", "1")))
	require.NoError(t, s.Add(newPod("b", "2"))) // page full
	require.NoError(t, s.Add(newPod("c", "3")))
	require.NoError(t, s.Update(newPod("c", "4"))) // page full
	require.NoError(t, s.Delete(newPod("a", "5")))
	require.NoError(t, s.Add(newPod("d", "6")))
	require.NoError(t, s.Delete(newPod("d", "7")))
	require.NoError(t, s.Add(newPod("e", "8"))) // page full
	n, err := s.finish("9")
	require.NoError(t, err)
	assert.Equal(t, 6, n)
	assert.Equal(t, []string{
		"put ns/a@1", "put ns/b@2", "pageEnd",
		"put ns/c@3", "put ns/c@4", "pageEnd",
		"remove ns/a@5", "put ns/d@6", "remove ns/d@7", "put ns/e@8", "pageEnd",
		"end 9",
	}, rec.calls)

	// An empty stream still ends a list.
	rec = &listCalls{}
	s = &streamedList{ctx: context.Background(), sink: rec, pageSize: 2}
	n, err = s.finish("3")
	require.NoError(t, err)
	assert.Equal(t, 0, n)
	assert.Equal(t, []string{"end 3"}, rec.calls)
}

// pageByPageQueue returns an informer's RealFIFO applying relists page by
// page, over store.
func pageByPageQueue(store Store) *RealFIFO {
	return newInformerQueue(klog.Background(), informerQueueConfig{objectType: &v1.Pod{}, store: store, pageByPage: true}).(*RealFIFO)
}

// TestRealFIFOPageWaitsUntilPopped: the end of a page returns once the
// consumer has popped it; the end of the list waits until everything is
// processed, then queues the deletion of every cached key the list did not
// have and a Bookmark at its resourceVersion. A cancelled context or a
// closed queue ends the waits with their errors.
func TestRealFIFOPageWaitsUntilPopped(t *testing.T) {
	store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{}, withResourceVersionWatermark(nil))
	require.NoError(t, store.Add(newPod("x", "1")))
	f := pageByPageQueue(store)
	require.True(t, f.relistsPageByPage())
	sink := f.beginList(listSource{relist: true})
	require.NoError(t, sink.put(newPod("a", "2")))
	require.NoError(t, sink.put(newPod("b", "3")))
	done := make(chan error, 1)
	go func() { done <- sink.pageEnd(context.Background()) }()
	var popped []string
	pop := func() {
		_, err := f.Pop(func(obj interface{}, _ bool) error {
			d := obj.(Deltas)[0]
			desc := describeObj(d.Object)
			if b, ok := d.Object.(BookmarkInfo); ok {
				desc = b.ResourceVersion
			}
			popped = append(popped, string(d.Type)+" "+desc)
			return nil
		})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		return f.q.Len() == 2 && f.q.Waiting() == 1
	}, waitTimeout, time.Millisecond)
	pop()
	select {
	case err := <-done:
		t.Fatalf("the page's end returned %v before the page was popped", err)
	default:
	}
	pop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(waitTimeout):
		t.Fatal("the page's end did not return after the page was popped")
	}
	n, err := sink.end(context.Background(), "7")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	pop()
	pop()
	assert.Equal(t, []string{
		"Replaced ns/a@2",
		"Replaced ns/b@3",
		"Deleted tombstone(ns/x@1)",
		"Bookmark 7",
	}, popped)

	// A cancelled context ends the wait.
	f = pageByPageQueue(store)
	sink = f.beginList(listSource{relist: true})
	require.NoError(t, sink.put(newPod("a", "1")))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- sink.pageEnd(ctx) }()
	require.Eventually(t, func() bool {
		return f.q.Waiting() == 1
	}, waitTimeout, time.Millisecond)
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(waitTimeout):
		t.Fatal("the page's end did not return after its context ended")
	}

	// Closing the queue ends the wait.
	f = pageByPageQueue(store)
	sink = f.beginList(listSource{relist: true})
	require.NoError(t, sink.put(newPod("a", "1")))
	go func() { done <- sink.pageEnd(context.Background()) }()
	require.Eventually(t, func() bool {
		return f.q.Waiting() == 1
	}, waitTimeout, time.Millisecond)
	f.Close()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, ErrFIFOClosed)
	case <-time.After(waitTimeout):
		t.Fatal("the page's end did not return after Close")
	}

	// The first list, and every list of a queue the informer did not
	// build, are taken whole.
	_, whole := pageByPageQueue(store).beginList(listSource{}).(*gatherSink)
	assert.True(t, whole, "first list")
	assert.False(t, NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true}).relistsPageByPage())
	assert.False(t, NewDeltaFIFOWithOptions(DeltaFIFOOptions{}).relistsPageByPage())
}

// TestPageByPageStreamedRelistDeletesRemovedKeys: in a streamed relist
// applied page by page, a key handed over and then removed by the stream is
// deleted at the end (with the object the cache got from the list), a key
// removed and listed again stays, and a cached key never listed is deleted.
func TestPageByPageStreamedRelistDeletesRemovedKeys(t *testing.T) {
	store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{}, withResourceVersionWatermark(nil))
	rec := &eventRecorder{}
	f := pageByPageQueue(store)
	a := newInformerApplier(klog.Background(), f, store, rec, nil)
	require.NoError(t, f.Replace([]interface{}{newPod("z", "1")}, "1"))
	drain := func() {
		t.Helper()
		for {
			n := f.q.Len()
			if n == 0 {
				return
			}
			require.NoError(t, f.PopBatch(a.ProcessBatch, a.Process))
		}
	}
	drain()

	sink := f.beginList(listSource{relist: true, streamed: true})
	require.NoError(t, sink.put(newPod("a", "2")))
	require.NoError(t, sink.put(newPod("b", "3")))
	require.NoError(t, sink.put(newPod("x", "4")))
	pageDone := make(chan error, 1)
	go func() { pageDone <- sink.pageEnd(context.Background()) }()
	require.Eventually(t, func() bool {
		return f.q.Len() == 3
	}, waitTimeout, time.Millisecond)
	drain()
	require.NoError(t, <-pageDone)
	assert.Equal(t, "1", store.LastStoreSyncResourceVersion(), "a page does not move the watermark")

	require.NoError(t, sink.remove(newPod("a", "5")))
	require.NoError(t, sink.remove(newPod("x", "6")))
	require.NoError(t, sink.put(newPod("x", "7")))
	require.NoError(t, sink.put(newPod("c", "8")))
	endDone := make(chan error, 1)
	go func() {
		_, err := sink.end(context.Background(), "9")
		endDone <- err
	}()
	require.Eventually(t, func() bool {
		return f.q.Len() == 2
	}, waitTimeout, time.Millisecond)
	drain()
	select {
	case err := <-endDone:
		require.NoError(t, err)
	case <-time.After(waitTimeout):
		t.Fatal("the list's end did not return")
	}
	drain()

	assert.Equal(t, []string{"ns/b@3", "ns/c@8", "ns/x@7"}, describedStore(store))
	assert.Equal(t, []string{
		"add ns/z@1 initial=true",
		"add ns/a@2 initial=false",
		"add ns/b@3 initial=false",
		"add ns/x@4 initial=false",
		"update ns/x@4 -> ns/x@7",
		"add ns/c@8 initial=false",
		"delete tombstone(ns/a@2)",
		"delete tombstone(ns/z@1)",
	}, rec.get())
	assert.Equal(t, "9", store.LastStoreSyncResourceVersion())
}
