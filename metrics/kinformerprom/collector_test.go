package kinformerprom_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/metrics/kinformerprom"
)

const waitTimeout = 20 * time.Second

func newPod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

// countingHandler counts the notifications it handled.
type countingHandler struct {
	mu sync.Mutex
	n  int
}

func (h *countingHandler) OnAdd(interface{}, bool)   { h.inc() }
func (h *countingHandler) OnUpdate(_, _ interface{}) { h.inc() }
func (h *countingHandler) OnDelete(interface{})      { h.inc() }
func (h *countingHandler) inc() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
}
func (h *countingHandler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// panickyHandler panics on the add of pod "b".
type panickyHandler struct{}

func (panickyHandler) OnAdd(obj interface{}, _ bool) {
	if obj.(*corev1.Pod).Name == "b" {
		panic("panickyHandler")
	}
}
func (panickyHandler) OnUpdate(_, _ interface{}) {}
func (panickyHandler) OnDelete(interface{})      {}

// TestCollectorScrapeAfterScriptedRun runs a factory's pod informer over
// the fake clientset (two pods listed, one created while watching) with a
// counting and a panicking handler, then scrapes the registry and compares
// every per-informer and per-handler series.
func TestCollectorScrapeAfterScriptedRun(t *testing.T) {
	client := fake.NewClientset([]runtime.Object{newPod("a"), newPod("b")}...)
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Core().V1().Pods().Informer()
	counting := &countingHandler{}
	_, err := informer.AddEventHandler(counting)
	require.NoError(t, err)
	_, err = informer.AddEventHandler(panickyHandler{})
	require.NoError(t, err)

	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	col := kinformerprom.NewCollector(kinformerprom.WithClock(clocktesting.NewFakePassiveClock(now)))
	require.NoError(t, col.Add(factory))
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(col))

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer func() {
		cancel()
		factory.Shutdown()
	}()
	factory.StartWithContext(ctx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
	require.Eventually(t, func() bool { return counting.count() == 2 }, waitTimeout, 5*time.Millisecond)
	// Wait for the watch before creating, so that the add is a watch event.
	require.Eventually(t, func() bool {
		for _, a := range client.Actions() {
			if a.GetVerb() == "watch" {
				return true
			}
		}
		return false
	}, waitTimeout, 5*time.Millisecond)
	_, err = client.CoreV1().Pods("ns").Create(ctx, newPod("c"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		st, _ := cache.GetInformerStatus(informer)
		return counting.count() == 3 && st.Handlers[1].Pending == 0
	}, waitTimeout, 5*time.Millisecond)

	const labels = `factory="",group="",informer="",resource="pods",type="*v1.Pod",version="v1"`
	// With the extra label in its sorted place.
	const pre, post = `factory="",group="",informer=""`, `resource="pods",type="*v1.Pod",version="v1"`
	const counter = "github.com/kinformer/kinformer/metrics/kinformerprom_test.countingHandler"
	const panicky = "github.com/kinformer/kinformer/metrics/kinformerprom_test.panickyHandler"
	want := fmt.Sprintf(`
# HELP kinformer_informer_synced 1 when the informer has synced (its initial list is in the cache), else 0.
# TYPE kinformer_informer_synced gauge
kinformer_informer_synced{%[1]s} 1
# HELP kinformer_informer_store_objects Objects in the informer's cache.
# TYPE kinformer_informer_store_objects gauge
kinformer_informer_store_objects{%[1]s} 3
# HELP kinformer_informer_queue_depth Entries waiting in the queue between the Reflector and the processing loop.
# TYPE kinformer_informer_queue_depth gauge
kinformer_informer_queue_depth{%[1]s} 0
# HELP kinformer_informer_deltas_processed_total Deltas the processing loop applied to the cache.
# TYPE kinformer_informer_deltas_processed_total counter
kinformer_informer_deltas_processed_total{%[1]s} 3
# HELP kinformer_informer_lists_total Lists (paged or streaming) by reason: initial, expired (410), watch_error, short_watch, list_error, stream_fallback.
# TYPE kinformer_informer_lists_total counter
kinformer_informer_lists_total{%[4]s,reason="expired",%[5]s} 0
kinformer_informer_lists_total{%[4]s,reason="initial",%[5]s} 1
kinformer_informer_lists_total{%[4]s,reason="list_error",%[5]s} 0
kinformer_informer_lists_total{%[4]s,reason="short_watch",%[5]s} 0
kinformer_informer_lists_total{%[4]s,reason="stream_fallback",%[5]s} 0
kinformer_informer_lists_total{%[4]s,reason="watch_error",%[5]s} 0
# HELP kinformer_informer_watch_restarts_total Watches reopened from the last resourceVersion without a relist.
# TYPE kinformer_informer_watch_restarts_total counter
kinformer_informer_watch_restarts_total{%[1]s} 0
# HELP kinformer_informer_bad_data_total Objects and events from the server the Reflector could not store (logged and skipped).
# TYPE kinformer_informer_bad_data_total counter
kinformer_informer_bad_data_total{%[1]s} 0
# HELP kinformer_informer_handler_pending_notifications Notifications queued for a handler and not yet handled.
# TYPE kinformer_informer_handler_pending_notifications gauge
kinformer_informer_handler_pending_notifications{factory="",group="",handler="%[2]s",informer="",%[5]s} 0
kinformer_informer_handler_pending_notifications{factory="",group="",handler="%[3]s",informer="",%[5]s} 0
# HELP kinformer_informer_handler_panics_total Panics recovered from a handler.
# TYPE kinformer_informer_handler_panics_total counter
kinformer_informer_handler_panics_total{factory="",group="",handler="%[2]s",informer="",%[5]s} 0
kinformer_informer_handler_panics_total{factory="",group="",handler="%[3]s",informer="",%[5]s} 1
`, labels, counter, panicky, pre, post)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want),
		"kinformer_informer_synced", "kinformer_informer_store_objects", "kinformer_informer_queue_depth",
		"kinformer_informer_deltas_processed_total", "kinformer_informer_lists_total", "kinformer_informer_watch_restarts_total",
		"kinformer_informer_bad_data_total", "kinformer_informer_handler_pending_notifications", "kinformer_informer_handler_panics_total"))

	families, err := reg.Gather()
	require.NoError(t, err)
	st, _ := cache.GetInformerStatus(informer)
	require.False(t, st.LastWatchEvent.IsZero())
	found := map[string]bool{}
	for _, f := range families {
		switch f.GetName() {
		case "kinformer_informer_seconds_since_last_watch_event":
			require.Len(t, f.GetMetric(), 1)
			assert.Equal(t, now.Sub(st.LastWatchEvent).Seconds(), f.GetMetric()[0].GetGauge().GetValue())
			found[f.GetName()] = true
		case "kinformer_informer_handler_latency_seconds":
			counts := map[string]uint64{}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "handler" {
						counts[l.GetValue()] = m.GetHistogram().GetSampleCount()
					}
				}
			}
			// The panicking add of b is not timed.
			assert.Equal(t, map[string]uint64{counter: 3, panicky: 2}, counts)
			found[f.GetName()] = true
		case "kinformer_informer_last_sync_resource_version":
			rv, err := strconv.ParseFloat(st.LastSyncResourceVersion, 64)
			require.NoError(t, err)
			require.Len(t, f.GetMetric(), 1)
			assert.Equal(t, rv, f.GetMetric()[0].GetGauge().GetValue())
			found[f.GetName()] = true
		}
	}
	assert.True(t, found["kinformer_informer_seconds_since_last_watch_event"])
	assert.True(t, found["kinformer_informer_handler_latency_seconds"])
	// The fake clientset numbers its resource versions.
	assert.True(t, found["kinformer_informer_last_sync_resource_version"], "RV %q", st.LastSyncResourceVersion)
}

