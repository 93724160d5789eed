package cache

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// panickyHandler panics on the add of the pod called name.
type panickyHandler struct {
	name string
}

func (h panickyHandler) OnAdd(obj interface{}, _ bool) {
	if obj.(*v1.Pod).Name == h.name {
		panic("panickyHandler: " + h.name)
	}
}
func (panickyHandler) OnUpdate(_, _ interface{}) {}
func (panickyHandler) OnDelete(interface{})      {}

// blockingHandler blocks in the non-initial add of the pod called name until
// release is closed; entered is closed when it starts blocking.
type blockingHandler struct {
	name    string
	entered chan struct{}
	release chan struct{}
}

func (h *blockingHandler) OnAdd(obj interface{}, initial bool) {
	if !initial && obj.(*v1.Pod).Name == h.name {
		close(h.entered)
		<-h.release
	}
}
func (*blockingHandler) OnUpdate(_, _ interface{}) {}
func (*blockingHandler) OnDelete(interface{})      {}

// recordingHistogram records observations.
type recordingHistogram struct {
	mu  sync.Mutex
	obs []float64
}

func (h *recordingHistogram) Observe(v float64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.obs = append(h.obs, v)
}

func (h *recordingHistogram) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.obs)
}

// recordingHandlerMetrics hands out one recordingHistogram per handler name.
type recordingHandlerMetrics struct {
	mu sync.Mutex
	h  map[string]*recordingHistogram
}

func (m *recordingHandlerMetrics) NewHandlerLatencyMetric(name string) HistogramMetric {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h == nil {
		m.h = map[string]*recordingHistogram{}
	}
	if m.h[name] == nil {
		m.h[name] = &recordingHistogram{}
	}
	return m.h[name]
}

func (m *recordingHandlerMetrics) get(name string) *recordingHistogram {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.h[name]
}

