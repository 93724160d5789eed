package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clientcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
)

// fullSizes selects the full sizes (KINFORMER_BENCH_FULL=1) instead of
// the reduced defaults.
func fullSizes() bool {
	return os.Getenv("KINFORMER_BENCH_FULL") == "1"
}

// sizeFor returns full when KINFORMER_BENCH_FULL=1, else reduced.
func sizeFor(reduced, full int) int {
	if fullSizes() {
		return full
	}
	return reduced
}

// waitTimeout bounds every wait of a benchmark.
const waitTimeout = 3 * time.Minute

// countingHandler counts notifications and signals when a goal is reached. Both
// implementations' ResourceEventHandler interfaces have the same method set,
// so one handler type serves all sides.
type countingHandler struct {
	seen atomic.Int64
	goal atomic.Int64
	done atomic.Pointer[chan struct{}]
	_    [64]byte // keep handlers of one informer off each other's cache line
}

// arm returns a channel closed once the handler has seen n more
// notifications. Call it only while no notifications arrive.
func (h *countingHandler) arm(n int) <-chan struct{} {
	ch := make(chan struct{})
	h.done.Store(&ch)
	h.goal.Store(h.seen.Load() + int64(n))
	return ch
}

func (h *countingHandler) note() {
	if h.seen.Add(1) == h.goal.Load() {
		close(*h.done.Load())
	}
}

func (h *countingHandler) OnAdd(interface{}, bool)   { h.note() }
func (h *countingHandler) OnUpdate(_, _ interface{}) { h.note() }
func (h *countingHandler) OnDelete(interface{})      { h.note() }
func (h *countingHandler) waitFor(b *testing.B, ch <-chan struct{}, what string) {
	b.Helper()
	select {
	case <-ch:
	case <-time.After(waitTimeout):
		b.Fatalf("%s: handler saw %d of %d notifications", what, h.seen.Load(), h.goal.Load())
	}
}

// informerUnderTest is an informer under test, built but not yet run.
type informerUnderTest struct {
	run    func(ctx context.Context)
	synced <-chan struct{}
}

// benchSide is one implementation under test.
type benchSide struct {
	// id prefixes the reported metrics: k (kinformer), c (client-go),
	// f (the floor).
	id    string
	build func(lw *MemoryLW, hs []*countingHandler) informerUnderTest
	// pagewise sides apply a paged relist page by page and notify their
	// handlers as they go; the others notify only after the whole list.
	pagewise bool
}

var benchSides = []benchSide{
	{id: "k", build: buildKinformer},
	{id: "c", build: buildClientGo},
	{id: "f", build: buildFloor, pagewise: true},
}

// sideRotation rotates the order in which sides run, so that drift and warm-up
// hit every side alike.
var sideRotation atomic.Int64

// orderedSides returns the sides in this round's order. KINFORMER_BENCH_SIDES
// (e.g. "k" or "kc") restricts them, for profiling one side.
func orderedSides() []benchSide {
	r := int(sideRotation.Add(1))
	only := os.Getenv("KINFORMER_BENCH_SIDES")
	var out []benchSide
	for i := range benchSides {
		s := benchSides[(i+r)%len(benchSides)]
		if only == "" || strings.Contains(only, s.id) {
			out = append(out, s)
		}
	}
	return out
}

func buildKinformer(lw *MemoryLW, hs []*countingHandler) informerUnderTest {
	inf := cache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, h := range hs {
		if _, err := inf.AddEventHandler(h); err != nil {
			panic(err)
		}
	}
	return informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}
}

func buildClientGo(lw *MemoryLW, hs []*countingHandler) informerUnderTest {
	inf := clientcache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc})
	for _, h := range hs {
		if _, err := inf.AddEventHandler(h); err != nil {
			panic(err)
		}
	}
	return informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}
}

// floorInformer is the least work the job needs: LIST, one map insert per object
// (of the object copied out of the list) and a direct call per handler per
// object; then read the watch and, per
// event, one map write and a direct call per handler. A relist (after an
// ERROR event) is read page by page and applied in place, then keys that
// were not listed are removed: the least memory a relist needs.
type floorInformer struct {
	lw     *MemoryLW
	hs     []*countingHandler
	items  map[string]*v1.Pod
	synced chan struct{}
}

