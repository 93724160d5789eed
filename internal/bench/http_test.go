package bench

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/informers"
)

// httpSide is one implementation under test in the HTTP scenario.
type httpSide struct {
	id    string
	build func(cs kubernetes.Interface, h *countingHandler) informerUnderTest
}

var httpSides = []httpSide{
	{id: "k", build: buildHTTPKinformer},
	{id: "c", build: buildHTTPClientGo},
	{id: "f", build: buildHTTPFloor},
}

// buildHTTPKinformer builds kinformer's factory pod informer.
func buildHTTPKinformer(cs kubernetes.Interface, h *countingHandler) informerUnderTest {
	inf := informers.NewSharedInformerFactory(cs, 0).Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(h); err != nil {
		panic(err)
	}
	return informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}
}

// buildHTTPClientGo builds client-go's factory pod informer.
func buildHTTPClientGo(cs kubernetes.Interface, h *countingHandler) informerUnderTest {
	inf := clientinformers.NewSharedInformerFactory(cs, 0).Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(h); err != nil {
		panic(err)
	}
	return informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}
}

// buildHTTPFloor lists once through the clientset's REST client asking for
// protobuf, whatever the clientset's configured content type (decoding is
// the bulk of the work, and protobuf is the cheapest the server speaks), and
// inserts copies of the items in a map, calling the handler.
func buildHTTPFloor(cs kubernetes.Interface, h *countingHandler) informerUnderTest {
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
		items := make(map[string]*v1.Pod, len(list.Items))
		for i := range list.Items {
			p := new(v1.Pod)
			*p = list.Items[i]
			items[floorKey(p)] = p
			h.OnAdd(p, true)
		}
		list = nil
		close(synced)
		<-ctx.Done()
		runtime.KeepAlive(items)
	}
	return informerUnderTest{run: run, synced: synced}
}

// orderedHTTPSides returns the HTTP sides in this round's order (and as
// restricted by KINFORMER_BENCH_SIDES).
func orderedHTTPSides() []httpSide {
	var out []httpSide
	for _, s := range orderedSides() {
		for _, hs := range httpSides {
			if hs.id == s.id {
				out = append(out, hs)
			}
		}
	}
	return out
}

// BenchmarkHTTP is scenario 4: an httptest server speaking the API's LIST
// and WATCH for a pod population, read through a real clientset by a pod
// informer (each implementation's factory pod informer), with the clientset
// configured for JSON and left on its default (which, in client-go v0.37,
// already prefers protobuf for built-in types, so it stands for a clientset
// configured for protobuf too). kinformer's factory asks for protobuf in
// both cases. The floor lists once in protobuf. Figures: time to HasSynced,
// peak heap during the sync, heap allocations per pod.
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
			for range b.N {
				for _, side := range orderedHTTPSides() {
					runHTTPOnce(b, srv, tc.contentType, side, pods, samples)
				}
			}
			samples.report(b)
		})
	}
}

func runHTTPOnce(b *testing.B, srv *PodServer, contentType string, side httpSide, pods int, samples figureSamples) {
	cs, err := kubernetes.NewForConfig(&rest.Config{
		Host:          srv.URL(),
		QPS:           -1,
		ContentConfig: rest.ContentConfig{ContentType: contentType},
	})
	if err != nil {
		b.Fatal(err)
	}
	syncOverClientset(b, cs, side, pods, samples)
}

// syncOverClientset runs side's informer over cs until it has synced pods pods
// and records its time to sync, peak heap and allocations per pod.
func syncOverClientset(b *testing.B, cs kubernetes.Interface, side httpSide, pods int, samples figureSamples) {
	h := &countingHandler{}
	handlerDone := h.arm(pods)
	r := side.build(cs, h)

	base := SettledHeap()
	before := ReadHeap()
	sampler := StartHeapSampler(heapSampleEvery)
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		r.run(ctx)
	}()
	defer func() {
		cancel()
		<-stopped
	}()
	waitSynced(b, r)
	elapsed := time.Since(start)
	after := ReadHeap()
	peak, _ := sampler.Stop()
	h.waitFor(b, handlerDone, "initial adds")

	samples.add(side.id, "sync-ms", float64(elapsed.Microseconds())/1000)
	samples.add(side.id, "peak-MB", mibAbove(peak, base))
	samples.add(side.id, "allocs/pod", float64(after.Allocs-before.Allocs)/float64(pods))
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
