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

// infCountingHandler counts updates and closes done when it has seen want.
type infCountingHandler struct {
	want int
	seen int
	done chan struct{}
}

func (h *infCountingHandler) OnAdd(interface{}, bool) {}
func (h *infCountingHandler) OnDelete(interface{})    {}
func (h *infCountingHandler) OnUpdate(_, _ interface{}) {
	h.seen++
	if h.seen == h.want {
		close(h.done)
	}
}

// infBenchInformer is what the benchmark needs from either implementation.
type infBenchInformer interface {
	RunWithContext(ctx context.Context)
	HasSynced() bool
}

const infBenchPods = 1000

// infBenchEvents pushes b.N MODIFIED events (round-robin over
// infBenchPods pods) through a scripted watch into an informer with
// `handlers` handlers and measures until every handler saw every event.
func infBenchEvents(b *testing.B, handlers int, build func(srv *fakeapi.Server, hs []*infCountingHandler) infBenchInformer) {
	srv := fakeapi.NewServer(false)
	for i := range infBenchPods {
		srv.Create("pod-" + strconv.Itoa(i))
	}
	// Pre-build the events so that the measurement covers the informer only.
	events := make([]watch.Event, b.N)
	for i := range events {
		pod := infPod("pod-"+strconv.Itoa(i%infBenchPods), strconv.Itoa(infBenchPods+1+i))
		events[i] = watch.Event{Type: watch.Modified, Object: pod}
	}
	hs := make([]*infCountingHandler, handlers)
	for i := range hs {
		hs[i] = &infCountingHandler{want: b.N, done: make(chan struct{})}
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
	deadline := time.Now().Add(infTimeout)
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

func infBenchOurs(srv *fakeapi.Server, hs []*infCountingHandler) infBenchInformer {
	informer := NewSharedIndexInformer(srv, &v1.Pod{}, 0, Indexers{})
	for _, h := range hs {
		if _, err := informer.AddEventHandler(h); err != nil {
			panic(err)
		}
	}
	return informer
}

// infClientGoLW is client-go's ListWatch declaring no streaming-list support.
type infClientGoLW struct {
	*clientcache.ListWatch
}

func (infClientGoLW) IsWatchListSemanticsUnSupported() bool { return true }

func infBenchClientGo(srv *fakeapi.Server, hs []*infCountingHandler) infBenchInformer {
	lw := infClientGoLW{&clientcache.ListWatch{ListFunc: srv.List, WatchFunc: srv.Watch}}
	informer := clientcache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, clientcache.Indexers{})
	for _, h := range hs {
		if _, err := informer.AddEventHandler(h); err != nil {
			panic(err)
		}
	}
	return informer
}

func BenchmarkInformerEvents_1Handler(b *testing.B) {
	b.Run("kinformer", func(b *testing.B) { infBenchEvents(b, 1, infBenchOurs) })
	b.Run("client-go", func(b *testing.B) { infBenchEvents(b, 1, infBenchClientGo) })
}

func BenchmarkInformerEvents_10Handlers(b *testing.B) {
	b.Run("kinformer", func(b *testing.B) { infBenchEvents(b, 10, infBenchOurs) })
	b.Run("client-go", func(b *testing.B) { infBenchEvents(b, 10, infBenchClientGo) })
}
