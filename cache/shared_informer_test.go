package cache

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
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
	"k8s.io/apimachinery/pkg/watch"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// runInformer starts informer and registers cleanup that stops it and
// waits for Run to return.
func runInformer(t *testing.T, informer SharedInformer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitTimeout):
			t.Error("informer did not stop")
		}
	})
}

func newPodInformer(t *testing.T, srv *fakeapi.Server, useDeltaFIFO bool, resync time.Duration) *sharedIndexInformer {
	t.Helper()
	t.Cleanup(srv.StopWatches)
	return NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, SharedIndexInformerOptions{
		ResyncPeriod: resync,
		Indexers:     Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
		UseDeltaFIFO: useDeltaFIFO,
	}).(*sharedIndexInformer)
}

func waitUntilSynced(t *testing.T, checkers ...DoneChecker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	require.True(t, WaitFor(ctx, "", checkers...), "not synced")
}

func TestSharedInformerWatchEventSequence(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a")
			srv.Create("b")
			informer := newPodInformer(t, srv, q.useDeltaFIFO, 0)
			rec := &eventRecorder{}
			reg, err := informer.AddEventHandler(rec)
			require.NoError(t, err)
			assert.False(t, reg.HasSynced())
			runInformer(t, informer)
			waitUntilSynced(t, informer.HasSyncedChecker(), reg.HasSyncedChecker())
			assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/b@2 initial=true"}, rec.get())

			srv.Create("c")
			srv.Update("a")
			srv.Delete("b")
			srv.Update("c")
			got := rec.waitN(t, 6)
			want := []string{
				"add ns/a@1 initial=true",
				"add ns/b@2 initial=true",
				"add ns/c@3 initial=false",
				"update ns/a@1 -> ns/a@4",
				"delete ns/b@5",
				"update ns/c@3 -> ns/c@6",
			}
			if q.useDeltaFIFO {
				// The DeltaFIFO pops per key, so only the order per object
				// is fixed.
				assert.Equal(t, perObject(want), perObject(got))
			} else {
				assert.Equal(t, want, got)
			}
			assert.Equal(t, []string{"ns/a@4", "ns/c@6"}, describedStore(informer.GetStore()))
			byNS, err := informer.GetIndexer().ByIndex(NamespaceIndex, "ns")
			require.NoError(t, err)
			assert.Len(t, byNS, 2)
			require.Eventually(t, func() bool { return informer.LastSyncResourceVersion() == "6" }, waitTimeout, time.Millisecond)
			assert.Equal(t, "6", informer.GetController().LastSyncResourceVersion())
		})
	}
}

func TestSharedInformerRelist(t *testing.T) {
	// After the initial list {a, b, c}, the watch misses: b deleted, c
	// updated, d created. A 410 forces a relist that finds the differences.
	expected := map[string][]string{
		// The relist applied in one step, then notified as client-go
		// does: the vanished b (as a tombstone), then in list order a
		// unchanged (same RV, delivered because no resync check limits
		// it), c updated, d added.
		"RealFIFO": {
			"delete tombstone(ns/b@2)",
			"update ns/a@1 -> ns/a@1",
			"update ns/c@3 -> ns/c@5",
			"add ns/d@6 initial=false",
		},
		// The DeltaFIFO queues Replaced deltas in list order, then the
		// deletions.
		"DeltaFIFO": {
			"update ns/a@1 -> ns/a@1",
			"update ns/c@3 -> ns/c@5",
			"add ns/d@6 initial=false",
			"delete tombstone(ns/b@2)",
		},
	}
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a")
			srv.Create("b")
			srv.Create("c")
			informer := newPodInformer(t, srv, q.useDeltaFIFO, 0)
			rec := &eventRecorder{}
			reg, err := informer.AddEventHandler(rec)
			require.NoError(t, err)
			runInformer(t, informer)
			waitUntilSynced(t, reg.HasSyncedChecker())
			require.Equal(t, 3, len(rec.get()))

			srv.DeleteMissed("b")
			srv.UpdateMissed("c")
			srv.CreateMissed("d")
			srv.Expire()
			got := rec.waitN(t, 7)
			assert.Equal(t, expected[q.name], got[3:])
			assert.Equal(t, []string{"ns/a@1", "ns/c@5", "ns/d@6"}, describedStore(informer.GetStore()))
			lists, _ := requestCounts(srv)
			assert.Equal(t, 2, lists)
		})
	}
}