func TestCollectorRejectsForeignSources(t *testing.T) {
	col := kinformerprom.NewCollector()
	assert.EqualError(t, col.Add(42), "kinformerprom: cannot collect metrics from a int: want a kinformer informer factory or a cache.SharedIndexInformer")
	_, err := kinformerprom.Register(prometheus.NewRegistry(), "factory")
	assert.Error(t, err)
}

// TestCollectorCountsStreamFallbacksAndSkippedEvents runs an informer over a
// server that refuses streaming lists and whose watch sends an event of the
// wrong type: the scrape shows the fallback to LIST under
// kinformer_informer_lists_total{reason="stream_fallback"} and the skipped
// event under kinformer_informer_bad_data_total.
func TestCollectorCountsStreamFallbacksAndSkippedEvents(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []corev1.Pod{*newPod("a")}}, nil
		},
		WatchFuncWithContext: func(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				return nil, errors.New("this server cannot stream lists")
			}
			w := watch.NewFakeWithChanSize(2, false)
			w.Add(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc", ResourceVersion: "2"}})
			c := newPod("c")
			c.ResourceVersion = "3"
			w.Add(c)
			return w, nil
		},
	}
	informer := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
	col := kinformerprom.NewCollector()
	require.NoError(t, col.Add(informer))
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(col))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	defer func() { cancel(); <-done }()
	require.Eventually(t, func() bool { return len(informer.GetStore().ListKeys()) == 2 }, waitTimeout, 5*time.Millisecond, "pod c not stored")

	const pre, post = `factory="",group="",informer=""`, `resource="",type="*v1.Pod",version=""`
	want := fmt.Sprintf(`
# HELP kinformer_informer_lists_total Lists (paged or streaming) by reason: initial, expired (410), watch_error, short_watch, list_error, stream_fallback.
# TYPE kinformer_informer_lists_total counter
kinformer_informer_lists_total{%[1]s,reason="expired",%[2]s} 0
kinformer_informer_lists_total{%[1]s,reason="initial",%[2]s} 1
kinformer_informer_lists_total{%[1]s,reason="list_error",%[2]s} 0
kinformer_informer_lists_total{%[1]s,reason="short_watch",%[2]s} 0
kinformer_informer_lists_total{%[1]s,reason="stream_fallback",%[2]s} 1
kinformer_informer_lists_total{%[1]s,reason="watch_error",%[2]s} 0
# HELP kinformer_informer_bad_data_total Objects and events from the server the Reflector could not store (logged and skipped).
# TYPE kinformer_informer_bad_data_total counter
kinformer_informer_bad_data_total{%[1]s,%[2]s} 1
`, pre, post)
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "kinformer_informer_lists_total", "kinformer_informer_bad_data_total"))
}

// TestCollectorCountsSnapshotsSkippedForSensitiveObjects: a factory with a
// snapshot directory and no key writes no snapshot of its Secrets, and the
// collector counts the skip under kinformer_informer_snapshots_skipped_total.
func TestCollectorCountsSnapshotsSkippedForSensitiveObjects(t *testing.T) {
	client := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "token"}})
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithSnapshotDir(t.TempDir()))
	factory.Core().V1().Secrets().Informer()
	reg := prometheus.NewPedanticRegistry()
	_, err := kinformerprom.Register(reg, factory)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	factory.StartWithContext(ctx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
	cancel()
	factory.Shutdown()

	const want = `
# HELP kinformer_informer_snapshots_skipped_total Snapshot files not written because the informer's objects are sensitive (Secrets, or marked so) and no snapshot encryption key is set.
# TYPE kinformer_informer_snapshots_skipped_total counter
kinformer_informer_snapshots_skipped_total{factory="",group="",informer="",resource="secrets",type="*v1.Secret",version="v1"} 1
`
	assert.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "kinformer_informer_snapshots_skipped_total"))
}
