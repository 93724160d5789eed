package cache

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache/internal/apply"
	"github.com/kinformer/kinformer/internal/fakeapi"
)

// noMeta has no object metadata, so no key can be computed for it.
type noMeta struct{ Name string }

func TestDeltaApplierProcessSemantics(t *testing.T) {
	a1, a2, b1 := newPod("a", "1"), newPod("a", "2"), newPod("b", "1")
	cases := []struct {
		name       string
		initial    []interface{}
		deltas     []Delta
		inInitial  bool
		wantEvents []string
		wantStore  []string
		wantReject int64
	}{
		{
			name:       "added new is add",
			deltas:     []Delta{{Added, a1}},
			inInitial:  true,
			wantEvents: []string{"add ns/a@1 initial=true"},
			wantStore:  []string{"ns/a@1"},
		},
		{
			name:       "added existing is update",
			initial:    []interface{}{a1},
			deltas:     []Delta{{Added, a2}},
			wantEvents: []string{"update ns/a@1 -> ns/a@2"},
			wantStore:  []string{"ns/a@2"},
		},
		{
			name:       "replaced and sync behave like updates or adds",
			initial:    []interface{}{a1},
			deltas:     []Delta{{Replaced, a2}, {Sync, b1}},
			wantEvents: []string{"update ns/a@1 -> ns/a@2", "add ns/b@1 initial=false"},
			wantStore:  []string{"ns/a@2", "ns/b@1"},
		},
		{
			name:       "updated missing is add",
			deltas:     []Delta{{Updated, a1}},
			wantEvents: []string{"add ns/a@1 initial=false"},
			wantStore:  []string{"ns/a@1"},
		},
		{
			name:       "deleted",
			initial:    []interface{}{a1, b1},
			deltas:     []Delta{{Deleted, a2}, {Deleted, DeletedFinalStateUnknown{Key: "ns/b", Obj: b1}}},
			wantEvents: []string{"delete ns/a@2", "delete tombstone(ns/b@1)"},
			wantStore:  nil,
		},
		{
			name:       "bad object is rejected, the rest applied",
			deltas:     []Delta{{Added, &noMeta{Name: "x"}}, {Added, a1}},
			wantEvents: []string{"add ns/a@1 initial=false"},
			wantStore:  []string{"ns/a@1"},
			wantReject: 1,
		},
		{
			name:       "sync all updates every cached object",
			initial:    []interface{}{a1, b1},
			deltas:     []Delta{{SyncAll, SyncAllInfo{}}},
			wantEvents: []string{"update ns/a@1 -> ns/a@1", "update ns/b@1 -> ns/b@1"},
			wantStore:  []string{"ns/a@1", "ns/b@1"},
		},
		{
			name:    "replaced all",
			initial: []interface{}{a1, b1, newPod("c", "1")},
			deltas: []Delta{{ReplacedAll, ReplacedAllInfo{ResourceVersion: "9", Objects: []interface{}{
				newPod("d", "3"), a2, &noMeta{},
			}}}},
			inInitial: true,
			wantEvents: []string{
				"delete tombstone(ns/b@1)", "delete tombstone(ns/c@1)",
				"add ns/d@3 initial=true", "update ns/a@1 -> ns/a@2",
			},
			wantStore:  []string{"ns/a@2", "ns/d@3"},
			wantReject: 1,
		},
	}
	for _, tc := range cases {
		for _, batch := range []bool{false, true} {
			name := tc.name + "/single"
			if batch {
				name = tc.name + "/batch"
			}
			t.Run(name, func(t *testing.T) {
				store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{})
				for _, obj := range tc.initial {
					require.NoError(t, store.Add(obj))
				}
				rec := &eventRecorder{}
				a := newDeltaApplier(testLogger(t), store, rec)
				var err error
				if batch {
					err = a.ProcessBatch(tc.deltas, tc.inInitial)
				} else {
					err = a.Process(Deltas(tc.deltas), tc.inInitial)
				}
				require.NoError(t, err)
				if tc.name == "sync all updates every cached object" {
					assert.ElementsMatch(t, tc.wantEvents, rec.get())
				} else {
					assert.Equal(t, tc.wantEvents, rec.get())
				}
				assert.Equal(t, tc.wantStore, describedStore(store))
				assert.Equal(t, tc.wantReject, a.Rejected())
			})
		}
	}
}

