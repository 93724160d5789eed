package informers_test

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/internal/bench"
	"github.com/kinformer/kinformer/internal/pbdecode"
)

// recordedEvent is one handler call: its kind and the object (the new one
// of an update).
type recordedEvent struct {
	kind string
	obj  any
}

// eventRecorder records an informer's handler calls in order.
type eventRecorder struct {
	mu     sync.Mutex
	events []recordedEvent
}

func (r *eventRecorder) add(kind string, obj any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, recordedEvent{kind, obj})
}

func (r *eventRecorder) recorded() []recordedEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recordedEvent(nil), r.events...)
}

// describe returns the events as kind and key, for messages.
func describe(events []recordedEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(e.obj)
		out[i] = e.kind + " " + key
	}
	return out
}

// startRecordedPodInformer starts a factory's pod informer over cs (with
// opts), records its events and waits for it to sync.
func startRecordedPodInformer(t *testing.T, srv *podServer, opts ...informers.SharedInformerOption) (cache.SharedIndexInformer, *eventRecorder) {
	t.Helper()
	factory := informers.NewSharedInformerFactoryWithOptions(srv.clientset(t, ""), 0, opts...)
	inf := factory.Core().V1().Pods().Informer()
	rec := &eventRecorder{}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { rec.add("add", obj) },
		UpdateFunc: func(_, obj any) { rec.add("update", obj) },
		DeleteFunc: func(obj any) { rec.add("delete", obj) },
	})
	require.NoError(t, err)
	startSynced(t, factory)
	return inf, rec
}

// TestFactoryDecodesProtobufWithTheGeneratedDecoders runs two pod informers
// over a real clientset against a server answering protobuf, one on the
// factory's default and one with WithAPIMachineryDecoding, through a LIST
// of benchmark pods (realistic objects: quantities, times, managed fields,
// owner references) and a WATCH of updates, additions and deletions. Both
// stores hold deeply equal objects and both handlers hear the same events
// with deeply equal objects. A pbdecode.Verification counts what the
// generated decoders decoded (and checks each object against apimachinery's
// decoding): the default informer decoded its LIST and every watch event's
// object with them (its LIST as it arrived), and the informer with the
// option none.
func TestFactoryDecodesProtobufWithTheGeneratedDecoders(t *testing.T) {
	list := bench.NewPodList(0, 40, "100")
	pods := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = &list.Items[i]
	}
	srv := newPodServer(t, false, false, "100", pods...)
	v, stop := pbdecode.StartVerification()
	defer stop()

	start := v.Decoded()
	apimachinery, apimachineryEvents := startRecordedPodInformer(t, srv, informers.WithAPIMachineryDecoding(&corev1.Pod{}))
	require.Equal(t, start, v.Decoded(), "the informer with WithAPIMachineryDecoding used the generated decoders for its LIST")
	generated, generatedEvents := startRecordedPodInformer(t, srv)
	// Its LIST counts twice: the list, decoded as it arrived, and the
	// envelope without items the REST client then decodes.
	require.Equal(t, start+2, v.Decoded(), "the default informer did not decode its LIST with the generated decoders")
	require.Len(t, generated.GetStore().List(), len(pods))

	require.Eventually(t, func() bool { return srv.openWatches() == 2 }, serverWaitTimeout, time.Millisecond)
	changed := bench.NewPod(3, "101")
	changed.Labels["v"] = "2"
	changed.Status.Phase = corev1.PodFailed
	sent := []watch.Event{
		{Type: watch.Modified, Object: changed},
		{Type: watch.Added, Object: bench.NewPod(1000, "102")},
		{Type: watch.Deleted, Object: bench.NewPod(7, "103")},
		{Type: watch.Added, Object: bench.NewPod(1001, "104")},
	}
	for _, ev := range sent {
		require.Equal(t, 2, srv.send(ev))
	}
	wantEvents := len(pods) + len(sent)
	require.Eventually(t, func() bool {
		return len(apimachineryEvents.recorded()) == wantEvents && len(generatedEvents.recorded()) == wantEvents
	}, serverWaitTimeout, time.Millisecond, "events: %d and %d of %d", len(apimachineryEvents.recorded()), len(generatedEvents.recorded()), wantEvents)
	require.Equal(t, start+2+int64(len(sent)), v.Decoded(),
		"the default informer decodes each event's object with the generated decoders, the other none")
	require.Empty(t, v.Differences())

	want, got := apimachineryEvents.recorded(), generatedEvents.recorded()
	require.Equal(t, describe(want), describe(got))
	for i := range want {
		require.Truef(t, reflect.DeepEqual(want[i].obj, got[i].obj), "event %d (%s) carries different objects", i, describe(want[i:i+1]))
	}

	wantKeys, gotKeys := apimachinery.GetStore().ListKeys(), generated.GetStore().ListKeys()
	require.ElementsMatch(t, wantKeys, gotKeys)
	require.Len(t, gotKeys, len(pods)+1)
	for _, key := range wantKeys {
		a, _, err := apimachinery.GetStore().GetByKey(key)
		require.NoError(t, err)
		g, _, err := generated.GetStore().GetByKey(key)
		require.NoError(t, err)
		require.Truef(t, reflect.DeepEqual(a, g), "%s: the stores hold different objects", key)
	}
	got3, _, err := generated.GetStore().GetByKey(fmt.Sprintf("%s/%s", changed.Namespace, changed.Name))
	require.NoError(t, err)
	require.Equal(t, corev1.PodFailed, got3.(*corev1.Pod).Status.Phase)
}

