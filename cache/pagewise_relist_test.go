package cache

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
)

// hpPagedLW serves an infServer's pods in pages of pageSize (whatever limit
// the client asks for, as a server may), from a snapshot taken at the first
// page, with continue tokens "<snapshot>:<offset>". before, when set, is
// called before every LIST request with its number (from 1) and options; an
// error it returns is the request's answer.
type hpPagedLW struct {
	srv      *infServer
	pageSize int
	// alwaysPage pages unpaged requests too (a ListWatch that sets a limit
	// itself).
	alwaysPage bool

	mu        sync.Mutex
	requests  int
	snapshots []*v1.PodList
	before    func(n int, options metav1.ListOptions) error
}

func (l *hpPagedLW) IsWatchListSemanticsUnSupported() bool { return true }

func (l *hpPagedLW) List(options metav1.ListOptions) (runtime.Object, error) {
	l.mu.Lock()
	l.requests++
	n, before := l.requests, l.before
	l.mu.Unlock()
	if before != nil {
		if err := before(n, options); err != nil {
			return nil, err
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var snap, offset int
	if options.Continue == "" {
		obj, err := l.srv.list(options)
		if err != nil {
			return nil, err
		}
		l.snapshots = append(l.snapshots, obj.(*v1.PodList))
		snap = len(l.snapshots) - 1
	} else {
		var err error
		if _, err = hpParseToken(options.Continue, &snap, &offset); err != nil || snap >= len(l.snapshots) {
			return nil, apierrors.NewBadRequest("bad continue token " + options.Continue)
		}
	}
	full := l.snapshots[snap]
	page := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: full.ResourceVersion}}
	end := len(full.Items)
	if options.Limit != 0 || options.Continue != "" || l.alwaysPage {
		end = min(offset+l.pageSize, len(full.Items))
		if end < len(full.Items) {
			page.Continue = strconv.Itoa(snap) + ":" + strconv.Itoa(end)
		}
	}
	page.Items = append(page.Items, full.Items[offset:end]...)
	return page, nil
}

// hpParseToken parses "<snap>:<offset>".
func hpParseToken(token string, snap, offset *int) (int, error) {
	for i := 0; i < len(token); i++ {
		if token[i] != ':' {
			continue
		}
		s, err1 := strconv.Atoi(token[:i])
		o, err2 := strconv.Atoi(token[i+1:])
		if err := errors.Join(err1, err2); err != nil {
			return 0, err
		}
		*snap, *offset = s, o
		return 2, nil
	}
	return 0, errors.New("no colon")
}

func (l *hpPagedLW) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return l.srv.watch(options)
}

// hpPagewiseInformer starts an informer (with the given queue) that applies
// relists page by page over lw, with a recording handler, and waits until
// it has synced.
func hpPagewiseInformer(t *testing.T, srv *infServer, lw ListerWatcher, useDeltaFIFO bool) (*sharedIndexInformer, *infRecorder) {
	t.Helper()
	t.Cleanup(srv.stopWatches)
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{
		Indexers:         Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
		UseDeltaFIFO:     useDeltaFIFO,
		RelistPageByPage: true,
	}).(*sharedIndexInformer)
	rec := &infRecorder{}
	reg, err := informer.AddEventHandler(rec)
	require.NoError(t, err)
	infRunInformer(t, informer)
	infWaitSynced(t, informer.HasSyncedChecker(), reg.HasSyncedChecker())
	return informer, rec
}

// hpSilentChanges changes the server without watch events, so that only a
// relist sees it: b (page 1) and e (page 3) vanish, c (page 2) changes, f is
// new. After the change the list is a, c | d, f in pages of two.
func hpSilentChanges(srv *infServer) {
	srv.removeSilently("b") // rv 6
	srv.updateSilently("c") // rv 7
	srv.removeSilently("e") // rv 8
	srv.createSilently("f") // rv 9
}

// hpInitialAdds are the events of the initial list of a..e.
var hpInitialAdds = []string{
	"add ns/a@1 initial=true",
	"add ns/b@2 initial=true",
	"add ns/c@3 initial=true",
	"add ns/d@4 initial=true",
	"add ns/e@5 initial=true",
}

