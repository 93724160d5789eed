package cache

import (
	"context"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// nopStore is a ReflectorStore that does nothing.
type nopStore struct{}

func (nopStore) Add(interface{}) error               { return nil }
func (nopStore) Update(interface{}) error            { return nil }
func (nopStore) Delete(interface{}) error            { return nil }
func (nopStore) Replace([]interface{}, string) error { return nil }
func (nopStore) Resync() error                       { return nil }

// benchLW lists nothing and serves one watch with n MODIFIED events, then
// cancels the run.
type benchLW struct {
	events []watch.Event
	cancel context.CancelFunc
	served bool
}

func (b *benchLW) IsWatchListSemanticsUnSupported() bool { return true }

func (b *benchLW) List(metav1.ListOptions) (runtime.Object, error) {
	return &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
}

func (b *benchLW) Watch(metav1.ListOptions) (watch.Interface, error) {
	if b.served {
		b.cancel()
		return fakeapi.NewWatch(nil, true), nil
	}
	b.served = true
	return fakeapi.NewWatch(b.events, false), nil
}

func benchReflectorEvents(n int) []watch.Event {
	events := make([]watch.Event, n)
	for i := range events {
		events[i] = newEvent(watch.Modified, newPod("p"+strconv.Itoa(i%100), strconv.Itoa(i+2)))
	}
	return events
}

// BenchmarkReflectorWatchEvents measures the per-event cost of the watch
// loop (no-op store), for kinformer and client-go.
func BenchmarkReflectorWatchEvents(b *testing.B) {
	const n = 10000
	events := benchReflectorEvents(n)
	for _, impl := range []string{"kinformer", "client-go"} {
		b.Run(impl, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				ctx, cancel := context.WithCancel(context.Background())
				lw := &benchLW{events: events, cancel: cancel}
				if impl == "kinformer" {
					r := NewReflectorWithOptions(lw, &v1.Pod{}, nopStore{}, ReflectorOptions{Name: "bench"})
					_ = r.ListAndWatchWithContext(ctx)
				} else {
					r := clientcache.NewReflectorWithOptions(lw, &v1.Pod{}, nopStore{}, clientcache.ReflectorOptions{Name: "bench"})
					_ = r.ListAndWatchWithContext(ctx)
				}
				cancel()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}