func buildFloor(lw *MemoryLW, hs []*countingHandler) informerUnderTest {
	f := &floorInformer{lw: lw, hs: hs, synced: make(chan struct{})}
	return informerUnderTest{run: f.run, synced: f.synced}
}

func floorKey(p *v1.Pod) string {
	return p.Namespace + "/" + p.Name
}

func (f *floorInformer) run(ctx context.Context) {
	obj, err := f.lw.List(metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		panic(err)
	}
	list := obj.(*v1.PodList)
	f.items = make(map[string]*v1.Pod, len(list.Items))
	for i := range list.Items {
		// Copy the item out of the list, as an informer must: a pointer
		// into the list would pin every listed object until all are gone.
		p := new(v1.Pod)
		*p = list.Items[i]
		f.items[floorKey(p)] = p
		for _, h := range f.hs {
			h.OnAdd(p, true)
		}
	}
	close(f.synced)
	rv := list.ResourceVersion
	list = nil // do not keep the listed array alive
	for ctx.Err() == nil {
		w, err := f.lw.Watch(metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			panic(err)
		}
		f.watch(ctx, w)
		w.Stop()
	}
}

func (f *floorInformer) watch(ctx context.Context, w watch.Interface) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-w.ResultChan():
			if ev.Type == watch.Error {
				f.relist()
				return
			}
			p := ev.Object.(*v1.Pod)
			key := floorKey(p)
			old := f.items[key]
			f.items[key] = p
			for _, h := range f.hs {
				h.OnUpdate(old, p)
			}
		}
	}
}

func (f *floorInformer) relist() {
	listed := make(map[string]struct{}, len(f.items))
	opts := metav1.ListOptions{Limit: 500}
	for {
		obj, err := f.lw.List(opts)
		if err != nil {
			panic(err)
		}
		list := obj.(*v1.PodList)
		for i := range list.Items {
			p := new(v1.Pod)
			*p = list.Items[i] // do not pin the page
			key := floorKey(p)
			listed[key] = struct{}{}
			old, ok := f.items[key]
			f.items[key] = p
			for _, h := range f.hs {
				if ok {
					h.OnUpdate(old, p)
				} else {
					h.OnAdd(p, false)
				}
			}
		}
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	for key, old := range f.items {
		if _, ok := listed[key]; !ok {
			delete(f.items, key)
			for _, h := range f.hs {
				h.OnDelete(old)
			}
		}
	}
}

// startInformer runs r until the returned stop function is called; stop waits for
// it to return and stops lw's watches.
func startInformer(r informerUnderTest, lw *MemoryLW) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { r.run(ctx) })
	return func() {
		cancel()
		lw.StopAll()
		wg.Wait()
	}
}

func waitSynced(b *testing.B, r informerUnderTest) {
	b.Helper()
	select {
	case <-r.synced:
	case <-time.After(waitTimeout):
		b.Fatal("informer did not sync")
	}
}

// waitForWatch waits for lw's newest open watch.
func waitForWatch(b *testing.B, lw *MemoryLW) *MemoryWatch {
	b.Helper()
	deadline := time.After(waitTimeout)
	for {
		w, opened := lw.Watcher()
		if w != nil {
			return w
		}
		select {
		case <-opened:
		case <-deadline:
			b.Fatal("no watch was opened")
		}
	}
}

// figureSamples collects one figure per side and round, reported as medians.
type figureSamples map[string][]float64

func (s figureSamples) add(side, unit string, v float64) {
	k := side + "-" + unit
	s[k] = append(s[k], v)
}

func (s figureSamples) report(b *testing.B) {
	for k, vs := range s {
		b.ReportMetric(medianOrZero(vs), k)
	}
}

func medianOrZero(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

const bytesPerMiB = 1 << 20

func mibAbove(bytes uint64, base uint64) float64 {
	if bytes < base {
		return 0
	}
	return float64(bytes-base) / bytesPerMiB
}

func paramName(k string, v int) string {
	return fmt.Sprintf("%s=%d", k, v)
}
