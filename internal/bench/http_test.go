package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clientinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/informers"
)

// buildClientsetSide builds side's pod informer over cs: kinformer's or
// client-go's factory pod informer (resync 0), or the floor.
func buildClientsetSide(s childSpec, cfg *rest.Config, cs kubernetes.Interface, h *countingHandler) (informerUnderTest, error) {
	switch engineOf(s.Side) {
	case SideKinformer:
		inf := informers.NewSharedInformerFactory(cs, 0).Core().V1().Pods().Informer()
		if _, err := inf.AddEventHandler(h); err != nil {
			return informerUnderTest{}, err
		}
		return informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}, nil
	case SideClientGo:
		inf := clientinformers.NewSharedInformerFactory(cs, 0).Core().V1().Pods().Informer()
		if _, err := inf.AddEventHandler(h); err != nil {
			return informerUnderTest{}, err
		}
		return informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}, nil
	case SideFloor:
		if s.FloorStreams {
			return buildStreamingFloor(cfg, h)
		}
		return buildClientsetFloor(cs, h), nil
	}
	return informerUnderTest{}, fmt.Errorf("unknown side %q", s.Side)
}

// buildClientsetFloor lists once through the clientset's REST client asking
// for protobuf, whatever the clientset's configured content type (decoding
// is the bulk of the work, and protobuf is the cheapest the server speaks),
// and puts pointers to the items in a floorStore (map and namespace index
// under a mutex), calling the handler. It does not watch, so nothing ever
// replaces an item and pointing into the listed array (which every cached
// item keeps alive anyway) costs no memory, where an informer copies each
// item out so that later changes release the old ones.
func buildClientsetFloor(cs kubernetes.Interface, h *countingHandler) informerUnderTest {
	synced := make(chan struct{})
	run := func(ctx context.Context) {
		list := &v1.PodList{}
		err := cs.CoreV1().RESTClient().Get().Resource("pods").
			VersionedParams(&metav1.ListOptions{ResourceVersion: "0"}, scheme.ParameterCodec).
			SetHeader("Accept", MediaProtobuf).
			Do(ctx).Into(list)
		if err != nil {
			panic(err)
		}
		store := newFloorStore(len(list.Items))
		for i := range list.Items {
			p := &list.Items[i]
			store.put(floorKey(p), p)
			h.OnAdd(p, true)
		}
		list = nil
		close(synced)
		<-ctx.Done()
		runtime.KeepAlive(store)
	}
	return informerUnderTest{run: run, synced: synced}
}

// buildStreamingFloor reads the pods with one streaming list over a
// protobuf clientset of cfg (a WATCH from resourceVersion "" with
// sendInitialEvents, as the informers' streaming lists are), puts each
// ADDED pod into a floorStore and calls the handler, and stops at the
// bookmark that ends the initial events. Each pod is decoded on its own, so
// the floor never holds the whole list at once, as the informers do not.
func buildStreamingFloor(cfg *rest.Config, h *countingHandler) (informerUnderTest, error) {
	pcfg := rest.CopyConfig(cfg)
	pcfg.ContentType = MediaProtobuf
	pcfg.AcceptContentTypes = MediaProtobuf
	cs, err := kubernetes.NewForConfig(pcfg)
	if err != nil {
		return informerUnderTest{}, err
	}
	synced := make(chan struct{})
	run := func(ctx context.Context) {
		yes := true
		w, err := cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{
			SendInitialEvents:    &yes,
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			AllowWatchBookmarks:  true,
		})
		if err != nil {
			panic(err)
		}
		defer w.Stop()
		store := newFloorStore(0)
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Added:
				p := ev.Object.(*v1.Pod)
				store.put(floorKey(p), p)
				h.OnAdd(p, true)
			case watch.Bookmark:
				if m, err := meta.Accessor(ev.Object); err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
					close(synced)
					<-ctx.Done()
					runtime.KeepAlive(store)
					return
				}
			case watch.Error:
				panic(fmt.Sprintf("streaming list: %v", ev.Object))
			}
		}
		panic("the streaming list ended before its last bookmark")
	}
	return informerUnderTest{run: run, synced: synced}, nil
}

