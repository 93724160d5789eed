package cache

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	clientcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// countingHandler counts updates and closes done when it has seen want.
type countingHandler struct {
	want int
	seen int
	done chan struct{}
}

func (h *countingHandler) OnAdd(interface{}, bool) {}
func (h *countingHandler) OnDelete(interface{})    {}
func (h *countingHandler) OnUpdate(_, _ interface{}) {
	h.seen++
	if h.seen == h.want {
		close(h.done)
	}
}

// benchInformer is what the benchmark needs from either implementation.
type benchInformer interface {
	RunWithContext(ctx context.Context)
	HasSynced() bool
}

const benchPodCount = 1000

// benchInformerEvents pushes b.N MODIFIED events (round-robin over
// benchPodCount pods) through a scripted watch into an informer with
// `handlers` handlers and measures until every handler saw every event.
func benchInformerEvents(b *testing.B, handlers int, build func(srv *fakeapi.Server, hs []*countingHandler) benchInformer) {
	srv := fakeapi.NewServer(false)
	for i := range benchPodCount {
		srv.Create("pod-" + strconv.Itoa(i))
	}
	// Pre-build the events so that the measurement covers the informer only.
	events := make([]watch.Event, b.N)
	for i := range events {
		pod := newPod("pod-"+strconv.Itoa(i%benchPodCount), strconv.Itoa(benchPodCount+1+i))
		events[i] = watch.Event{Type: watch.Modified, Object: pod}
	}
	hs := make([]*countingHandler, handlers)
	for i := range hs {
		hs[i] = &countingHandler{want: b.N, done: make(chan struct{})}
	}
	informer := build(srv, hs)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { informer.RunWithContext(ctx) })
	defer func() {
		cancel()
		srv.StopWatches()
		wg.Wait()
	}()
	deadline := time.Now().Add(waitTimeout)
	for !informer.HasSynced() || len(srv.WatchOpened()) == 0 {
		if time.Now().After(deadline) {
			b.Fatal("informer did not sync")
		}
		time.Sleep(time.Millisecond)
	}

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	srv.SendToWatches(events...)
	for _, h := range hs {
		select {
		case <-h.done:
		case <-time.After(time.Minute):
			b.Fatalf("handler saw %d of %d events", h.seen, h.want)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
}

func benchOurs(srv *fakeapi.Server, hs []*countingHandler) benchInformer {
	informer := NewSharedIndexInformer(srv, &v1.Pod{}, 0, Indexers{})
	for _, h := range hs {
		if _, err := informer.AddEventHandler(h); err != nil {
			panic(err)
		}
	}
	return informer
}

// clientGoLW is client-go's ListWatch declaring no streaming-list support.
type clientGoLW struct {
	*clientcache.ListWatch
}

func (clientGoLW) IsWatchListSemanticsUnSupported() bool { return true }

func benchClientGo(srv *fakeapi.Server, hs []*countingHandler) benchInformer {
	lw := clientGoLW{&clientcache.ListWatch{ListFunc: srv.List, WatchFunc: srv.Watch}}
	informer := clientcache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, clientcache.Indexers{})
	for _, h := range hs {
		if _, err := informer.AddEventHandler(h); err != nil {
			panic(err)
		}
	}
	return informer
}

func BenchmarkInformerEvents_1Handler(b *testing.B) {
	b.Run("kinformer", func(b *testing.B) { benchInformerEvents(b, 1, benchOurs) })
	b.Run("client-go", func(b *testing.B) { benchInformerEvents(b, 1, benchClientGo) })
}

func BenchmarkInformerEvents_10Handlers(b *testing.B) {
	b.Run("kinformer", func(b *testing.B) { benchInformerEvents(b, 10, benchOurs) })
	b.Run("client-go", func(b *testing.B) { benchInformerEvents(b, 10, benchClientGo) })
}
