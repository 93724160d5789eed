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
)

// infRunInformer starts informer and registers cleanup that stops it and
// waits for Run to return.
func infRunInformer(t *testing.T, informer SharedInformer) {
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
		case <-time.After(infTimeout):
			t.Error("informer did not stop")
		}
	})
}

func infNewInformer(t *testing.T, srv *infServer, useDeltaFIFO bool, resync time.Duration) *sharedIndexInformer {
	t.Helper()
	t.Cleanup(srv.stopWatches)
	return NewSharedIndexInformerWithOptions(srv.lw(), &v1.Pod{}, SharedIndexInformerOptions{
		ResyncPeriod: resync,
		Indexers:     Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
		UseDeltaFIFO: useDeltaFIFO,
	}).(*sharedIndexInformer)
}

func infWaitSynced(t *testing.T, checkers ...DoneChecker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), infTimeout)
	defer cancel()
	require.True(t, WaitFor(ctx, "", checkers...), "not synced")
}

func TestSharedInformerWatchEventSequence(t *testing.T) {
	for _, q := range infQueueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := newInfServer()
			srv.create("a")
			srv.create("b")
			informer := infNewInformer(t, srv, q.useDeltaFIFO, 0)
			rec := &infRecorder{}
			reg, err := informer.AddEventHandler(rec)
			require.NoError(t, err)
			assert.False(t, reg.HasSynced())
			infRunInformer(t, informer)
			infWaitSynced(t, informer.HasSyncedChecker(), reg.HasSyncedChecker())
			assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/b@2 initial=true"}, rec.get())

			srv.create("c")
			srv.update("a")
			srv.remove("b")
			srv.update("c")
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
				assert.Equal(t, infPerObject(want), infPerObject(got))
			} else {
				assert.Equal(t, want, got)
			}
			assert.Equal(t, []string{"ns/a@4", "ns/c@6"}, infStoreContents(informer.GetStore()))
			byNS, err := informer.GetIndexer().ByIndex(NamespaceIndex, "ns")
			require.NoError(t, err)
			assert.Len(t, byNS, 2)
			require.Eventually(t, func() bool { return informer.LastSyncResourceVersion() == "6" }, infTimeout, time.Millisecond)
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
	for _, q := range infQueueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := newInfServer()
			srv.create("a")
			srv.create("b")
			srv.create("c")
			informer := infNewInformer(t, srv, q.useDeltaFIFO, 0)
			rec := &infRecorder{}
			reg, err := informer.AddEventHandler(rec)
			require.NoError(t, err)
			infRunInformer(t, informer)
			infWaitSynced(t, reg.HasSyncedChecker())
			require.Equal(t, 3, len(rec.get()))

			srv.removeSilently("b")
			srv.updateSilently("c")
			srv.createSilently("d")
			srv.expire()
			got := rec.waitN(t, 7)
			assert.Equal(t, expected[q.name], got[3:])
			assert.Equal(t, []string{"ns/a@1", "ns/c@5", "ns/d@6"}, infStoreContents(informer.GetStore()))
			lists, _ := srv.counts()
			assert.Equal(t, 2, lists)
		})
	}
}

func TestSharedInformerLateHandler(t *testing.T) {
	for _, q := range infQueueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := newInfServer()
			srv.create("a")
			srv.create("b")
			informer := infNewInformer(t, srv, q.useDeltaFIFO, 0)
			infRunInformer(t, informer)
			infWaitSynced(t, informer.HasSyncedChecker())

			release := make(chan struct{})
			rec := &infRecorder{onEvent: func(string, interface{}) { <-release }}
			reg, err := informer.AddEventHandler(rec)
			require.NoError(t, err)
			assert.False(t, reg.HasSynced(), "must not be synced before processing its initial list")
			srv.create("c")
			close(release)
			infWaitSynced(t, reg.HasSyncedChecker())
			got := rec.waitN(t, 3)
			assert.ElementsMatch(t, []string{"add ns/a@1 initial=true", "add ns/b@2 initial=true"}, got[:2])
			assert.Equal(t, "add ns/c@3 initial=false", got[2])
			assert.True(t, reg.HasSynced())
		})
	}
}

func TestSharedInformerHandlerBeforeSyncOnEmptyList(t *testing.T) {
	srv := newInfServer()
	informer := infNewInformer(t, srv, false, 0)
	reg, err := informer.AddEventHandler(&infRecorder{})
	require.NoError(t, err)
	infRunInformer(t, informer)
	infWaitSynced(t, informer.HasSyncedChecker(), reg.HasSyncedChecker())
}