func TestDeltaApplierBookmarkAndBadInfo(t *testing.T) {
	store := NewStore(DeletionHandlingMetaNamespaceKeyFunc)
	a := newDeltaApplier(testLogger(t), store, &eventRecorder{})
	require.NoError(t, a.Process(Deltas{{Bookmark, BookmarkInfo{ResourceVersion: "42"}}}, false))
	assert.Equal(t, "42", store.LastStoreSyncResourceVersion())
	require.Error(t, a.Process(Deltas{{ReplacedAll, "nope"}}, false))
	require.Error(t, a.Process(Deltas{{SyncAll, 1}}, false))
	require.Error(t, a.Process(Deltas{{Bookmark, 1}}, false))
	require.Error(t, a.Process("not deltas", false))
}

func TestNewInformerWithOptions(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			t.Cleanup(srv.StopWatches)
			srv.Create("a")
			rec := &eventRecorder{}
			store, ctrl := NewInformerWithOptions(InformerOptions{
				ListerWatcher: srv,
				ObjectType:    &v1.Pod{},
				Handler:       rec,
				Indexers:      Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
				UseDeltaFIFO:  q.useDeltaFIFO,
			})
			_, isIndexer := store.(Indexer)
			assert.True(t, isIndexer)
			assert.Equal(t, "", ctrl.LastSyncResourceVersion())
			runController(t, ctrl)
			waitUntilSynced(t, ctrl.HasSyncedChecker())
			assert.True(t, ctrl.HasSynced())
			srv.Update("a")
			srv.Delete("a")
			got := rec.waitN(t, 3)
			assert.Equal(t, []string{"add ns/a@1 initial=true", "update ns/a@1 -> ns/a@2", "delete ns/a@3"}, got)
			assert.Empty(t, store.List())
			require.Eventually(t, func() bool { return ctrl.LastSyncResourceVersion() == "3" }, waitTimeout, time.Millisecond)
		})
	}
}

func TestDeprecatedInformerConstructors(t *testing.T) {
	transform := func(obj interface{}) (interface{}, error) {
		pod := obj.(*v1.Pod).DeepCopy()
		pod.Labels = map[string]string{"t": "1"}
		return pod, nil
	}
	cases := []struct {
		name        string
		build       func(lw ListerWatcher, h ResourceEventHandler) (Store, Controller)
		indexer     bool
		transformed bool
	}{
		{"NewInformer", func(lw ListerWatcher, h ResourceEventHandler) (Store, Controller) {
			return NewInformer(lw, &v1.Pod{}, 0, h)
		}, false, false},
		{"NewIndexerInformer", func(lw ListerWatcher, h ResourceEventHandler) (Store, Controller) {
			return NewIndexerInformer(lw, &v1.Pod{}, 0, h, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
		}, true, false},
		{"NewTransformingInformer", func(lw ListerWatcher, h ResourceEventHandler) (Store, Controller) {
			return NewTransformingInformer(lw, &v1.Pod{}, 0, h, transform)
		}, false, true},
		{"NewTransformingIndexerInformer", func(lw ListerWatcher, h ResourceEventHandler) (Store, Controller) {
			return NewTransformingIndexerInformer(lw, &v1.Pod{}, 0, h, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, transform)
		}, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			t.Cleanup(srv.StopWatches)
			srv.Create("a")
			rec := &eventRecorder{}
			store, ctrl := tc.build(srv, rec)
			if tc.indexer {
				idx := store.(Indexer)
				objs, err := idx.ByIndex(NamespaceIndex, "ns")
				require.NoError(t, err)
				assert.Empty(t, objs)
			}
			runController(t, ctrl)
			rec.waitN(t, 1)
			obj, exists, err := store.GetByKey("ns/a")
			require.NoError(t, err)
			require.True(t, exists)
			assert.Equal(t, tc.transformed, obj.(*v1.Pod).Labels["t"] == "1")
		})
	}
}

func TestControllerPanicPropagatesAfterCleanup(t *testing.T) {
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	srv.Create("a")
	_, ctrl := NewInformerWithOptions(InformerOptions{
		ListerWatcher: srv,
		ObjectType:    &v1.Pod{},
		Handler:       ResourceEventHandlerFuncs{AddFunc: func(interface{}) { panic("handler boom") }},
	})
	ctx := klogContext(t)
	recovered := make(chan interface{}, 1)
	go func() {
		defer func() { recovered <- recover() }()
		ctrl.RunWithContext(ctx)
	}()
	select {
	case r := <-recovered:
		assert.Equal(t, "handler boom", r)
	case <-time.After(waitTimeout):
		t.Fatal("panic did not propagate")
	}
	// goleak in TestMain verifies that the Reflector goroutine has stopped.
}