func TestSharedInformerLateHandler(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a")
			srv.Create("b")
			informer := newPodInformer(t, srv, q.useDeltaFIFO, 0)
			runInformer(t, informer)
			waitUntilSynced(t, informer.HasSyncedChecker())

			release := make(chan struct{})
			rec := &eventRecorder{onEvent: func(string, interface{}) { <-release }}
			reg, err := informer.AddEventHandler(rec)
			require.NoError(t, err)
			assert.False(t, reg.HasSynced(), "must not be synced before processing its initial list")
			srv.Create("c")
			close(release)
			waitUntilSynced(t, reg.HasSyncedChecker())
			got := rec.waitN(t, 3)
			assert.ElementsMatch(t, []string{"add ns/a@1 initial=true", "add ns/b@2 initial=true"}, got[:2])
			assert.Equal(t, "add ns/c@3 initial=false", got[2])
			assert.True(t, reg.HasSynced())
		})
	}
}

func TestSharedInformerHandlerBeforeSyncOnEmptyList(t *testing.T) {
	srv := fakeapi.NewServer(false)
	informer := newPodInformer(t, srv, false, 0)
	reg, err := informer.AddEventHandler(&eventRecorder{})
	require.NoError(t, err)
	runInformer(t, informer)
	waitUntilSynced(t, informer.HasSyncedChecker(), reg.HasSyncedChecker())
}

func TestSharedInformerRemoveEventHandler(t *testing.T) {
	srv := fakeapi.NewServer(false)
	informer := newPodInformer(t, srv, false, 0)
	kept, removed := &eventRecorder{}, &eventRecorder{}
	_, err := informer.AddEventHandler(kept)
	require.NoError(t, err)
	regRemoved, err := informer.AddEventHandler(removed)
	require.NoError(t, err)
	runInformer(t, informer)
	waitUntilSynced(t, informer.HasSyncedChecker())

	srv.Create("a")
	removed.waitN(t, 1)
	require.NoError(t, ShutDownEventHandler(informer, regRemoved))
	assert.False(t, informer.processor.IsRegistered(regRemoved.(*handlerRegistration).listener))
	assert.Equal(t, 1, informer.processor.ListenerCount())
	srv.Create("b")
	kept.waitN(t, 2)
	assert.Equal(t, []string{"add ns/a@1 initial=false"}, removed.get(), "no delivery after removal")

	// Idempotent, and harmless for registrations of another informer.
	require.NoError(t, informer.RemoveEventHandler(regRemoved))
	other := newPodInformer(t, fakeapi.NewServer(false), false, 0)
	require.NoError(t, other.RemoveEventHandler(regRemoved))
	// A foreign registration type is an error.
	require.Error(t, informer.RemoveEventHandler(foreignRegistration{}))
	require.Error(t, ShutDownEventHandler(informer, foreignRegistration{}))
}

type foreignRegistration struct{}

func (foreignRegistration) HasSynced() bool               { return false }
func (foreignRegistration) HasSyncedChecker() DoneChecker { return nil }

func TestShutDownEventHandlerWaitsForRunningHandler(t *testing.T) {
	srv := fakeapi.NewServer(false)
	informer := newPodInformer(t, srv, false, 0)
	started, release := make(chan struct{}), make(chan struct{})
	var finished bool
	reg, err := informer.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(interface{}) {
		close(started)
		<-release
		finished = true
	}})
	require.NoError(t, err)
	runInformer(t, informer)
	srv.Create("a")
	srv.Create("b") // queued behind the blocked call, never delivered
	<-started
	shutdown := make(chan error)
	go func() { shutdown <- ShutDownEventHandler(informer, reg) }()
	select {
	case <-shutdown:
		t.Fatal("ShutDownEventHandler returned while the handler was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-shutdown:
		require.NoError(t, err)
	case <-time.After(waitTimeout):
		t.Fatal("ShutDownEventHandler did not return")
	}
	assert.True(t, finished)
}