// TestInformerStatusCountsAScriptedRun drives an informer through an initial
// list, a watch that delivers events and closes (a restart from the last
// resource version), a watch that ends with 410 (a relist for reason
// "expired") and a final idle watch, with a panicking and a blocking handler,
// and checks every counter of GetInformerStatus.
func TestInformerStatusCountsAScriptedRun(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			lw := fakeapi.New().WithoutWatchList().
				ListAnswers(
					fakeapi.ListAnswer{Object: newPodList("10", "", newPod("a", "5"), newPod("b", "6"))},
					fakeapi.ListAnswer{Object: newPodList("20", "", newPod("a", "12"), newPod("c", "11"))},
				).
				WatchAnswers(fakeapi.WatchAnswer{Hold: true}, fakeapi.WatchAnswer{Hold: true})
			t.Cleanup(func() {
				for _, w := range lw.Watches() {
					w.Close()
				}
			})
			// nthWatch waits for the i-th watch the informer opens.
			nthWatch := func(i int) *fakeapi.Watch {
				requireEventually(t, func() bool { return lw.NthWatch(i) != nil }, "watch %d not opened", i)
				return lw.NthWatch(i)
			}
			informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{
				UseDeltaFIFO: q.useDeltaFIFO,
				Identifier:   (*InformerName)(nil).WithResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}),
			})
			var metrics recordingHandlerMetrics
			require.NoError(t, ConfigureInformer(informer, func(o *SharedIndexInformerOptions) { o.HandlerMetricsProvider = &metrics }))
			rec := &eventRecorder{}
			_, err := informer.AddEventHandler(rec)
			require.NoError(t, err)
			_, err = informer.AddEventHandler(panickyHandler{name: "b"})
			require.NoError(t, err)
			blocking := &blockingHandler{name: "c", entered: make(chan struct{}), release: make(chan struct{})}
			_, err = informer.AddEventHandler(blocking)
			require.NoError(t, err)

			before, ok := GetInformerStatus(informer)
			require.True(t, ok)
			assert.False(t, before.Started)
			assert.Equal(t, 0, before.QueueDepth)
			assert.Equal(t, map[RelistReason]uint64{RelistInitial: 0, RelistExpired: 0, RelistWatchError: 0, RelistShortWatch: 0, RelistListError: 0, RelistStreamFallback: 0}, before.Lists)

			runInformer(t, informer)
			t.Cleanup(func() {
				select {
				case <-blocking.release:
				default:
					close(blocking.release)
				}
			})
			waitUntilSynced(t, informer.HasSyncedChecker())
			w1 := nthWatch(0)

			// Watch 1: an add (blocks the blocking handler) and an update,
			// a bookmark, then a normal close: the watch is restarted.
			w1.Send(fakeapi.Added(newPod("c", "11")))
			w1.Send(fakeapi.Modified(newPod("a", "12")))
			w1.Send(fakeapi.Bookmark(newPod("", "13")))
			select {
			case <-blocking.entered:
			case <-time.After(waitTimeout):
				t.Fatal("the blocking handler was not called")
			}
			rec.waitN(t, 4) // 2 initial adds, add c, update a
			mid, _ := GetInformerStatus(informer)
			assert.False(t, mid.LastWatchEvent.IsZero(), "no watch event time recorded")
			require.Len(t, mid.Handlers, 3)
			// The blocking handler is in its add of c with the update of a behind it.
			assert.Equal(t, 2, mid.Handlers[2].Pending)
			w1.Close()
			w2 := nthWatch(1)

			// Watch 2: 410 Expired: the informer relists (b is gone).
			w2.Send(fakeapi.Error(apierrors.NewResourceExpired("too old resource version: 13 (15)").ErrStatus))
			nthWatch(2) // beyond the script: open and idle
			require.Eventually(t, func() bool {
				return informer.LastSyncResourceVersion() == "20" && len(informer.GetStore().List()) == 2
			}, waitTimeout, 5*time.Millisecond)
			close(blocking.release)
			require.Eventually(t, func() bool {
				st, _ := GetInformerStatus(informer)
				for _, h := range st.Handlers {
					if h.Pending != 0 {
						return false
					}
				}
				return true
			}, waitTimeout, 5*time.Millisecond)

			st, _ := GetInformerStatus(informer)
			assert.Equal(t, "*v1.Pod", st.Type)
			assert.Equal(t, schema.GroupVersionResource{Version: "v1", Resource: "pods"}, st.Resource)
			assert.True(t, st.Started)
			assert.False(t, st.Stopped)
			assert.True(t, st.Synced)
			assert.Equal(t, "20", st.LastSyncResourceVersion)
			assert.Equal(t, 2, st.StoreSize)
			assert.Equal(t, 0, st.QueueDepth)
			assert.Equal(t, map[RelistReason]uint64{RelistInitial: 1, RelistExpired: 1, RelistWatchError: 0, RelistShortWatch: 0, RelistListError: 0, RelistStreamFallback: 0}, st.Lists)
			assert.Equal(t, uint64(1), st.WatchRestarts)
			// Either queue: the first list's two objects, add c, update
			// a, the relist's two objects and its deletion of b. The
			// RealFIFO also counts the bookmark.
			wantDeltas := uint64(2 + 2 + 3 + 1)
			if q.useDeltaFIFO {
				wantDeltas = 2 + 2 + 3
			}
			assert.Equal(t, wantDeltas, st.DeltasProcessed)
			require.Error(t, st.LastError)
			assert.True(t, apierrors.IsResourceExpired(st.LastError), "last error: %v", st.LastError)
			assert.True(t, st.LastList.After(st.LastErrorTime) || st.LastList.Equal(st.LastErrorTime))
			assert.Equal(t, int64(1), st.HandlerPanics)
			names := []string{st.Handlers[0].Name, st.Handlers[1].Name, st.Handlers[2].Name}
			assert.Equal(t, []string{
				"github.com/kinformer/kinformer/cache.eventRecorder",
				"github.com/kinformer/kinformer/cache.panickyHandler",
				"github.com/kinformer/kinformer/cache.blockingHandler",
			}, names)
			assert.Equal(t, []int64{0, 1, 0}, []int64{st.Handlers[0].Panics, st.Handlers[1].Panics, st.Handlers[2].Panics})
			for _, h := range st.Handlers {
				assert.True(t, h.Synced, h.Name)
			}
			// Every notification of the recorder was timed.
			assert.Equal(t, len(rec.get()), metrics.get(st.Handlers[0].Name).count())
		})
	}
}

// TestHandlerMetricsProviderOption: SharedIndexInformerOptions.HandlerMetricsProvider
// times the handlers from the start, as ConfigureInformer does later.
func TestHandlerMetricsProviderOption(t *testing.T) {
	srv := fakeapi.NewServer(false)
	srv.CreateMissed("a")
	srv.CreateMissed("b")
	var metrics recordingHandlerMetrics
	informer := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, SharedIndexInformerOptions{HandlerMetricsProvider: &metrics})
	rec := &eventRecorder{}
	_, err := informer.AddEventHandler(rec)
	require.NoError(t, err)
	runInformer(t, informer)
	rec.waitN(t, 2)
	st, ok := GetInformerStatus(informer)
	require.True(t, ok)
	require.Len(t, st.Handlers, 1)
	require.Eventually(t, func() bool {
		h := metrics.get(st.Handlers[0].Name)
		return h != nil && h.count() == 2
	}, waitTimeout, 5*time.Millisecond)
}
