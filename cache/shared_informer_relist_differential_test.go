package cache

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	clientcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// relistSubject is one informer under a differential relist test.
type relistSubject struct {
	addHandler func(h *eventRecorder, resync time.Duration) (hasSynced func() bool, err error)
	run        func(ctx context.Context)
	hasSynced  func() bool
	list       func() []interface{}
	storeRV    func() string
	lastSyncRV func() string
}

// relistOurs builds a kinformer informer over lw.
func relistOurs(opts SharedIndexInformerOptions) func(lw ListerWatcher) relistSubject {
	return func(lw ListerWatcher) relistSubject {
		informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, opts)
		return relistSubject{
			addHandler: func(h *eventRecorder, resync time.Duration) (func() bool, error) {
				reg, err := informer.AddEventHandlerWithResyncPeriod(h, resync)
				if err != nil {
					return nil, err
				}
				return reg.HasSynced, nil
			},
			run:        informer.RunWithContext,
			hasSynced:  informer.HasSynced,
			list:       informer.GetStore().List,
			storeRV:    informer.GetStore().LastStoreSyncResourceVersion,
			lastSyncRV: informer.LastSyncResourceVersion,
		}
	}
}

// relistClientGo builds a client-go v0.37.2 informer over lw, with resync
// period resync.
func relistClientGo(resync time.Duration) func(lw clientcache.ListerWatcher) relistSubject {
	return func(lw clientcache.ListerWatcher) relistSubject {
		informer := clientcache.NewSharedIndexInformer(lw, &v1.Pod{}, resync, clientcache.Indexers{})
		return relistSubject{
			addHandler: func(h *eventRecorder, resync time.Duration) (func() bool, error) {
				reg, err := informer.AddEventHandlerWithResyncPeriod(h, resync)
				if err != nil {
					return nil, err
				}
				return reg.HasSynced, nil
			},
			run:        informer.RunWithContext,
			hasSynced:  informer.HasSynced,
			list:       informer.GetStore().List,
			storeRV:    informer.GetStore().LastStoreSyncResourceVersion,
			lastSyncRV: informer.LastSyncResourceVersion,
		}
	}
}