func TestShutDownEventHandlerLifecycles(t *testing.T) {
	t.Run("never started", func(t *testing.T) {
		informer := newPodInformer(t, fakeapi.NewServer(false), false, 0)
		reg, err := informer.AddEventHandler(&eventRecorder{})
		require.NoError(t, err)
		require.NoError(t, ShutDownEventHandler(informer, reg))
	})
	t.Run("after informer stopped", func(t *testing.T) {
		informer := newPodInformer(t, fakeapi.NewServer(false), false, 0)
		reg, err := informer.AddEventHandler(&eventRecorder{})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); informer.RunWithContext(ctx) }()
		waitUntilSynced(t, reg.HasSyncedChecker())
		cancel()
		<-done
		require.NoError(t, ShutDownEventHandler(informer, reg))
	})
}

func TestSharedInformerHandlerPanic(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a")
			informer := newPodInformer(t, srv, q.useDeltaFIFO, 0)
			var buf syncBuffer
			logger := bufferLogger(&buf)
			panicky := &panickingHandler{}
			reg, err := informer.AddEventHandlerWithOptions(panicky, HandlerOptions{Logger: &logger})
			require.NoError(t, err)
			other := &eventRecorder{}
			_, err = informer.AddEventHandler(other)
			require.NoError(t, err)
			runInformer(t, informer)
			// The initial add panicked, but counts as processed.
			waitUntilSynced(t, reg.HasSyncedChecker())
			srv.Create("b")
			srv.Update("a")
			other.waitN(t, 3)
			require.Eventually(t, func() bool { return len(panicky.get()) == 2 }, waitTimeout, time.Millisecond)
			assert.Equal(t, []string{"add ns/b@2 initial=false", "update ns/a@1 -> ns/a@3"}, panicky.get())
			assert.Equal(t, int64(1), informer.processor.Panics())
			assert.Contains(t, buf.String(), `"Observed a panic" panic="first add fails"`)
			assert.Contains(t, buf.String(), "cache.panickingHandler")
			assert.False(t, informer.IsStopped())
		})
	}
}

// panickingHandler panics on its first notification and records the others.
type panickingHandler struct {
	eventRecorder
	calls int
}

func (p *panickingHandler) OnAdd(obj interface{}, initial bool) {
	p.calls++
	if p.calls == 1 {
		panic("first add fails")
	}
	p.eventRecorder.OnAdd(obj, initial)
}

func TestSharedInformerNilHandler(t *testing.T) {
	informer := newPodInformer(t, fakeapi.NewServer(false), false, 0)
	_, err := informer.AddEventHandler(nil)
	require.Error(t, err)
	typed := NewTypedSharedIndexInformer[*v1.Pod](informer)
	_, err = typed.AddTypedEventHandler(nil)
	require.Error(t, err)
}