func hpCreateAtoE(srv *infServer) {
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		srv.create(name)
	}
}

// TestRelistPageByPageEvents: a relist in pages of two, with updates, an add
// and deletions spread over the pages, gives exactly the events of a
// Replace, the deletions last, on both queues; the store ends with the new
// list and the list's resource version.
func TestRelistPageByPageEvents(t *testing.T) {
	for _, q := range infQueueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := newInfServer()
			hpCreateAtoE(srv)
			lw := &hpPagedLW{srv: srv, pageSize: 2}
			informer, rec := hpPagewiseInformer(t, srv, lw, q.useDeltaFIFO)
			assert.Equal(t, hpInitialAdds, rec.get())

			hpSilentChanges(srv)
			srv.expire()
			got := rec.waitN(t, 11)
			assert.Equal(t, []string{
				"update ns/a@1 -> ns/a@1",
				"update ns/c@3 -> ns/c@7",
				"update ns/d@4 -> ns/d@4",
				"add ns/f@9 initial=false",
				"delete tombstone(ns/b@2)",
				"delete tombstone(ns/e@5)",
			}, got[5:])
			assert.Equal(t, []string{"ns/a@1", "ns/c@7", "ns/d@4", "ns/f@9"}, infStoreContents(informer.GetStore()))
			byNS, err := informer.GetIndexer().ByIndex(NamespaceIndex, "ns")
			require.NoError(t, err)
			assert.Len(t, byNS, 4)
			require.Eventually(t, func() bool { return informer.LastSyncResourceVersion() == "9" }, infTimeout, time.Millisecond)
			if !q.useDeltaFIFO {
				// The end of the list records its resource version in the
				// store (a DeltaFIFO's Replace never did).
				assert.Equal(t, "9", informer.GetIndexer().LastStoreSyncResourceVersion())
			}
			// Initial list and relist: 3 + 2 pages.
			assert.Equal(t, 5, hpLists(lw))
		})
	}
}

// TestRelistPageByPageAsksNotOlderThan: after a watch ends with 410, the
// pagewise relist at the last resourceVersion asks for data not older than
// it, not for the exact (possibly old) snapshot, which a real server would
// serve from etcd and which the next watch would reject with 410 again (the
// soak test caught an informer stuck that way).
func TestRelistPageByPageAsksNotOlderThan(t *testing.T) {
	srv := newInfServer()
	hpCreateAtoE(srv)
	var mu sync.Mutex
	var options []metav1.ListOptions
	lw := &hpPagedLW{srv: srv, pageSize: 2, before: func(_ int, o metav1.ListOptions) error {
		mu.Lock()
		defer mu.Unlock()
		options = append(options, o)
		return nil
	}}
	informer, rec := hpPagewiseInformer(t, srv, lw, false)
	srv.expire()
	rec.waitN(t, 10)
	require.Eventually(t, func() bool { return hpLists(lw) == 6 }, infTimeout, time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []metav1.ListOptions{
		{ResourceVersion: "0", Limit: 500},
		{Continue: "0:2", Limit: 500},
		{Continue: "0:4", Limit: 500},
		{ResourceVersion: "5", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Limit: 500},
		{Continue: "1:2", Limit: 500},
		{Continue: "1:4", Limit: 500},
	}, options)
	assert.Equal(t, "5", informer.LastSyncResourceVersion())
}

// hpLists returns how many LIST requests lw answered or refused.
func hpLists(lw *hpPagedLW) int {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.requests
}