// relistStart registers rec (with the given resync period) on subject,
// runs it until the test ends and waits until it and rec have synced.
func relistStart(t *testing.T, subject relistSubject, rec *eventRecorder, resync time.Duration) {
	t.Helper()
	synced, err := subject.addHandler(rec, resync)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(klogContext(t))
	var wg sync.WaitGroup
	wg.Go(func() { subject.run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	require.Eventually(t, func() bool { return subject.hasSynced() && synced() }, waitTimeout, time.Millisecond)
}

// heldRelistObservation is what a subject showed during and after a relist
// whose last page the server held back.
type heldRelistObservation struct {
	// While the page was held back: the cache, its resourceVersion and
	// the notifications of the relist so far.
	heldStore  []string
	heldRV     string
	heldEvents []string
	// After the relist: its notifications, the cache and its
	// resourceVersion.
	events  []string
	store   []string
	storeRV string
}

// runHeldRelist lists a..e in pages of two, then makes the watch miss the
// deletion of b and e, an update of c and the creation of f, and forces a
// relist (pages a, c@7 | d, f@9) whose second page the server holds back.
// heldEvents is the number of relist notifications the subject gives while
// the page is held back (it is observed once it has them).
func runHeldRelist(t *testing.T, build func(srv *fakeapi.Server) relistSubject, heldEvents int) heldRelistObservation {
	t.Helper()
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	createAtoE(srv)
	srv.PageSize(2, true)
	subject := build(srv)
	rec := &eventRecorder{}
	relistStart(t, subject, rec, 0)
	require.Equal(t, relistInitialAdds, rec.waitN(t, 5))
	waitForNextWatch(t, srv)

	held := holdNextList(srv, relistContinued)
	relistSilentChanges(srv)
	srv.Expire()
	waitHeld(t, held)
	var obs heldRelistObservation
	obs.heldEvents = rec.waitN(t, 5+heldEvents)[5:]
	obs.heldStore = describedStore(listFunc(subject.list))
	obs.heldRV = subject.storeRV()

	held.Open()
	require.Eventually(t, func() bool { return subject.storeRV() == "9" }, waitTimeout, time.Millisecond)
	obs.events = rec.waitN(t, 11)[5:]
	obs.store = describedStore(listFunc(subject.list))
	obs.storeRV = subject.storeRV()
	return obs
}

// relistDeletesAsSet sorts the leading deletions of a relist's
// notifications: client-go delivers them in map order.
func relistDeletesAsSet(events []string) []string {
	out := append([]string(nil), events...)
	n := 0
	for n < len(out) && strings.HasPrefix(out[n], "delete ") {
		n++
	}
	sort.Strings(out[:n])
	return out
}

// TestRelistWithHeldBackPageMatchesClientGo: a relist through a
// paged source whose last page is held back, on client-go v0.37.2 and on
// kinformer: with atomic relists (the default) the cache, its
// resourceVersion and the notifications are client-go's while the page is
// pending and after it (the relist's deletions compared as a set, as
// client-go sends them in map order); with RelistPageByPage they differ as
// documented (the first page is applied and notified while the second is
// pending, and the deletions come last, in key order), but the
// resourceVersion while pending, the notifications per object and the end
// state are client-go's.
func TestRelistWithHeldBackPageMatchesClientGo(t *testing.T) {
	want := runHeldRelist(t, func(srv *fakeapi.Server) relistSubject { return relistClientGo(0)(srv) }, 0)
	// Sanity: the scenario does what it claims on client-go.
	require.Equal(t, heldRelistObservation{
		heldStore:  []string{"ns/a@1", "ns/b@2", "ns/c@3", "ns/d@4", "ns/e@5"},
		heldRV:     "5",
		heldEvents: []string{},
		events: []string{
			"delete tombstone(ns/b@2)",
			"delete tombstone(ns/e@5)",
			"update ns/a@1 -> ns/a@1",
			"update ns/c@3 -> ns/c@7",
			"update ns/d@4 -> ns/d@4",
			"add ns/f@9 initial=false",
		},
		store:   []string{"ns/a@1", "ns/c@7", "ns/d@4", "ns/f@9"},
		storeRV: "9",
	}, heldRelistObservation{
		heldStore: want.heldStore, heldRV: want.heldRV, heldEvents: want.heldEvents,
		events: relistDeletesAsSet(want.events), store: want.store, storeRV: want.storeRV,
	})

	got := runHeldRelist(t, func(srv *fakeapi.Server) relistSubject { return relistOurs(SharedIndexInformerOptions{})(srv) }, 0)
	assert.Equal(t, want.heldStore, got.heldStore)
	assert.Equal(t, want.heldRV, got.heldRV)
	assert.Equal(t, want.heldEvents, got.heldEvents)
	assert.Equal(t, relistDeletesAsSet(want.events), relistDeletesAsSet(got.events))
	assert.Equal(t, want.store, got.store)
	assert.Equal(t, want.storeRV, got.storeRV)

	paged := runHeldRelist(t, func(srv *fakeapi.Server) relistSubject {
		return relistOurs(SharedIndexInformerOptions{RelistPageByPage: true})(srv)
	}, 2)
	assert.Equal(t, []string{"ns/a@1", "ns/b@2", "ns/c@7", "ns/d@4", "ns/e@5"}, paged.heldStore, "the first page is applied")
	assert.Equal(t, want.heldRV, paged.heldRV, "the resourceVersion waits for the end of the relist")
	assert.Equal(t, []string{"update ns/a@1 -> ns/a@1", "update ns/c@3 -> ns/c@7"}, paged.heldEvents)
	assert.Equal(t, []string{
		"update ns/a@1 -> ns/a@1",
		"update ns/c@3 -> ns/c@7",
		"update ns/d@4 -> ns/d@4",
		"add ns/f@9 initial=false",
		"delete tombstone(ns/b@2)",
		"delete tombstone(ns/e@5)",
	}, paged.events, "page by page: the deletions come last, in key order")
	assert.Equal(t, perObject(want.events), perObject(paged.events))
	assert.Equal(t, want.store, paged.store)
	assert.Equal(t, want.storeRV, paged.storeRV)
}

// TestResyncMatchesClientGo: a resync notifies a handler with a
// resync period of an update (the cached object as old and new) for every
// cached object, in map order in client-go (compared as a set), and a
// handler without one of nothing; later changes follow in order. The same
// on kinformer with either queue.
func TestResyncMatchesClientGo(t *testing.T) {
	run := func(t *testing.T, subject func(lw ListerWatcher) relistSubject) (fast, none []string) {
		srv := fakeapi.NewServer(false)
		t.Cleanup(srv.StopWatches)
		srv.Create("a")
		srv.Create("b")
		srv.Create("c")
		s := subject(srv)
		fastRec, noneRec := &eventRecorder{}, &eventRecorder{}
		synced, err := s.addHandler(noneRec, 0)
		require.NoError(t, err)
		relistStart(t, s, fastRec, time.Second)
		require.Eventually(t, synced, waitTimeout, time.Millisecond)
		fast = fastRec.waitN(t, 6)[:6]
		waitForNextWatch(t, srv)
		srv.Create("d")
		noneRec.waitN(t, 4)
		sort.Strings(fast[3:])
		return fast, noneRec.get()
	}
	wantFast, wantNone := run(t, func(lw ListerWatcher) relistSubject { return relistClientGo(time.Second)(lw) })
	require.Equal(t, []string{
		"add ns/a@1 initial=true",
		"add ns/b@2 initial=true",
		"add ns/c@3 initial=true",
		"update ns/a@1 -> ns/a@1",
		"update ns/b@2 -> ns/b@2",
		"update ns/c@3 -> ns/c@3",
	}, wantFast)
	require.Equal(t, []string{
		"add ns/a@1 initial=true",
		"add ns/b@2 initial=true",
		"add ns/c@3 initial=true",
		"add ns/d@4 initial=false",
	}, wantNone)
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			fast, none := run(t, relistOurs(SharedIndexInformerOptions{ResyncPeriod: time.Second, UseDeltaFIFO: q.useDeltaFIFO}))
			assert.Equal(t, wantFast, fast)
			assert.Equal(t, wantNone, none)
		})
	}
}