func TestSharedInformerTransform(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a")
			informer := newPodInformer(t, srv, q.useDeltaFIFO, 0)
			var mu sync.Mutex
			calls := map[string]int{}
			require.NoError(t, informer.SetTransform(func(obj interface{}) (interface{}, error) {
				pod, ok := obj.(*v1.Pod)
				if !ok {
					return obj, nil
				}
				mu.Lock()
				calls[pod.Name+"@"+pod.ResourceVersion]++
				mu.Unlock()
				pod = pod.DeepCopy()
				pod.Labels = map[string]string{"transformed": "yes"}
				return pod, nil
			}))
			var seen []string
			var seenMu sync.Mutex
			_, err := informer.AddEventHandler(ResourceEventHandlerFuncs{
				AddFunc: func(obj interface{}) {
					seenMu.Lock()
					defer seenMu.Unlock()
					seen = append(seen, obj.(*v1.Pod).Labels["transformed"])
				},
				UpdateFunc: func(_, obj interface{}) {
					seenMu.Lock()
					defer seenMu.Unlock()
					seen = append(seen, obj.(*v1.Pod).Labels["transformed"])
				},
			})
			require.NoError(t, err)
			runInformer(t, informer)
			waitUntilSynced(t, informer.HasSyncedChecker())
			srv.Create("b")
			srv.Update("a")
			require.Eventually(t, func() bool {
				seenMu.Lock()
				defer seenMu.Unlock()
				return len(seen) == 3
			}, waitTimeout, time.Millisecond)
			assert.Equal(t, []string{"yes", "yes", "yes"}, seen)
			for _, obj := range informer.GetStore().List() {
				assert.Equal(t, "yes", obj.(*v1.Pod).Labels["transformed"])
			}
			mu.Lock()
			assert.Equal(t, map[string]int{"a@1": 1, "b@2": 1, "a@3": 1}, calls, "transform runs once per object")
			mu.Unlock()

			// Setters after start fail.
			require.Error(t, informer.SetTransform(nil))
			require.Error(t, informer.SetWatchErrorHandler(func(*Reflector, error) {}))
			require.Error(t, informer.SetWatchErrorHandlerWithContext(nil))
		})
	}
}

func TestSharedInformerWatchErrorHandler(t *testing.T) {
	srv := fakeapi.NewServer(false)
	srv.FailLists(errors.New("list refused"))
	informer := newPodInformer(t, srv, false, 0)
	errs := make(chan error, 100)
	require.NoError(t, informer.SetWatchErrorHandler(func(r *Reflector, err error) {
		select {
		case errs <- err:
		default:
		}
	}))
	runInformer(t, informer)
	select {
	case err := <-errs:
		assert.ErrorContains(t, err, "list refused")
	case <-time.After(waitTimeout):
		t.Fatal("watch error handler not called")
	}
	assert.False(t, informer.HasSynced())
}

