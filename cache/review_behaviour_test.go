package cache

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"
)

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
		require.NoError(t, f.Add(infPod("a", "2")))
		require.NoError(t, f.Add(infPod("b", "3")))
		require.NoError(t, f.Update(infPod("c", "4")))
		require.NoError(t, f.Delete(infPod("z", "5")))
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
		require.NoError(t, store.Indexer.Add(infPod("a", "1")))
		require.NoError(t, store.Indexer.Add(infPod("z", "1")))
		rec := &infRecorder{}
		a := newDeltaApplier(infTestLogger(t), store, rec)
		f := fill(t)
		require.NoError(t, f.PopBatch(a.processBatch, a.process))
		assert.Equal(t, [][]TransactionType{{TransactionTypeUpdate, TransactionTypeAdd, TransactionTypeAdd, TransactionTypeDelete}}, store.transactions)
		assert.Zero(t, store.singleWrites, "no write outside the transaction: %v", store.singleWriteMethods)
		assert.Equal(t, wantEvents, rec.get())
		assert.Equal(t, []string{"ns/a@2", "ns/b@3", "ns/c@4"}, infStoreContents(store))
	})

	t.Run("own store", func(t *testing.T) {
		name, err := NewInformerName("batch-transaction")
		require.NoError(t, err)
		defer name.Release()
		metrics := stNewMetricsProvider()
		store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{},
			WithStoreMetrics(name.WithResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}), metrics))
		require.NoError(t, store.Add(infPod("a", "1")))
		require.NoError(t, store.Add(infPod("z", "1")))
		gauge := metrics.rv["batch-transaction"]
		before := len(gauge.get())
		rec := &infRecorder{}
		a := newDeltaApplier(infTestLogger(t), store, rec)
		f := fill(t)
		require.NoError(t, f.PopBatch(a.processBatch, a.process))
		assert.Equal(t, []float64{5}, gauge.get()[before:], "one store write for the whole batch")
		assert.Equal(t, wantEvents, rec.get())
		assert.Equal(t, []string{"ns/a@2", "ns/b@3", "ns/c@4"}, infStoreContents(store))
	})
}

// TestSharedInformerBlockedHandlerBlocksNothingElse registers a handler that
// blocks forever in its first notification. The informer must go on
// updating its cache, delivering to the other handlers (every event, in
// order) and serving new handlers; only the blocked registration stays
// unsynced, its notifications buffered.
func TestSharedInformerBlockedHandlerBlocksNothingElse(t *testing.T) {
	const updates = 300
	for _, q := range infQueueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := newInfServer()
			srv.create("a")
			informer := infNewInformer(t, srv, q.useDeltaFIFO, 0)
			release := make(chan struct{})
			blockedCalls := 0
			blocked := ResourceEventHandlerFuncs{
				AddFunc:    func(interface{}) { blockedCalls++; <-release },
				UpdateFunc: func(_, _ interface{}) { blockedCalls++ },
			}
			blockedReg, err := informer.AddEventHandler(blocked)
			require.NoError(t, err)
			rec := &infRecorder{}
			_, err = informer.AddEventHandler(rec)
			require.NoError(t, err)
			infRunInformer(t, informer)
			t.Cleanup(func() { close(release) }) // runs before the informer is stopped

			infWaitSynced(t, informer.HasSyncedChecker())
			waitForNextWatch(t, srv)
			want := []string{"add ns/a@1 initial=true"}
			for i := 0; i < updates; i++ {
				srv.update("a")
				want = append(want, fmt.Sprintf("update ns/a@%d -> ns/a@%d", i+1, i+2))
			}
			srv.create("b")
			want = append(want, fmt.Sprintf("add ns/b@%d initial=false", updates+2))

			got := rec.waitN(t, len(want))
			if q.useDeltaFIFO {
				assert.Equal(t, infPerObject(want), infPerObject(got))
			} else {
				assert.Equal(t, want, got)
			}
			assert.Equal(t, []string{fmt.Sprintf("ns/a@%d", updates+1), fmt.Sprintf("ns/b@%d", updates+2)}, infStoreContents(informer.GetStore()))

			late := &infRecorder{}
			lateReg, err := informer.AddEventHandler(late)
			require.NoError(t, err)
			infWaitSynced(t, lateReg.HasSyncedChecker())
			late.waitN(t, 2)

			assert.False(t, blockedReg.HasSynced(), "still in its initial add")
			l := blockedReg.(*processorListener)
			l.mu.Lock()
			buffered := len(l.pending)
			l.mu.Unlock()
			assert.Positive(t, buffered, "the blocked handler's notifications wait in its buffer")
		})
	}
}