// TestBookmarkMatchesClientGo: a watch bookmark moves the
// cache's resourceVersion and LastSyncResourceVersion without a
// notification, as in client-go; the next event moves both on.
func TestBookmarkMatchesClientGo(t *testing.T) {
	type observation struct {
		events                        []string
		storeRV, lastSyncRV           string
		afterStoreRV, afterLastSyncRV string
	}
	run := func(t *testing.T, subject func(lw ListerWatcher) relistSubject) observation {
		srv := fakeapi.NewServer(false)
		t.Cleanup(srv.StopWatches)
		srv.Create("a")
		srv.Create("b")
		s := subject(srv)
		rec := &eventRecorder{}
		relistStart(t, s, rec, 0)
		waitForNextWatch(t, srv)
		srv.AdvanceVersion(8) // 10
		srv.SendBookmark()
		require.Eventually(t, func() bool { return s.storeRV() == "10" && s.lastSyncRV() == "10" }, waitTimeout, time.Millisecond)
		obs := observation{events: rec.get(), storeRV: s.storeRV(), lastSyncRV: s.lastSyncRV()}
		srv.Create("c") // 11
		obs.events = rec.waitN(t, 3)
		require.Eventually(t, func() bool { return s.storeRV() == "11" && s.lastSyncRV() == "11" }, waitTimeout, time.Millisecond)
		obs.afterStoreRV, obs.afterLastSyncRV = s.storeRV(), s.lastSyncRV()
		return obs
	}
	want := run(t, func(lw ListerWatcher) relistSubject { return relistClientGo(0)(lw) })
	require.Equal(t, observation{
		events:       []string{"add ns/a@1 initial=true", "add ns/b@2 initial=true", "add ns/c@11 initial=false"},
		storeRV:      "10",
		lastSyncRV:   "10",
		afterStoreRV: "11", afterLastSyncRV: "11",
	}, want)
	assert.Equal(t, want, run(t, relistOurs(SharedIndexInformerOptions{})))
}
