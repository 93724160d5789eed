// Command syncprobe times one initial sync the way a program that calls
// cache.NewSharedIndexInformer gets it, outside the benchmark harness, as a
// cross-check of `make bench`'s Sync rows (issue 26 found the two
// disagreeing; docs/decoding.md says why).
//
// One run is one process: a cache.ListWatch whose ListFunc returns pods
// (internal/bench.NewPod) and whose WatchFunc returns a watch that stays
// open, marked as unable to stream lists so that both reflectors make a
// plain LIST; an informer with the namespace index and one handler that
// counts adds; the clock runs from Run until HasSynced first returns true
// (polled every 100 µs), then until the handler has seen every pod. It
// prints both times and, with a prebuilt list, the heap the informer keeps
// (live heap after a collection, against before the informer was built,
// with the list already held) and the part of it beyond the objects (less
// what a shallow copy of every item weighs, the copies both reflectors
// make); with the list built in ListFunc, the whole live heap.
//
// -list prebuilt builds the list before the clock starts, as the Sync rows
// do; -list in-listfunc builds it inside ListFunc, so the time also counts
// making the objects (the same work on both sides), which is what dilutes a
// ratio measured that way.
//
// Usage:
//
//	go run ./internal/bench/cmd/syncprobe -side kinformer|client-go [-pods 50000] [-list prebuilt|in-listfunc]
//	go run ./internal/bench/cmd/syncprobe -summarize < runs.txt
//
// compare.sh (make bench-syncprobe) builds the tool at several commits and
// runs them against client-go in rotated order, one process per run;
// -summarize reads its lines and prints the per-pair ratios' medians and
// ranges.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/bench"
)

// addCounter is the one handler: it counts adds.
type addCounter struct{ adds atomic.Int64 }

func (c *addCounter) OnAdd(any, bool)   { c.adds.Add(1) }
func (c *addCounter) OnUpdate(any, any) {}
func (c *addCounter) OnDelete(any)      {}

// kinformerLW and clientGoLW are each side's ListWatch, declared unable to
// stream lists.
type (
	kinformerLW struct{ cache.ListWatch }
	clientGoLW  struct{ clientcache.ListWatch }
)

func (kinformerLW) IsWatchListSemanticsUnSupported() bool { return true }
func (clientGoLW) IsWatchListSemanticsUnSupported() bool  { return true }

func main() {
	side := flag.String("side", "kinformer", "kinformer or client-go")
	pods := flag.Int("pods", 50000, "pods listed")
	listMode := flag.String("list", "prebuilt", "prebuilt (before the clock starts) or in-listfunc (inside the timed LIST)")
	summary := flag.Bool("summarize", false, "read compare.sh's lines from standard input and print their summary")
	flag.Parse()
	if *summary {
		if err := summarize(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "syncprobe:", err)
			os.Exit(2)
		}
		return
	}
	if err := run(*side, *pods, *listMode); err != nil {
		fmt.Fprintln(os.Stderr, "syncprobe:", err)
		os.Exit(2)
	}
}

func run(side string, pods int, listMode string) error {
	if pods < 1 {
		return fmt.Errorf("-pods %d: want at least 1", pods)
	}
	var prebuilt *v1.PodList
	switch listMode {
	case "prebuilt":
		prebuilt = bench.NewPodList(0, pods, "1000")
	case "in-listfunc":
	default:
		return fmt.Errorf("-list %q: want prebuilt or in-listfunc", listMode)
	}
	list := func(metav1.ListOptions) (kruntime.Object, error) {
		if prebuilt != nil {
			return prebuilt, nil
		}
		return bench.NewPodList(0, pods, "1000"), nil
	}
	openWatch := func(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }

	// Both reflectors keep a shallow copy of every listed item (apimachinery's
	// ExtractListWithAlloc); what such copies weigh is measured here, so that
	// the heap beyond the objects can be reported.
	var objectsMB float64
	if prebuilt != nil {
		objectsMB = copiesMB(prebuilt)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	h := &addCounter{}
	var start func(context.Context)
	var hasSynced func() bool
	switch side {
	case "kinformer":
		inf := cache.NewSharedIndexInformer(&kinformerLW{cache.ListWatch{ListFunc: list, WatchFunc: openWatch}}, &v1.Pod{}, 0,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
		start, hasSynced = inf.RunWithContext, inf.HasSynced
	case "client-go":
		inf := clientcache.NewSharedIndexInformer(&clientGoLW{clientcache.ListWatch{ListFunc: list, WatchFunc: openWatch}}, &v1.Pod{}, 0,
			clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc})
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
		start, hasSynced = inf.RunWithContext, inf.HasSynced
	default:
		return fmt.Errorf("-side %q: want kinformer or client-go", side)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	deadline := time.Now().Add(5 * time.Minute)
	t0 := time.Now()
	go start(ctx)
	for !hasSynced() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not synced after 5 minutes")
		}
		time.Sleep(100 * time.Microsecond)
	}
	synced := time.Since(t0)
	for h.adds.Load() < int64(pods) {
		if time.Now().After(deadline) {
			return fmt.Errorf("handler saw %d of %d adds after 5 minutes", h.adds.Load(), pods)
		}
		time.Sleep(100 * time.Microsecond)
	}
	handled := time.Since(t0)

	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	// With a prebuilt list, the heap the informer keeps beyond the objects;
	// otherwise the objects were made after the first reading, and the
	// figure is the whole live heap.
	heap := fmt.Sprintf("live-heap-MB=%.1f", float64(after.HeapAlloc)/(1<<20))
	if prebuilt != nil {
		informer := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
		heap = fmt.Sprintf("informer-heap-MB=%.1f beyond-objects-MB=%.2f", informer, informer-objectsMB)
	}
	fmt.Printf("side=%s pods=%d list=%s synced-ms=%.1f handled-ms=%.1f %s\n",
		side, pods, listMode, float64(synced.Microseconds())/1000, float64(handled.Microseconds())/1000, heap)
	runtime.KeepAlive(prebuilt)
	return nil
}

// copiesMB is what a shallow copy of every item of list weighs on the heap,
// in MB, without the slice that holds them.
func copiesMB(list *v1.PodList) float64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	copies := make([]*v1.Pod, len(list.Items))
	for i := range list.Items {
		p := list.Items[i]
		copies[i] = &p
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(copies)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)-int64(len(copies))*8) / (1 << 20)
}