// TestRemoveEventHandlerFreesTheListener checks that nothing keeps a removed
// listener (and so its handler and buffered notifications) reachable.
func TestRemoveEventHandlerFreesTheListener(t *testing.T) {
	cases := []struct {
		name    string
		running bool
	}{{"before Run", false}, {"while running", true}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newInfServer()
			srv.create("a")
			informer := infNewInformer(t, srv, false, 0)
			kept := &infRecorder{}
			_, err := informer.AddEventHandler(kept)
			require.NoError(t, err)
			reg, err := informer.AddEventHandler(&infRecorder{})
			require.NoError(t, err)
			freed := weak.Make(reg.(*processorListener))
			if tc.running {
				infRunInformer(t, informer)
				infWaitSynced(t, reg.HasSyncedChecker())
			}
			require.NoError(t, ShutDownEventHandler(informer, reg))
			reg = nil
			require.Eventually(t, func() bool {
				runtime.GC()
				return freed.Value() == nil
			}, infTimeout, 10*time.Millisecond, "the removed listener is still reachable")
			assert.Equal(t, 1, informer.processor.listenerCount())
			if tc.running {
				srv.create("b")
				kept.waitN(t, 2)
			}
		})
	}
}

// TestSharedInformerShutdownStopsEveryGoroutine runs an informer with every
// goroutine-starting feature in use (resyncs, several handlers, a late and a
// removed one, a mutation detector, a relist) and checks that, once Run has
// returned, none of the goroutines it started is left.
func TestSharedInformerShutdownStopsEveryGoroutine(t *testing.T) {
	for _, q := range infQueueKinds {
		t.Run(q.name, func(t *testing.T) {
			t.Setenv(mutationDetectorEnv, "true")
			ignore := goleak.IgnoreCurrent()
			srv := newInfServer()
			srv.create("a")
			informer := infNewInformer(t, srv, q.useDeltaFIFO, time.Second)
			early := &infRecorder{}
			_, err := informer.AddEventHandlerWithResyncPeriod(early, 2*time.Second)
			require.NoError(t, err)
			removed, err := informer.AddEventHandler(&infRecorder{})
			require.NoError(t, err)

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); informer.RunWithContext(ctx) }()
			infWaitSynced(t, informer.HasSyncedChecker())
			waitForNextWatch(t, srv)
			late := &infRecorder{}
			_, err = informer.AddEventHandler(late)
			require.NoError(t, err)
			require.NoError(t, informer.RemoveEventHandler(removed))
			srv.create("b")
			srv.expire()
			srv.create("c")
			late.waitN(t, 3)

			cancel()
			select {
			case <-done:
			case <-time.After(infTimeout):
				t.Fatal("Run did not return")
			}
			// The Reflector has stopped its watch, so the test server's
			// watch goroutines end too: nothing may be left.
			goleak.VerifyNone(t, ignore)
		})
	}
}

// firstWatchRefusedListWatch serves srv, but its first watch is refused.
type firstWatchRefusedListWatch struct {
	srv     *infServer
	mu      sync.Mutex
	refused bool
}

func (lw *firstWatchRefusedListWatch) List(options metav1.ListOptions) (kruntime.Object, error) {
	return lw.srv.list(options)
}

func (lw *firstWatchRefusedListWatch) Watch(options metav1.ListOptions) (watch.Interface, error) {
	lw.mu.Lock()
	first := !lw.refused
	lw.refused = true
	lw.mu.Unlock()
	if first {
		return nil, fmt.Errorf("dial tcp 127.0.0.1:6443: %w", syscall.ECONNREFUSED)
	}
	return lw.srv.watch(options)
}