// TestRelistPageByPageFirstListIsAppliedWhole: the first list, with nothing cached yet,
// is handed to the store whole (one bulk Replace), not page by page: while
// its last page is held back nothing is in the store, no handler got an add
// and nothing has synced; once it arrives, every object is added (with
// isInInitialList) and the informer and the handler sync. The relist that
// follows is taken page by page (TestRelistPageByPageEvents).
func TestRelistPageByPageFirstListIsAppliedWhole(t *testing.T) {
	for _, q := range infQueueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := newInfServer()
			hpCreateAtoE(srv)
			release := make(chan struct{})
			held := make(chan struct{})
			lw := &hpPagedLW{srv: srv, pageSize: 2, before: func(n int, _ metav1.ListOptions) error {
				if n == 3 {
					close(held)
					<-release
				}
				return nil
			}}
			t.Cleanup(srv.stopWatches)
			informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{UseDeltaFIFO: q.useDeltaFIFO, RelistPageByPage: true})
			rec := &infRecorder{}
			reg, err := informer.AddEventHandler(rec)
			require.NoError(t, err)
			infRunInformer(t, informer)
			defer func() {
				select {
				case <-release:
				default:
					close(release)
				}
			}()

			select {
			case <-held:
			case <-time.After(infTimeout):
				t.Fatal("the third page was never asked for")
			}
			// Two pages were fetched; none of them reached the store.
			assert.Empty(t, informer.GetStore().ListKeys())
			assert.Empty(t, rec.get())
			assert.False(t, informer.HasSynced())
			assert.False(t, reg.HasSynced())

			close(release)
			infWaitSynced(t, informer.HasSyncedChecker(), reg.HasSyncedChecker())
			assert.Equal(t, hpInitialAdds, rec.get())
			assert.Equal(t, "5", informer.LastSyncResourceVersion())
			assert.Equal(t, 3, hpLists(lw))
		})
	}
}

// TestRelistPageByPageFailsMidway: when a page request fails, the pages
// already applied stay applied and nothing is deleted (b and e, on pages
// not reached, stay); the next list starts over and deletes what it does
// not list.
func TestRelistPageByPageFailsMidway(t *testing.T) {
	for _, q := range infQueueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := newInfServer()
			hpCreateAtoE(srv)
			retry := make(chan struct{})
			var failing sync.Once
			lw := &hpPagedLW{srv: srv, pageSize: 2}
			informer, rec := hpPagewiseInformer(t, srv, lw, q.useDeltaFIFO)
			lw.mu.Lock()
			lw.before = func(_ int, options metav1.ListOptions) error {
				if options.Continue != "" {
					failed := false
					failing.Do(func() { failed = true })
					if failed {
						return apierrors.NewInternalError(errors.New("etcd hiccup"))
					}
					return nil
				}
				lw.mu.Lock()
				retried := len(lw.snapshots) == 2 // initial list, failed relist
				lw.mu.Unlock()
				if retried {
					<-retry
				}
				return nil
			}
			lw.mu.Unlock()
			defer func() {
				select {
				case <-retry:
				default:
					close(retry)
				}
			}()

			// The relist's first page changes b and c; its second page
			// fails.
			srv.removeSilently("b") // rv 6: page 1 is now a, c
			srv.updateSilently("c") // rv 7
			srv.removeSilently("e") // rv 8
			srv.createSilently("f") // rv 9
			srv.expire()
			assert.Equal(t, []string{"update ns/a@1 -> ns/a@1", "update ns/c@3 -> ns/c@7"}, rec.waitN(t, 7)[5:])
			// The retry waits for us: nothing was deleted, f not added.
			require.Eventually(t, func() bool {
				lw.mu.Lock()
				defer lw.mu.Unlock()
				return lw.requests >= 6 // 3 initial pages, relist page 1 + failed page 2, the retry
			}, infTimeout, time.Millisecond)
			assert.Equal(t, []string{"ns/a@1", "ns/b@2", "ns/c@7", "ns/d@4", "ns/e@5"}, infStoreContents(informer.GetStore()))
			assert.Len(t, rec.get(), 7)

			close(retry)
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
			assert.Equal(t, []string{"ns/a@1", "ns/c@7", "ns/d@4", "ns/f@9"}, infStoreContents(informer.GetStore()))
			require.Eventually(t, func() bool { return informer.LastSyncResourceVersion() == "9" }, infTimeout, time.Millisecond)
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
		for _, q := range infQueueKinds {
			t.Run(tc.name+"/"+q.name, func(t *testing.T) {
				srv := newInfServer()
				hpCreateAtoE(srv)
				lw := &hpPagedLW{srv: srv, pageSize: 2, alwaysPage: tc.alwaysPage}
				informer, rec := hpPagewiseInformer(t, srv, lw, q.useDeltaFIFO)
				var restarts []metav1.ListOptions
				lw.mu.Lock()
				expired := false
				lw.before = func(_ int, options metav1.ListOptions) error {
					lw.mu.Lock()
					defer lw.mu.Unlock()
					if options.Continue != "" && !expired {
						expired = true
						return apierrors.NewResourceExpired("continue token expired")
					}
					if expired && options.Continue == "" {
						restarts = append(restarts, options)
					}
					return nil
				}
				lw.mu.Unlock()

				hpSilentChanges(srv)
				srv.expire()
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
				assert.Equal(t, []string{"ns/a@1", "ns/c@7", "ns/d@4", "ns/f@9"}, infStoreContents(informer.GetStore()))
				assert.Equal(t, tc.lists, hpLists(lw))
				lw.mu.Lock()
				// The restart asked for the relist's resource version, unpaged.
				assert.Equal(t, []metav1.ListOptions{{ResourceVersion: "5", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}}, restarts)
				lw.mu.Unlock()
			})
		}
	}
}