func TestSharedInformerRemoveEventHandler(t *testing.T) {
	srv := newInfServer()
	informer := infNewInformer(t, srv, false, 0)
	kept, removed := &infRecorder{}, &infRecorder{}
	_, err := informer.AddEventHandler(kept)
	require.NoError(t, err)
	regRemoved, err := informer.AddEventHandler(removed)
	require.NoError(t, err)
	infRunInformer(t, informer)
	infWaitSynced(t, informer.HasSyncedChecker())

	srv.create("a")
	removed.waitN(t, 1)
	require.NoError(t, ShutDownEventHandler(informer, regRemoved))
	assert.False(t, informer.processor.isRegistered(regRemoved))
	assert.Equal(t, 1, informer.processor.listenerCount())
	srv.create("b")
	kept.waitN(t, 2)
	assert.Equal(t, []string{"add ns/a@1 initial=false"}, removed.get(), "no delivery after removal")

	// Idempotent, and harmless for registrations of another informer.
	require.NoError(t, informer.RemoveEventHandler(regRemoved))
	other := infNewInformer(t, newInfServer(), false, 0)
	require.NoError(t, other.RemoveEventHandler(regRemoved))
	// A foreign registration type is an error.
	require.Error(t, informer.RemoveEventHandler(infForeignRegistration{}))
	require.Error(t, ShutDownEventHandler(informer, infForeignRegistration{}))
}

type infForeignRegistration struct{}

func (infForeignRegistration) HasSynced() bool               { return false }
func (infForeignRegistration) HasSyncedChecker() DoneChecker { return nil }

func TestShutDownEventHandlerWaitsForRunningHandler(t *testing.T) {
	srv := newInfServer()
	informer := infNewInformer(t, srv, false, 0)
	started, release := make(chan struct{}), make(chan struct{})
	var finished bool
	reg, err := informer.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(interface{}) {
		close(started)
		<-release
		finished = true
	}})
	require.NoError(t, err)
	infRunInformer(t, informer)
	srv.create("a")
	srv.create("b") // queued behind the blocked call, never delivered
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
	case <-time.After(infTimeout):
		t.Fatal("ShutDownEventHandler did not return")
	}
	assert.True(t, finished)
}

func TestShutDownEventHandlerLifecycles(t *testing.T) {
	t.Run("never started", func(t *testing.T) {
		informer := infNewInformer(t, newInfServer(), false, 0)
		reg, err := informer.AddEventHandler(&infRecorder{})
		require.NoError(t, err)
		require.NoError(t, ShutDownEventHandler(informer, reg))
	})
	t.Run("after informer stopped", func(t *testing.T) {
		informer := infNewInformer(t, newInfServer(), false, 0)
		reg, err := informer.AddEventHandler(&infRecorder{})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); informer.RunWithContext(ctx) }()
		infWaitSynced(t, reg.HasSyncedChecker())
		cancel()
		<-done
		require.NoError(t, ShutDownEventHandler(informer, reg))
	})
}

func TestSharedInformerHandlerPanic(t *testing.T) {
	for _, q := range infQueueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := newInfServer()
			srv.create("a")
			informer := infNewInformer(t, srv, q.useDeltaFIFO, 0)
			var buf infSyncBuffer
			logger := infBufferLogger(&buf)
			panicky := &infPanicky{}
			reg, err := informer.AddEventHandlerWithOptions(panicky, HandlerOptions{Logger: &logger})
			require.NoError(t, err)
			other := &infRecorder{}
			_, err = informer.AddEventHandler(other)
			require.NoError(t, err)
			infRunInformer(t, informer)
			// The initial add panicked, but counts as processed.
			infWaitSynced(t, reg.HasSyncedChecker())
			srv.create("b")
			srv.update("a")
			other.waitN(t, 3)
			require.Eventually(t, func() bool { return len(panicky.get()) == 2 }, infTimeout, time.Millisecond)
			assert.Equal(t, []string{"add ns/b@2 initial=false", "update ns/a@1 -> ns/a@3"}, panicky.get())
			assert.Equal(t, int64(1), informer.processor.panics.Load())
			assert.Contains(t, buf.String(), `"Observed a panic" panic="first add fails"`)
			assert.Contains(t, buf.String(), "cache.infPanicky")
			assert.False(t, informer.IsStopped())
		})
	}
}

// infPanicky panics on its first notification and records the others.
type infPanicky struct {
	infRecorder
	calls int
}

func (p *infPanicky) OnAdd(obj interface{}, initial bool) {
	p.calls++
	if p.calls == 1 {
		panic("first add fails")
	}
	p.infRecorder.OnAdd(obj, initial)
}

func TestSharedInformerNilHandler(t *testing.T) {
	informer := infNewInformer(t, newInfServer(), false, 0)
	_, err := informer.AddEventHandler(nil)
	require.Error(t, err)
	typed := NewTypedSharedIndexInformer[*v1.Pod](informer)
	_, err = typed.AddTypedEventHandler(nil)
	require.Error(t, err)
}