func TestSharedInformerStop(t *testing.T) {
	srv := fakeapi.NewServer(false)
	srv.Create("a")
	informer := newPodInformer(t, srv, false, 0)
	regs := make([]ResourceEventHandlerRegistration, 3)
	for i := range regs {
		var err error
		regs[i], err = informer.AddEventHandler(&eventRecorder{})
		require.NoError(t, err)
	}
	assert.False(t, informer.IsStopped())
	assert.Equal(t, "", informer.LastSyncResourceVersion())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); informer.Run(ctx.Done()) }()
	waitUntilSynced(t, informer.HasSyncedChecker())
	late, err := informer.AddEventHandler(&eventRecorder{})
	require.NoError(t, err)
	regs = append(regs, late)
	cancel()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return")
	}
	assert.True(t, informer.IsStopped())
	for _, reg := range regs {
		select {
		case <-reg.(*handlerRegistration).ShutdownChan():
		default:
			t.Error("listener still running after the informer stopped")
		}
	}
	_, err = informer.AddEventHandler(&eventRecorder{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was not added to shared informer because it has stopped already")
	require.Error(t, informer.AddIndexers(Indexers{"x": MetaNamespaceIndexFunc}))
	// Running again does nothing.
	informer.Run(make(chan struct{}))
}

func TestSharedInformerRunTwice(t *testing.T) {
	informer := newPodInformer(t, fakeapi.NewServer(false), false, 0)
	runInformer(t, informer)
	waitUntilSynced(t, informer.HasSyncedChecker())
	returned := make(chan struct{})
	go func() { defer close(returned); informer.Run(make(chan struct{})) }()
	select {
	case <-returned:
	case <-time.After(waitTimeout):
		t.Fatal("second Run did not return at once")
	}
}

func TestSharedInformerAddIndexersBeforeAndDuringRun(t *testing.T) {
	srv := fakeapi.NewServer(false)
	srv.Create("a")
	informer := newPodInformer(t, srv, false, 0)
	require.NoError(t, informer.AddIndexers(Indexers{"byName": func(obj interface{}) ([]string, error) {
		return []string{obj.(*v1.Pod).Name}, nil
	}}))
	runInformer(t, informer)
	waitUntilSynced(t, informer.HasSyncedChecker())
	objs, err := informer.GetIndexer().ByIndex("byName", "a")
	require.NoError(t, err)
	assert.Len(t, objs, 1)
}

func TestSharedInformerResyncPeriodsComputed(t *testing.T) {
	cases := []struct {
		name          string
		informer      time.Duration
		requested     time.Duration
		afterStart    bool
		wantEffective time.Duration
		wantCheck     time.Duration
	}{
		{"no resync informer", 0, 5 * time.Second, false, 0, 0},
		{"zero requested", 10 * time.Second, 0, false, 0, 10 * time.Second},
		{"below minimum, before start", 10 * time.Second, 10 * time.Millisecond, false, time.Second, time.Second},
		{"lowers check period before start", 10 * time.Second, 3 * time.Second, false, 3 * time.Second, 3 * time.Second},
		{"raised to check period after start", 10 * time.Second, 3 * time.Second, true, 10 * time.Second, 10 * time.Second},
		{"longer than check", 10 * time.Second, 30 * time.Second, false, 30 * time.Second, 10 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			informer := newPodInformer(t, fakeapi.NewServer(false), false, tc.informer)
			if tc.afterStart {
				informer.startedLock.Lock()
				informer.started = true
				informer.startedLock.Unlock()
			}
			reg, err := informer.AddEventHandlerWithResyncPeriod(&eventRecorder{}, tc.requested)
			require.NoError(t, err)
			l := reg.(*handlerRegistration).listener
			assert.Equal(t, tc.wantEffective, l.ResyncPeriod())
			assert.Equal(t, tc.wantCheck, informer.resyncCheckPeriod)
		})
	}
}

func TestSharedInformerPerHandlerResync(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a")
			informer := newPodInformer(t, srv, q.useDeltaFIFO, time.Second)
			fakeClock := newTimerRecordingClock()
			informer.clock = fakeClock
			informer.processor = newHandlerProcessor(fakeClock, informer.handlerMetrics)
			fast, slow, none := &eventRecorder{}, &eventRecorder{}, &eventRecorder{}
			_, err := informer.AddEventHandlerWithResyncPeriod(fast, time.Second)
			require.NoError(t, err)
			_, err = informer.AddEventHandlerWithResyncPeriod(slow, 3*time.Second)
			require.NoError(t, err)
			_, err = informer.AddEventHandlerWithResyncPeriod(none, 0)
			require.NoError(t, err)
			runInformer(t, informer)
			waitUntilSynced(t, informer.HasSyncedChecker())
			// The Reflector's resync timer (the check period, 1 s) must be
			// waiting before the step, not merely some timer.
			require.Eventually(t, func() bool { return fakeClock.timersCreated(time.Second) == 1 }, waitTimeout, time.Millisecond)

			fakeClock.Step(time.Second)
			got := fast.waitN(t, 2)
			assert.Equal(t, "update ns/a@1 -> ns/a@1", got[1])
			// A later watch event reaches all three, which shows the resync
			// has been fully processed.
			srv.Create("z")
			slow.waitN(t, 2)
			none.waitN(t, 2)
			assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/z@2 initial=false"}, slow.get())
			assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/z@2 initial=false"}, none.get())
		})
	}
}