func (*firstWatchRefusedListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// TestSharedInformerWatchErrorHandlerSeesEveryFailure checks, through the
// informer's SetWatchErrorHandler, that the handler is told about a refused
// watch and a 410 (which client-go only logs at V(4)), and that the
// informer recovers from both: the refused watch is retried without a
// relist, the 410 relists.
func TestSharedInformerWatchErrorHandlerSeesEveryFailure(t *testing.T) {
	srv := newInfServer()
	t.Cleanup(srv.stopWatches)
	srv.create("a")
	informer := NewSharedIndexInformer(&firstWatchRefusedListWatch{srv: srv}, &v1.Pod{}, 0, Indexers{}).(*sharedIndexInformer)
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	informer.clock = clk
	var mu sync.Mutex
	var errs []error
	require.NoError(t, informer.SetWatchErrorHandler(func(r *Reflector, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}))
	errCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(errs)
	}
	rec := &infRecorder{}
	_, err := informer.AddEventHandler(rec)
	require.NoError(t, err)
	infRunInformer(t, informer)
	infWaitSynced(t, informer.HasSyncedChecker())

	// The refused watch: reported, then retried after the backoff.
	require.Eventually(t, func() bool { return errCount() == 1 && clk.HasWaiters() }, infTimeout, eventuallyTick)
	clk.Step(time.Minute)
	waitForNextWatch(t, srv)
	lists, _ := srv.counts()
	assert.Equal(t, 1, lists, "a refused watch is retried without a relist")

	// The 410: reported, then a relist after the backoff.
	srv.expire()
	require.Eventually(t, func() bool { return errCount() == 2 && clk.HasWaiters() }, infTimeout, eventuallyTick)
	srv.create("b")
	clk.Step(time.Minute)
	rec.waitN(t, 2)
	lists, _ = srv.counts()
	assert.Equal(t, 2, lists)

	mu.Lock()
	defer mu.Unlock()
	assert.ErrorIs(t, errs[0], syscall.ECONNREFUSED)
	assert.True(t, apierrors.IsResourceExpired(errs[1]), "want a 410, got %v", errs[1])
}

// TestReflectorBackoffResetsAfterAHealthyPeriod drives Run with a fake
// clock: failed watch openings back off exponentially (1s, 2s); after a
// watch that stayed healthy for longer than the reset period, the next
// failure backs off from the initial delay again (1s, not 4s).
func TestReflectorBackoffResetsAfterAHealthyPeriod(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	s := rfNewScript(true).list(rfListStep{obj: rfPodList("10", "")}).watch(
		rfWatchStep{err: syscall.ECONNREFUSED},
		rfWatchStep{err: syscall.ECONNREFUSED},
		rfWatchStep{hold: true, events: []watch.Event{rfEv(watch.Added, rfPod("a", "11"))}},
		rfWatchStep{hold: true},
	)
	r := NewReflectorWithOptions(s, &v1.Pod{}, rfNewRecorder(), ReflectorOptions{
		Name:    "backoff-reset",
		Clock:   clk,
		Backoff: &wait.Backoff{Duration: time.Second, Factor: 2, Steps: 10, Cap: time.Minute},
	})
	stop := rfStartRun(t, r)
	defer stop()

	// waitsFor checks that the next watch is opened exactly after d.
	waitsFor := func(d time.Duration, watches int) {
		t.Helper()
		rfRequireEventually(t, func() bool { return len(s.watchOptions()) == watches-1 && clk.HasWaiters() }, "watch %d pending", watches)
		clk.Step(d - time.Millisecond)
		assert.Never(t, func() bool { return len(s.watchOptions()) >= watches }, 50*time.Millisecond, time.Millisecond, "watch %d opened before %v", watches, d)
		clk.Step(time.Millisecond)
		rfRequireEventually(t, func() bool { return len(s.watchOptions()) == watches }, "watch %d after %v", watches, d)
	}
	waitsFor(time.Second, 2)
	waitsFor(2*time.Second, 3)

	// Healthy for three minutes, then the watch ends with a 429.
	rfRequireEventually(t, func() bool { return r.LastSyncResourceVersion() == "11" }, "event applied")
	clk.Step(3 * time.Minute)
	s.mu.Lock()
	w := s.watchers[len(s.watchers)-1]
	s.mu.Unlock()
	w.push(rfEv(watch.Error, rfStatus(429, metav1.StatusReasonTooManyRequests)))
	waitsFor(time.Second, 4)
	assert.Len(t, s.listOptions(), 1, "no relist")
}