// hpPageRecorder is a pagewiseReplacer that records the calls it gets.
type hpPageRecorder struct {
	calls []string
}

func (r *hpPageRecorder) pagewiseReplace() bool { return true }

func (r *hpPageRecorder) replaceStart() error {
	r.calls = append(r.calls, "start")
	return nil
}

func (r *hpPageRecorder) replacePage(_ context.Context, objs []interface{}, forget []string) error {
	s := "page"
	for _, obj := range objs {
		s += " " + infDescribe(obj)
	}
	for _, key := range forget {
		s += " -" + key
	}
	r.calls = append(r.calls, s)
	return nil
}

func (r *hpPageRecorder) replaceEnd(rv string) error {
	r.calls = append(r.calls, "end "+rv)
	return nil
}

// TestStreamedListHandedOverInPages: the events of a streaming list are handed over in
// pages of arrival order; an update of a gathered key replaces it in place,
// a deletion removes it and is passed on as a key to forget with the next
// page (it may have been handed over before).
func TestStreamedListHandedOverInPages(t *testing.T) {
	rec := &hpPageRecorder{}
	p := newReflectorStreamPages(context.Background(), rec)
	p.pageSize = 2
	require.NoError(t, p.Add(infPod("a", "1")))
	require.NoError(t, p.Add(infPod("b", "2"))) // page full
	require.NoError(t, p.Add(infPod("c", "3")))
	require.NoError(t, p.Update(infPod("c", "4")))
	require.NoError(t, p.Delete(infPod("a", "5")))
	require.NoError(t, p.Add(infPod("d", "6"))) // page full
	require.NoError(t, p.Add(infPod("e", "7")))
	require.NoError(t, p.Delete(infPod("e", "8")))
	n, err := p.finish("9")
	require.NoError(t, err)
	assert.Equal(t, 4, n)
	assert.Equal(t, []string{
		"start",
		"page ns/a@1 ns/b@2",
		"page ns/c@4 ns/d@6 -ns/a",
		"page -ns/e",
		"end 9",
	}, rec.calls)

	// An empty stream still starts and ends a list.
	rec = &hpPageRecorder{}
	n, err = newReflectorStreamPages(context.Background(), rec).finish("3")
	require.NoError(t, err)
	assert.Equal(t, 0, n)
	assert.Equal(t, []string{"start", "end 3"}, rec.calls)
}