// TestSharedInformerBlockedHandlerBlocksNothingElse registers a handler that
// blocks forever in its first notification. The informer must go on
// updating its cache, delivering to the other handlers (every event, in
// order) and serving new handlers; only the blocked registration stays
// unsynced, its notifications buffered.
func TestSharedInformerBlockedHandlerBlocksNothingElse(t *testing.T) {
	const updates = 300
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a")
			informer := newPodInformer(t, srv, q.useDeltaFIFO, 0)
			release := make(chan struct{})
			blockedCalls := 0
			blocked := ResourceEventHandlerFuncs{
				AddFunc:    func(interface{}) { blockedCalls++; <-release },
				UpdateFunc: func(_, _ interface{}) { blockedCalls++ },
			}
			blockedReg, err := informer.AddEventHandler(blocked)
			require.NoError(t, err)
			rec := &eventRecorder{}
			_, err = informer.AddEventHandler(rec)
			require.NoError(t, err)
			runInformer(t, informer)
			t.Cleanup(func() { close(release) }) // runs before the informer is stopped

			waitUntilSynced(t, informer.HasSyncedChecker())
			waitForNextWatch(t, srv)
			want := []string{"add ns/a@1 initial=true"}
			for i := 0; i < updates; i++ {
				srv.Update("a")
				want = append(want, fmt.Sprintf("update ns/a@%d -> ns/a@%d", i+1, i+2))
			}
			srv.Create("b")
			want = append(want, fmt.Sprintf("add ns/b@%d initial=false", updates+2))

			got := rec.waitN(t, len(want))
			if q.useDeltaFIFO {
				assert.Equal(t, perObject(want), perObject(got))
			} else {
				assert.Equal(t, want, got)
			}
			assert.Equal(t, []string{fmt.Sprintf("ns/a@%d", updates+1), fmt.Sprintf("ns/b@%d", updates+2)}, describedStore(informer.GetStore()))

			late := &eventRecorder{}
			lateReg, err := informer.AddEventHandler(late)
			require.NoError(t, err)
			waitUntilSynced(t, lateReg.HasSyncedChecker())
			late.waitN(t, 2)

			assert.False(t, blockedReg.HasSynced(), "still in its initial add")
			buffered := blockedReg.(*handlerRegistration).listener.Buffered()
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
			srv := fakeapi.NewServer(false)
			srv.Create("a")
			informer := newPodInformer(t, srv, false, 0)
			kept := &eventRecorder{}
			_, err := informer.AddEventHandler(kept)
			require.NoError(t, err)
			reg, err := informer.AddEventHandler(&eventRecorder{})
			require.NoError(t, err)
			freed := weak.Make(reg.(*handlerRegistration).listener)
			if tc.running {
				runInformer(t, informer)
				waitUntilSynced(t, reg.HasSyncedChecker())
			}
			require.NoError(t, ShutDownEventHandler(informer, reg))
			reg = nil
			require.Eventually(t, func() bool {
				runtime.GC()
				return freed.Value() == nil
			}, waitTimeout, 10*time.Millisecond, "the removed listener is still reachable")
			assert.Equal(t, 1, informer.processor.ListenerCount())
			if tc.running {
				srv.Create("b")
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
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			t.Setenv(mutationDetectorEnv, "true")
			ignore := goleak.IgnoreCurrent()
			srv := fakeapi.NewServer(false)
			srv.Create("a")
			informer := newPodInformer(t, srv, q.useDeltaFIFO, time.Second)
			early := &eventRecorder{}
			_, err := informer.AddEventHandlerWithResyncPeriod(early, 2*time.Second)
			require.NoError(t, err)
			removed, err := informer.AddEventHandler(&eventRecorder{})
			require.NoError(t, err)

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); informer.RunWithContext(ctx) }()
			waitUntilSynced(t, informer.HasSyncedChecker())
			waitForNextWatch(t, srv)
			late := &eventRecorder{}
			_, err = informer.AddEventHandler(late)
			require.NoError(t, err)
			require.NoError(t, informer.RemoveEventHandler(removed))
			srv.Create("b")
			srv.Expire()
			srv.Create("c")
			late.waitN(t, 3)

			cancel()
			select {
			case <-done:
			case <-time.After(waitTimeout):
				t.Fatal("Run did not return")
			}
			// The Reflector has stopped its watch, so the test server's
			// watch goroutines end too: nothing may be left.
			goleak.VerifyNone(t, ignore)
		})
	}
}