func TestSharedInformerTransform(t *testing.T) {
	for _, q := range infQueueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := newInfServer()
			srv.create("a")
			informer := infNewInformer(t, srv, q.useDeltaFIFO, 0)
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
			infRunInformer(t, informer)
			infWaitSynced(t, informer.HasSyncedChecker())
			srv.create("b")
			srv.update("a")
			require.Eventually(t, func() bool {
				seenMu.Lock()
				defer seenMu.Unlock()
				return len(seen) == 3
			}, infTimeout, time.Millisecond)
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
	srv := newInfServer()
	srv.listErr = errors.New("list refused")
	informer := infNewInformer(t, srv, false, 0)
	errs := make(chan error, 100)
	require.NoError(t, informer.SetWatchErrorHandler(func(r *Reflector, err error) {
		select {
		case errs <- err:
		default:
		}
	}))
	infRunInformer(t, informer)
	select {
	case err := <-errs:
		assert.ErrorContains(t, err, "list refused")
	case <-time.After(infTimeout):
		t.Fatal("watch error handler not called")
	}
	assert.False(t, informer.HasSynced())
}

func TestSharedInformerStop(t *testing.T) {
	srv := newInfServer()
	srv.create("a")
	informer := infNewInformer(t, srv, false, 0)
	regs := make([]ResourceEventHandlerRegistration, 3)
	for i := range regs {
		var err error
		regs[i], err = informer.AddEventHandler(&infRecorder{})
		require.NoError(t, err)
	}
	assert.False(t, informer.IsStopped())
	assert.Equal(t, "", informer.LastSyncResourceVersion())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); informer.Run(ctx.Done()) }()
	infWaitSynced(t, informer.HasSyncedChecker())
	late, err := informer.AddEventHandler(&infRecorder{})
	require.NoError(t, err)
	regs = append(regs, late)
	cancel()
	select {
	case <-done:
	case <-time.After(infTimeout):
		t.Fatal("Run did not return")
	}
	assert.True(t, informer.IsStopped())
	for _, reg := range regs {
		select {
		case <-reg.(*processorListener).ShutdownChan():
		default:
			t.Error("listener still running after the informer stopped")
		}
	}
	_, err = informer.AddEventHandler(&infRecorder{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was not added to shared informer because it has stopped already")
	require.Error(t, informer.AddIndexers(Indexers{"x": MetaNamespaceIndexFunc}))
	// Running again does nothing.
	informer.Run(make(chan struct{}))
}

func TestSharedInformerRunTwice(t *testing.T) {
	informer := infNewInformer(t, newInfServer(), false, 0)
	infRunInformer(t, informer)
	infWaitSynced(t, informer.HasSyncedChecker())
	returned := make(chan struct{})
	go func() { defer close(returned); informer.Run(make(chan struct{})) }()
	select {
	case <-returned:
	case <-time.After(infTimeout):
		t.Fatal("second Run did not return at once")
	}
}

func TestSharedInformerAddIndexersBeforeAndDuringRun(t *testing.T) {
	srv := newInfServer()
	srv.create("a")
	informer := infNewInformer(t, srv, false, 0)
	require.NoError(t, informer.AddIndexers(Indexers{"byName": func(obj interface{}) ([]string, error) {
		return []string{obj.(*v1.Pod).Name}, nil
	}}))
	infRunInformer(t, informer)
	infWaitSynced(t, informer.HasSyncedChecker())
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
			informer := infNewInformer(t, newInfServer(), false, tc.informer)
			if tc.afterStart {
				informer.startedLock.Lock()
				informer.started = true
				informer.startedLock.Unlock()
			}
			reg, err := informer.AddEventHandlerWithResyncPeriod(&infRecorder{}, tc.requested)
			require.NoError(t, err)
			l := reg.(*processorListener)
			assert.Equal(t, tc.wantEffective, l.resyncPeriod)
			assert.Equal(t, tc.wantCheck, informer.resyncCheckPeriod)
		})
	}
}

func TestSharedInformerPerHandlerResync(t *testing.T) {
	for _, q := range infQueueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := newInfServer()
			srv.create("a")
			informer := infNewInformer(t, srv, q.useDeltaFIFO, time.Second)
			fakeClock := newTimerRecordingClock()
			informer.clock = fakeClock
			informer.processor.clock = fakeClock
			fast, slow, none := &infRecorder{}, &infRecorder{}, &infRecorder{}
			_, err := informer.AddEventHandlerWithResyncPeriod(fast, time.Second)
			require.NoError(t, err)
			_, err = informer.AddEventHandlerWithResyncPeriod(slow, 3*time.Second)
			require.NoError(t, err)
			_, err = informer.AddEventHandlerWithResyncPeriod(none, 0)
			require.NoError(t, err)
			infRunInformer(t, informer)
			infWaitSynced(t, informer.HasSyncedChecker())
			// The Reflector's resync timer (the check period, 1 s) must be
			// waiting before the step, not merely some timer.
			require.Eventually(t, func() bool { return fakeClock.timersCreated(time.Second) == 1 }, infTimeout, time.Millisecond)

			fakeClock.Step(time.Second)
			got := fast.waitN(t, 2)
			assert.Equal(t, "update ns/a@1 -> ns/a@1", got[1])
			// A later watch event reaches all three, which shows the resync
			// has been fully processed.
			srv.create("z")
			slow.waitN(t, 2)
			none.waitN(t, 2)
			assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/z@2 initial=false"}, slow.get())
			assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/z@2 initial=false"}, none.get())
		})
	}
}