func TestControllerBadConfigAndRunTwice(t *testing.T) {
	ctx, cancel := context.WithCancel(klogContext(t))
	defer cancel()
	for _, cfg := range []*Config{nil, {}, {Queue: NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true})}} {
		c := New(cfg)
		c.RunWithContext(ctx) // returns at once
		assert.False(t, c.HasSynced())
		assert.Equal(t, "", c.LastSyncResourceVersion())
	}
	assert.False(t, IsDone(New(nil).HasSyncedChecker()))

	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	_, ctrl := NewInformerWithOptions(InformerOptions{ListerWatcher: srv, ObjectType: &v1.Pod{}})
	runController(t, ctrl)
	waitUntilSynced(t, ctrl.HasSyncedChecker())
	done := make(chan struct{})
	go func() { defer close(done); ctrl.Run(make(chan struct{})) }()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("second Run did not return")
	}
}

func TestControllerWatchErrorHandlers(t *testing.T) {
	for _, withContext := range []bool{false, true} {
		srv := fakeapi.NewServer(false)
		srv.FailLists(errors.New("no list for you"))
		errs := make(chan error, 100)
		report := func(err error) {
			select {
			case errs <- err:
			default:
			}
		}
		cfg := &Config{
			Queue:         NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true}),
			ListerWatcher: srv,
			ObjectType:    &v1.Pod{},
			Process:       func(interface{}, bool) error { return nil },
		}
		if withContext {
			cfg.WatchErrorHandlerWithContext = func(_ context.Context, _ *Reflector, err error) { report(err) }
		} else {
			cfg.WatchErrorHandler = func(_ *Reflector, err error) { report(err) }
		}
		ctrl := New(cfg)
		ctx, cancel := context.WithCancel(klogContext(t))
		done := make(chan struct{})
		go func() { defer close(done); ctrl.RunWithContext(ctx) }()
		select {
		case err := <-errs:
			assert.ErrorContains(t, err, "no list for you")
		case <-time.After(waitTimeout):
			t.Error("watch error handler not called")
		}
		cancel()
		<-done
	}
}

func runController(t *testing.T, ctrl Controller) {
	t.Helper()
	ctx, cancel := context.WithCancel(klogContext(t))
	done := make(chan struct{})
	go func() { defer close(done); ctrl.RunWithContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitTimeout):
			t.Error("controller did not stop")
		}
	})
}

// transactionCountingStore is an Indexer that is a TransactionStore and counts how
// its writes arrive.
type transactionCountingStore struct {
	Indexer
	mu                 sync.Mutex
	transactions       [][]TransactionType
	singleWrites       int
	singleWriteMethods []string
}

func (s *transactionCountingStore) single(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.singleWrites++
	s.singleWriteMethods = append(s.singleWriteMethods, method)
}

func (s *transactionCountingStore) Add(obj interface{}) error {
	s.single("Add")
	return s.Indexer.Add(obj)
}
func (s *transactionCountingStore) Update(obj interface{}) error {
	s.single("Update")
	return s.Indexer.Update(obj)
}
func (s *transactionCountingStore) Delete(obj interface{}) error {
	s.single("Delete")
	return s.Indexer.Delete(obj)
}

func (s *transactionCountingStore) Transaction(txns ...Transaction) *TransactionError {
	types := make([]TransactionType, len(txns))
	for i, t := range txns {
		types[i] = t.Type
	}
	s.mu.Lock()
	s.transactions = append(s.transactions, types)
	s.mu.Unlock()
	return s.Indexer.(TransactionStore).Transaction(txns...)
}