// firstWatchRefusedListWatch serves srv, but its first watch is refused
// (fakeapi.Server.FailWatches fails every watch until it is reset, which a
// test cannot time against the Reflector's retry).
type firstWatchRefusedListWatch struct {
	srv     *fakeapi.Server
	mu      sync.Mutex
	refused bool
}

func (lw *firstWatchRefusedListWatch) List(options metav1.ListOptions) (kruntime.Object, error) {
	return lw.srv.List(options)
}

func (lw *firstWatchRefusedListWatch) Watch(options metav1.ListOptions) (watch.Interface, error) {
	lw.mu.Lock()
	first := !lw.refused
	lw.refused = true
	lw.mu.Unlock()
	if first {
		return nil, fmt.Errorf("dial tcp 127.0.0.1:6443: %w", syscall.ECONNREFUSED)
	}
	return lw.srv.Watch(options)
}

func (*firstWatchRefusedListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// TestSharedInformerWatchErrorHandlerSeesEveryFailure checks, through the
// informer's SetWatchErrorHandler, that the handler is told about a refused
// watch and a 410 (which client-go only logs at V(4)), and that the
// informer recovers from both: the refused watch is retried without a
// relist, the 410 relists.
func TestSharedInformerWatchErrorHandlerSeesEveryFailure(t *testing.T) {
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	srv.Create("a")
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
	rec := &eventRecorder{}
	_, err := informer.AddEventHandler(rec)
	require.NoError(t, err)
	runInformer(t, informer)
	waitUntilSynced(t, informer.HasSyncedChecker())

	// The refused watch: reported, then retried after the backoff.
	require.Eventually(t, func() bool { return errCount() == 1 && clk.HasWaiters() }, waitTimeout, eventuallyTick)
	clk.Step(time.Minute)
	waitForNextWatch(t, srv)
	lists, _ := requestCounts(srv)
	assert.Equal(t, 1, lists, "a refused watch is retried without a relist")

	// The 410: reported, then a relist after the backoff.
	srv.Expire()
	require.Eventually(t, func() bool { return errCount() == 2 && clk.HasWaiters() }, waitTimeout, eventuallyTick)
	srv.Create("b")
	clk.Step(time.Minute)
	rec.waitN(t, 2)
	lists, _ = requestCounts(srv)
	assert.Equal(t, 2, lists)

	mu.Lock()
	defer mu.Unlock()
	assert.ErrorIs(t, errs[0], syscall.ECONNREFUSED)
	assert.True(t, apierrors.IsResourceExpired(errs[1]), "want a 410, got %v", errs[1])
}

// TestTransformPrepareRunsBeforeTheTransformOnly: TransformPrepare sees
// every object before the transform, which gets what it returns; without a
// transform it is never called.
func TestTransformPrepareRunsBeforeTheTransformOnly(t *testing.T) {
	for _, withTransform := range []bool{true, false} {
		t.Run(fmt.Sprintf("transform=%v", withTransform), func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a") // 1
			srv.Create("b") // 2
			t.Cleanup(srv.StopWatches)
			informer := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, SharedIndexInformerOptions{})
			var prepared atomic.Int64
			if withTransform {
				require.NoError(t, informer.SetTransform(func(obj interface{}) (interface{}, error) {
					pod := obj.(*v1.Pod)
					if pod.Labels["prepared"] != "yes" {
						return nil, fmt.Errorf("%s was not prepared", pod.Name)
					}
					return pod, nil
				}))
			}
			require.NoError(t, ConfigureInformer(informer, func(o *SharedIndexInformerOptions) {
				o.TransformPrepare = func(obj interface{}) interface{} {
					prepared.Add(1)
					pod := obj.(*v1.Pod).DeepCopy()
					pod.Labels = map[string]string{"prepared": "yes"}
					return pod
				}
			}))
			runInformer(t, informer)
			waitUntilSynced(t, informer.HasSyncedChecker())
			assert.Equal(t, []string{"ns/a@1", "ns/b@2"}, describedStore(informer.GetStore()))
			for _, obj := range informer.GetStore().List() {
				assert.Equal(t, withTransform, obj.(*v1.Pod).Labels["prepared"] == "yes")
			}
			if withTransform {
				assert.EqualValues(t, 2, prepared.Load())
			} else {
				assert.Zero(t, prepared.Load())
			}
		})
	}
}