// TestRealFIFOReplacePageWaitsUntilPopped: replacePage returns once the consumer has
// popped the page, and returns the context's error or ErrFIFOClosed when
// those end the wait.
func TestRealFIFOReplacePageWaitsUntilPopped(t *testing.T) {
	newQueue := func() *RealFIFO {
		return enablePagewiseReplace(NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true})).(*RealFIFO)
	}

	f := newQueue()
	require.True(t, f.pagewiseReplace())
	require.NoError(t, f.replaceStart())
	done := make(chan error, 1)
	go func() {
		done <- f.replacePage(context.Background(), []interface{}{infPod("a", "1"), infPod("b", "2")}, nil)
	}()
	var popped []DeltaType
	pop := func() {
		_, err := f.Pop(func(obj interface{}, _ bool) error {
			popped = append(popped, obj.(Deltas)[0].Type)
			return nil
		})
		require.NoError(t, err)
	}
	pop() // the start marker
	require.Eventually(t, func() bool {
		f.lock.Lock()
		defer f.lock.Unlock()
		return f.items.len() == 2
	}, infTimeout, time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("replacePage returned %v before its page was popped", err)
	default:
	}
	pop()
	pop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(infTimeout):
		t.Fatal("replacePage did not return after its page was popped")
	}
	require.NoError(t, f.replaceEnd("7"))
	assert.False(t, f.HasSynced())
	pop()
	assert.True(t, f.HasSynced())
	assert.Equal(t, []DeltaType{deltaReplaceStart, Replaced, Replaced, deltaReplaceEnd}, popped)

	// A cancelled context ends the wait.
	f = newQueue()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- f.replacePage(ctx, []interface{}{infPod("a", "1")}, nil) }()
	require.Eventually(t, func() bool {
		f.lock.Lock()
		defer f.lock.Unlock()
		return f.pw.waiters == 1
	}, infTimeout, time.Millisecond)
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(infTimeout):
		t.Fatal("replacePage did not return after its context ended")
	}

	// Closing the queue ends the wait.
	f = newQueue()
	go func() { done <- f.replacePage(context.Background(), []interface{}{infPod("a", "1")}, nil) }()
	require.Eventually(t, func() bool {
		f.lock.Lock()
		defer f.lock.Unlock()
		return f.pw.waiters == 1
	}, infTimeout, time.Millisecond)
	f.Close()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, ErrFIFOClosed)
	case <-time.After(infTimeout):
		t.Fatal("replacePage did not return after Close")
	}

	// A queue the informer did not build takes whole lists.
	assert.False(t, NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true}).pagewiseReplace())
	assert.False(t, NewDeltaFIFOWithOptions(DeltaFIFOOptions{}).pagewiseReplace())
}

// TestPagewiseListOnEmptyCacheDeletesForgottenKeys: a list that starts on an empty cache does
// not track what it lists (it can only delete what a streaming list forgot),
// yet a key forgotten after its page was handed over is deleted at the end,
// and a key forgotten and then listed again stays.
func TestPagewiseListOnEmptyCacheDeletesForgottenKeys(t *testing.T) {
	store := NewIndexer(MetaNamespaceKeyFunc, Indexers{})
	rec := &infRecorder{}
	a := newDeltaApplier(klog.Background(), store, rec)
	apply := func(deltas ...Delta) {
		t.Helper()
		require.NoError(t, a.apply(deltas, true))
	}
	apply(Delta{Type: deltaReplaceStart})
	require.NotNil(t, a.relist)
	assert.Nil(t, a.relist.seen, "an empty cache's list tracks no keys")
	apply(Delta{Type: Replaced, Object: infPod("a", "1")}, Delta{Type: Replaced, Object: infPod("b", "2")}, Delta{Type: Replaced, Object: infPod("x", "3")})
	apply(Delta{Type: deltaReplaceForget, Object: []string{"ns/a", "ns/x", "ns/never-stored"}})
	apply(Delta{Type: Replaced, Object: infPod("x", "4")}, Delta{Type: Replaced, Object: infPod("c", "5")})
	apply(Delta{Type: deltaReplaceEnd, Object: replaceEndInfo{resourceVersion: "6"}})

	assert.Equal(t, []string{"ns/b@2", "ns/c@5", "ns/x@4"}, infStoreContents(store))
	assert.Equal(t, []string{
		"add ns/a@1 initial=true",
		"add ns/b@2 initial=true",
		"add ns/x@3 initial=true",
		"update ns/x@3 -> ns/x@4",
		"add ns/c@5 initial=true",
		"delete tombstone(ns/a@1)",
	}, rec.get())
	assert.Equal(t, uint64(1), a.appliedDeltas(nil), "one derived deletion")
	assert.Nil(t, a.relist)
}