// BenchmarkHTTP is an httptest server (PodServer, in the parent process)
// speaking the API's LIST and WATCH for a pod population (5,000 pods;
// 20,000 with KINFORMER_BENCH_FULL=1), read by each side in its own child
// process through a real clientset: each implementation's factory pod
// informer, with the clientset configured for JSON ("json") and left on
// its default ("default", which in client-go v0.37 already prefers
// protobuf for built-in types, so it stands for a clientset configured for
// protobuf too). kinformer's factory asks for protobuf in both cases, so
// the json rows compare protobuf (kinformer) with JSON (client-go). The
// floor lists once in protobuf. Figures: sync-ms (from Run to HasSynced),
// peaklive-MB and retained-MB (HeapPhase, baseline after the clientset
// and informer were built), allocs/pod (from Run until the handler has
// seen every pod).
func BenchmarkHTTP(b *testing.B) {
	pods := sizeFor(5000, 20000)
	srv, err := NewPodServer(pods)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	for _, tc := range []struct{ name, contentType string }{
		{"json", MediaJSON},
		{"default", ""},
	} {
		b.Run(tc.name+"/"+paramName("pods", pods), func(b *testing.B) {
			samples := figureSamples{}
			spec := childSpec{Scenario: childClientset, Pods: pods, URL: srv.URL(), ContentType: tc.contentType}
			for range b.N {
				runPairInChildren(b, spec, memorySides, samples)
			}
			samples.report(b)
		})
	}
}

// clientsetSyncChild is the side of BenchmarkHTTP and BenchmarkAPIServer in
// its child process: the initial sync over a clientset for the spec's
// server.
func clientsetSyncChild(s childSpec, _ func() error) (any, error) {
	cfg := &rest.Config{
		Host:            s.URL,
		BearerToken:     s.BearerToken,
		TLSClientConfig: rest.TLSClientConfig{CAFile: s.CAFile},
		QPS:             -1,
		ContentConfig:   rest.ContentConfig{ContentType: s.ContentType},
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	h := &countingHandler{}
	handlerDone := h.arm(s.Pods)
	build := buildClientsetSide
	if s.Projection {
		build = buildProjectionSide
	}
	r, err := build(s, cfg, cs, h)
	if err != nil {
		return nil, err
	}
	phase := StartHeapPhase()
	cpu := processCPU()
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { r.run(ctx) })
	defer func() {
		cancel()
		wg.Wait()
	}()
	figures, err := syncFigures(phase, start, cpu, r, h, handlerDone, s.Pods)
	if err != nil {
		return nil, err
	}
	if s.Projection {
		figures["B/pod"] = figures["retained-MB"] * bytesPerMiB / float64(s.Pods)
	}
	return figures, nil
}

func TestPodServerServesBothMediaTypes(t *testing.T) {
	srv, err := NewPodServer(30)
	require.NoError(t, err)
	defer srv.Close()
	assert.Less(t, srv.ListBytes(MediaProtobuf), srv.ListBytes(MediaJSON))
	for _, ct := range []string{MediaJSON, MediaProtobuf, ""} {
		cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL(), ContentConfig: rest.ContentConfig{ContentType: ct}})
		require.NoError(t, err)
		list, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
		require.NoError(t, err, ct)
		require.Len(t, list.Items, 30)
		assert.Equal(t, NewPod(7, "1000").Spec, list.Items[7].Spec, ct)
		assert.Equal(t, "1000", list.ResourceVersion)

		w, err := cs.CoreV1().Pods("").Watch(context.Background(), metav1.ListOptions{ResourceVersion: "1000"})
		require.NoError(t, err, ct)
		select {
		case ev := <-w.ResultChan():
			t.Fatalf("unexpected event %v", ev)
		case <-time.After(20 * time.Millisecond):
		}
		w.Stop()
	}
	lists, watches, _ := srv.Counts()
	assert.Equal(t, int64(3), lists)
	assert.Equal(t, int64(3), watches)
}