// TestTransformCheckDropsARefusedObjectAlone: an object the transform check
// refuses is dropped alone. The initial list and a relist are applied
// without it (the informer syncs), it is counted, and its deletion still
// reaches the handlers, as a DeletedFinalStateUnknown without object.
func TestTransformCheckDropsARefusedObjectAlone(t *testing.T) {
	modes := []struct {
		name string
		opts SharedIndexInformerOptions
	}{
		{"RealFIFO", SharedIndexInformerOptions{}},
		{"RealFIFO page by page", SharedIndexInformerOptions{RelistPageByPage: true}},
		{"DeltaFIFO", SharedIndexInformerOptions{UseDeltaFIFO: true}},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a")   // 1
			srv.Create("bad") // 2
			srv.Create("b")   // 3
			t.Cleanup(srv.StopWatches)
			srv.PageSize(1, true)
			informer := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, mode.opts).(*sharedIndexInformer)
			require.NoError(t, informer.SetTransform(func(obj interface{}) (interface{}, error) { return obj, nil }))
			require.NoError(t, ConfigureInformer(informer, func(o *SharedIndexInformerOptions) {
				o.TransformCheck = func(obj interface{}) error {
					if obj.(*v1.Pod).Name == "bad" {
						return errors.New("unmarked")
					}
					return nil
				}
			}))
			rec := &eventRecorder{}
			reg, err := informer.AddEventHandler(rec)
			require.NoError(t, err)
			runInformer(t, informer)
			waitUntilSynced(t, informer.HasSyncedChecker(), reg.HasSyncedChecker())
			assert.Equal(t, []string{"ns/a@1", "ns/b@3"}, describedStore(informer.GetStore()))
			assert.ElementsMatch(t, []string{"add ns/a@1 initial=true", "add ns/b@3 initial=true"}, rec.waitN(t, 2))
			status, ok := GetInformerStatus(informer)
			require.True(t, ok)
			assert.EqualValues(t, 1, status.TransformRefused)

			waitForNextWatch(t, srv)
			srv.UpdateMissed("a") // 4
			srv.Expire()
			// Page by page, the store shows a@4 and b@3 as soon as the first page is
			// applied: the relist is over once the refused object is counted too.
			require.Eventually(t, func() bool {
				status, _ = GetInformerStatus(informer)
				return status.TransformRefused == 2
			}, waitTimeout, time.Millisecond, "the relist counts the refused object")
			require.Eventually(t, func() bool {
				return assert.ObjectsAreEqual([]string{"ns/a@4", "ns/b@3"}, describedStore(informer.GetStore()))
			}, waitTimeout, time.Millisecond, "the relist is applied without the refused object")

			waitForNextWatch(t, srv)
			srv.Delete("bad") // 5
			srv.Delete("b")   // 6
			require.Eventually(t, func() bool {
				return assert.ObjectsAreEqual([]string{"ns/a@4"}, describedStore(informer.GetStore()))
			}, waitTimeout, time.Millisecond, "the deletions are applied")
			// The store changes before the handler hears of it: wait for the
			// last notification, then check the one before it.
			require.Eventually(t, func() bool {
				return slices.Contains(rec.get(), "delete ns/b@6")
			}, waitTimeout, time.Millisecond, "the handler hears of the deletion of b")
			if !mode.opts.UseDeltaFIFO {
				// A DeltaFIFO drops the deletion of an object it never held.
				assert.Contains(t, rec.get(), "delete tombstone(ns/bad)")
			}
		})
	}
}