// TestProjectedInformersDecodeAlikeWithEitherDecoder runs two informers
// with WithProjection over a protobuf server, one also with
// WithAPIMachineryDecoding: the projected answers are decoded by the
// generated decoders for the first only, and both stores hold the same
// projected objects, through the LIST and a watch event.
func TestProjectedInformersDecodeAlikeWithEitherDecoder(t *testing.T) {
	srv := newPodServer(t, false, false, "10", fullPod("ns", "a", "5", "1"), fullPod("ns", "b", "6", "1"))
	v, stop := pbdecode.StartVerification()
	defer stop()

	start := v.Decoded()
	project := informers.WithProjection(&corev1.Pod{}, benchProjection)
	apimachinery, _ := startRecordedPodInformer(t, srv, project, informers.WithAPIMachineryDecoding(&corev1.Pod{}))
	require.Equal(t, start, v.Decoded(), "the informer with WithAPIMachineryDecoding used the generated decoders")
	generated, _ := startRecordedPodInformer(t, srv, project)
	require.Equal(t, start+1, v.Decoded(), "the default informer did not decode its projected LIST with the generated decoders")

	require.Eventually(t, func() bool { return srv.openWatches() == 2 }, serverWaitTimeout, time.Millisecond)
	require.Equal(t, 2, srv.send(watch.Event{Type: watch.Modified, Object: fullPod("ns", "a", "11", "2")}))
	require.Eventually(t, func() bool {
		for _, inf := range []cache.SharedIndexInformer{apimachinery, generated} {
			if obj, ok, _ := inf.GetStore().GetByKey("ns/a"); !ok || obj.(*corev1.Pod).ResourceVersion != "11" {
				return false
			}
		}
		return true
	}, serverWaitTimeout, time.Millisecond)
	require.Equal(t, start+2, v.Decoded())
	require.Empty(t, v.Differences())

	for _, key := range []string{"ns/a", "ns/b"} {
		a, _, err := apimachinery.GetStore().GetByKey(key)
		require.NoError(t, err)
		g, _, err := generated.GetStore().GetByKey(key)
		require.NoError(t, err)
		require.Truef(t, reflect.DeepEqual(a, g), "%s: the stores hold different objects", key)
	}
	b, _, err := generated.GetStore().GetByKey("ns/b")
	require.NoError(t, err)
	require.Equal(t, projectedPod(t, fullPod("ns", "b", "6", "1")), b)
}