// TestInformerAppliesAPoppedBatchInOneTransaction pops a RealFIFO batch into
// the informer's delta applier and checks that the store receives it as a
// single transaction, for a foreign TransactionStore and for this
// package's own store (whose resource version gauge is set once per write
// call, so once per transaction).
func TestInformerAppliesAPoppedBatchInOneTransaction(t *testing.T) {
	fill := func(t *testing.T) *RealFIFO {
		f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, EmitDeltaTypeBookmark: true})
		require.NoError(t, f.Add(newPod("a", "2")))
		require.NoError(t, f.Add(newPod("b", "3")))
		require.NoError(t, f.Update(newPod("c", "4")))
		require.NoError(t, f.Delete(newPod("z", "5")))
		return f
	}
	wantEvents := []string{
		"update ns/a@1 -> ns/a@2",
		"add ns/b@3 initial=false",
		"add ns/c@4 initial=false",
		"delete ns/z@5",
	}

	t.Run("foreign transaction store", func(t *testing.T) {
		store := &transactionCountingStore{Indexer: NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{})}
		require.NoError(t, store.Indexer.Add(newPod("a", "1")))
		require.NoError(t, store.Indexer.Add(newPod("z", "1")))
		rec := &eventRecorder{}
		a := newDeltaApplier(testLogger(t), store, rec)
		f := fill(t)
		require.NoError(t, f.PopBatch(a.ProcessBatch, a.Process))
		assert.Equal(t, [][]TransactionType{{TransactionTypeUpdate, TransactionTypeAdd, TransactionTypeAdd, TransactionTypeDelete}}, store.transactions)
		assert.Zero(t, store.singleWrites, "no write outside the transaction: %v", store.singleWriteMethods)
		assert.Equal(t, wantEvents, rec.get())
		assert.Equal(t, []string{"ns/a@2", "ns/b@3", "ns/c@4"}, describedStore(store))
	})

	t.Run("own store", func(t *testing.T) {
		name, err := NewInformerName("batch-transaction")
		require.NoError(t, err)
		defer name.Release()
		metrics := newStoreMetricsProvider()
		store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{},
			WithStoreMetrics(name.WithResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}), metrics))
		require.NoError(t, store.Add(newPod("a", "1")))
		require.NoError(t, store.Add(newPod("z", "1")))
		gauge := metrics.rv["batch-transaction"]
		before := len(gauge.get())
		rec := &eventRecorder{}
		a := newDeltaApplier(testLogger(t), store, rec)
		f := fill(t)
		require.NoError(t, f.PopBatch(a.ProcessBatch, a.Process))
		assert.Equal(t, []float64{5}, gauge.get()[before:], "one store write for the whole batch")
		assert.Equal(t, wantEvents, rec.get())
		assert.Equal(t, []string{"ns/a@2", "ns/b@3", "ns/c@4"}, describedStore(store))
	})
}

func TestDeltaApplierReusesQueueKeys(t *testing.T) {
	a1, a2, b1 := newPod("a", "1"), newPod("a", "2"), newPod("b", "1")
	deltas := []Delta{{Updated, a2}, {Added, b1}, {Deleted, a2}}
	keys := []string{"ns/a", "ns/b", "ns/a"}
	want := []string{"update ns/a@1 -> ns/a@2", "add ns/b@1 initial=false", "delete ns/a@2"}
	for _, batch := range []bool{false, true} {
		kf := &countingKeyFunc{}
		store := NewIndexer(kf.fn, Indexers{})
		require.NoError(t, store.Add(a1))
		kf.calls.Store(0)
		rec := &eventRecorder{}
		cfg := deltaApplierConfig(testLogger(t), store, rec)
		cfg.KeysOf = func(ds []Delta) []string {
			if len(ds) == len(deltas) {
				return keys
			}
			return nil
		}
		a := apply.New(cfg)
		if batch {
			require.NoError(t, a.ProcessBatch(deltas, false))
		} else {
			require.NoError(t, a.Process(Deltas(deltas), false))
		}
		assert.Equal(t, want, rec.get())
		assert.Equal(t, []string{"ns/b@1"}, describedStore(store))
		assert.Equal(t, int64(0), kf.calls.Load(), "batch=%v: the queue's keys are reused", batch)
	}
}

func TestReplaceAllComputesEachKeyOnce(t *testing.T) {
	kf := &countingKeyFunc{}
	store := NewIndexer(kf.fn, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	rec := &eventRecorder{}
	a := newDeltaApplier(testLogger(t), store, rec)

	list := []interface{}{newPod("a", "1"), newPod("b", "1"), newPod("c", "1")}
	require.NoError(t, a.Process(Deltas{{ReplacedAll, ReplacedAllInfo{ResourceVersion: "1", Objects: list}}}, true))
	assert.Equal(t, int64(3), kf.calls.Load(), "one key computation per listed object")
	assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/b@1 initial=true", "add ns/c@1 initial=true"}, rec.get())
	assert.Equal(t, "1", store.LastStoreSyncResourceVersion())

	kf.calls.Store(0)
	relist := []interface{}{newPod("c", "2"), newPod("d", "2")}
	require.NoError(t, a.Process(Deltas{{ReplacedAll, ReplacedAllInfo{ResourceVersion: "2", Objects: relist}}}, false))
	assert.Equal(t, int64(2), kf.calls.Load())
	assert.Equal(t, []string{
		"delete tombstone(ns/a@1)", "delete tombstone(ns/b@1)",
		"update ns/c@1 -> ns/c@2", "add ns/d@2 initial=false",
	}, rec.get()[3:])
	assert.Equal(t, []string{"ns/c@2", "ns/d@2"}, describedStore(store))
	byNS, err := store.IndexKeys(NamespaceIndex, "ns")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/c", "ns/d"}, byNS)
}
