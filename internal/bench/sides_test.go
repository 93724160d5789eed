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

// pfFull selects the full sizes (KINFORMER_BENCH_FULL=1) instead of
// the reduced defaults.
func pfFull() bool {
	return os.Getenv("KINFORMER_BENCH_FULL") == "1"
}

// pfSize returns full when KINFORMER_BENCH_FULL=1, else reduced.
func pfSize(reduced, full int) int {
	if pfFull() {
		return full
	}
	return reduced
}

// pfTimeout bounds every wait of a benchmark.
const pfTimeout = 3 * time.Minute

// pfHandler counts notifications and signals when a goal is reached. Both
// implementations' ResourceEventHandler interfaces have the same method set,
// so one handler type serves all sides.
type pfHandler struct {
	seen atomic.Int64
	goal atomic.Int64
	done atomic.Pointer[chan struct{}]
	_    [64]byte // keep handlers of one informer off each other's cache line
}

// arm returns a channel closed once the handler has seen n more
// notifications. Call it only while no notifications arrive.
func (h *pfHandler) arm(n int) <-chan struct{} {
	ch := make(chan struct{})
	h.done.Store(&ch)
	h.goal.Store(h.seen.Load() + int64(n))
	return ch
}

func (h *pfHandler) note() {
	if h.seen.Add(1) == h.goal.Load() {
		close(*h.done.Load())
	}
}

func (h *pfHandler) OnAdd(interface{}, bool)   { h.note() }
func (h *pfHandler) OnUpdate(_, _ interface{}) { h.note() }
func (h *pfHandler) OnDelete(interface{})      { h.note() }
func (h *pfHandler) waitFor(b *testing.B, ch <-chan struct{}, what string) {
	b.Helper()
	select {
	case <-ch:
	case <-time.After(pfTimeout):
		b.Fatalf("%s: handler saw %d of %d notifications", what, h.seen.Load(), h.goal.Load())
	}
}

// pfRunning is an informer under test, built but not yet run.
type pfRunning struct {
	run    func(ctx context.Context)
	synced <-chan struct{}
}

// pfSide is one implementation under test.
type pfSide struct {
	// id prefixes the reported metrics: k (kinformer), c (client-go),
	// f (the floor).
	id    string
	build func(lw *MemoryLW, hs []*pfHandler) pfRunning
	// pagewise sides apply a paged relist page by page and notify their
	// handlers as they go; the others notify only after the whole list.
	pagewise bool
}

var pfSides = []pfSide{
	{id: "k", build: pfBuildKinformer},
	{id: "c", build: pfBuildClientGo},
	{id: "f", build: pfBuildFloor, pagewise: true},
}

// pfRound rotates the order in which sides run, so that drift and warm-up
// hit every side alike.
var pfRound atomic.Int64

// pfOrdered returns the sides in this round's order. KINFORMER_BENCH_SIDES
// (e.g. "k" or "kc") restricts them, for profiling one side.
func pfOrdered() []pfSide {
	r := int(pfRound.Add(1))
	only := os.Getenv("KINFORMER_BENCH_SIDES")
	var out []pfSide
	for i := range pfSides {
		s := pfSides[(i+r)%len(pfSides)]
		if only == "" || strings.Contains(only, s.id) {
			out = append(out, s)
		}
	}
	return out
}

func pfBuildKinformer(lw *MemoryLW, hs []*pfHandler) pfRunning {
	inf := cache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, h := range hs {
		if _, err := inf.AddEventHandler(h); err != nil {
			panic(err)
		}
	}
	return pfRunning{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}
}

func pfBuildClientGo(lw *MemoryLW, hs []*pfHandler) pfRunning {
	inf := clientcache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc})
	for _, h := range hs {
		if _, err := inf.AddEventHandler(h); err != nil {
			panic(err)
		}
	}
	return pfRunning{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}
}

// pfFloor is the least work the job needs: LIST, one map insert per object
// (of the object copied out of the list) and a direct call per handler per
// object; then read the watch and, per
// event, one map write and a direct call per handler. A relist (after an
// ERROR event) is read page by page and applied in place, then keys that
// were not listed are removed: the least memory a relist needs.
type pfFloor struct {
	lw     *MemoryLW
	hs     []*pfHandler
	items  map[string]*v1.Pod
	synced chan struct{}
}

func pfBuildFloor(lw *MemoryLW, hs []*pfHandler) pfRunning {
	f := &pfFloor{lw: lw, hs: hs, synced: make(chan struct{})}
	return pfRunning{run: f.run, synced: f.synced}
}

func pfFloorKey(p *v1.Pod) string {
	return p.Namespace + "/" + p.Name
}

func (f *pfFloor) run(ctx context.Context) {
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
		f.items[pfFloorKey(p)] = p
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

func (f *pfFloor) watch(ctx context.Context, w watch.Interface) {
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
			key := pfFloorKey(p)
			old := f.items[key]
			f.items[key] = p
			for _, h := range f.hs {
				h.OnUpdate(old, p)
			}
		}
	}
}

func (f *pfFloor) relist() {
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
			key := pfFloorKey(p)
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

// pfStart runs r until the returned stop function is called; stop waits for
// it to return and stops lw's watches.
func pfStart(r pfRunning, lw *MemoryLW) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { r.run(ctx) })
	return func() {
		cancel()
		lw.StopAll()
		wg.Wait()
	}
}

func pfWaitSynced(b *testing.B, r pfRunning) {
	b.Helper()
	select {
	case <-r.synced:
	case <-time.After(pfTimeout):
		b.Fatal("informer did not sync")
	}
}

// pfWatcher waits for lw's newest open watch.
func pfWatcher(b *testing.B, lw *MemoryLW) *MemoryWatch {
	b.Helper()
	deadline := time.After(pfTimeout)
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

// pfSamples collects one figure per side and round, reported as medians.
type pfSamples map[string][]float64

func (s pfSamples) add(side, unit string, v float64) {
	k := side + "-" + unit
	s[k] = append(s[k], v)
}

func (s pfSamples) report(b *testing.B) {
	for k, vs := range s {
		b.ReportMetric(pfMedian(vs), k)
	}
}

func pfMedian(vs []float64) float64 {
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

const pfMiB = 1 << 20

func pfMB(bytes uint64, base uint64) float64 {
	if bytes < base {
		return 0
	}
	return float64(bytes-base) / pfMiB
}

func pfName(k string, v int) string {
	return fmt.Sprintf("%s=%d", k, v)
}
