package bench

import (
	"context"
	"fmt"
	"os"
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

// sizesFor returns full when KINFORMER_BENCH_FULL=1, else reduced.
func sizesFor(reduced, full []int) []int {
	if fullSizes() {
		return full
	}
	return reduced
}

// waitTimeout bounds every wait of a benchmark.
const waitTimeout = 3 * time.Minute

// countingHandler counts notifications and signals when a goal is reached. Both
// implementations' ResourceEventHandler interfaces have the same method set,
// so one handler type serves all sides. With work > 0 every notification
// first runs workOn(obj, work), a fixed computation over the object.
type countingHandler struct {
	work int
	// sink keeps workOn's results, so that the computation is not
	// optimised away; only the handler's own goroutine touches it.
	sink uint64
	seen atomic.Int64
	goal atomic.Int64
	done atomic.Pointer[chan struct{}]
	// reached is when the goal was reached (Unix nanoseconds).
	reached atomic.Int64
	_       [64]byte // keep handlers of one informer off each other's cache line
}

// arm returns a channel closed once the handler has seen n more
// notifications. Call it only while no notifications arrive.
func (h *countingHandler) arm(n int) <-chan struct{} {
	ch := make(chan struct{})
	h.done.Store(&ch)
	h.reached.Store(0)
	h.goal.Store(h.seen.Load() + int64(n))
	return ch
}

func (h *countingHandler) note(obj interface{}) {
	if h.work > 0 {
		h.sink += workOn(obj, h.work)
	}
	if h.seen.Add(1) == h.goal.Load() {
		h.reached.Store(time.Now().UnixNano())
		close(*h.done.Load())
	}
}

// reachedAt returns when the armed goal was reached (zero before).
func (h *countingHandler) reachedAt() time.Time {
	if n := h.reached.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

func (h *countingHandler) OnAdd(obj interface{}, _ bool) { h.note(obj) }
func (h *countingHandler) OnUpdate(_, obj interface{})   { h.note(obj) }
func (h *countingHandler) OnDelete(obj interface{})      { h.note(obj) }

// workOn is a handler's stand-in for real work on a notification: rounds
// rounds of FNV-1a over the pod's namespace, name, resourceVersion, node
// name and label keys and values (in the map's order, folded so that the
// order does not matter). It allocates nothing, and returns the hash so
// that the caller can keep it. Anything but a *v1.Pod costs nothing.
func workOn(obj interface{}, rounds int) uint64 {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return 0
	}
	const offset, prime = 14695981039346656037, 1099511628211
	fnv := func(h uint64, s string) uint64 {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * prime
		}
		return h
	}
	var sum uint64
	for r := range rounds {
		h := fnv(fnv(fnv(fnv(offset+uint64(r), p.Namespace), p.Name), p.ResourceVersion), p.Spec.NodeName)
		for k, v := range p.Labels {
			h ^= fnv(fnv(offset, k), v)
		}
		sum += h
	}
	return sum
}

// calibrateWork returns the rounds of workOn over p that take about
// target, measured once on this machine (the median of five timings of
// a thousand calls), and the time one call of that many rounds took.
// Every side of a benchmark uses the same calibration, so what it costs
// does not depend on the side.
func calibrateWork(p *v1.Pod, target time.Duration) (rounds int, perCall time.Duration) {
	const calls = 1000
	timeRounds := func(r int) time.Duration {
		var sink uint64
		times := make([]float64, 5)
		for i := range times {
			start := time.Now()
			for range calls {
				sink += workOn(p, r)
			}
			times[i] = float64(time.Since(start)) / calls
		}
		if sink == 42 {
			times[0]++ // keep sink alive
		}
		return time.Duration(Median(times))
	}
	perRound := timeRounds(16) / 16
	rounds = max(1, int(target/max(perRound, 1)))
	return rounds, timeRounds(rounds)
}

// wait waits for ch (from arm) for at most childTimeout.
func (h *countingHandler) wait(ch <-chan struct{}, what string) error {
	select {
	case <-ch:
		return nil
	case <-time.After(childTimeout):
		return fmt.Errorf("%s: handler saw %d of %d notifications", what, h.seen.Load(), h.goal.Load())
	}
}

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

// Sides of the in-memory scenarios: kinformer's and client-go's
// SharedIndexInformer with the namespace index, and the floor.
var memorySides = []string{SideKinformer, SideClientGo, SideFloor}

// buildMemorySide builds side's informer over lw with handlers hs.
func buildMemorySide(side string, lw *MemoryLW, hs []*countingHandler) (informerUnderTest, error) {
	return buildMemorySideWith(side, lw, hs, cache.SharedIndexInformerOptions{})
}

// buildMemorySideWith is buildMemorySide with kinformer's informer built
// with options (their Indexers replaced by the namespace index, which
// every side keeps); the other sides ignore options.
func buildMemorySideWith(side string, lw *MemoryLW, hs []*countingHandler, options cache.SharedIndexInformerOptions) (informerUnderTest, error) {
	switch engineOf(side) {
	case SideKinformer:
		options.Indexers = cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
		inf := cache.NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, options)
		for _, h := range hs {
			if _, err := inf.AddEventHandler(h); err != nil {
				return informerUnderTest{}, err
			}
		}
		return informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}, nil
	case SideClientGo:
		inf := clientcache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc})
		for _, h := range hs {
			if _, err := inf.AddEventHandler(h); err != nil {
				return informerUnderTest{}, err
			}
		}
		return informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}, nil
	case SideFloor:
		f := &floorInformer{lw: lw, hs: hs, synced: make(chan struct{}), store: newFloorStore(0)}
		return informerUnderTest{run: f.run, synced: f.synced}, nil
	}
	return informerUnderTest{}, fmt.Errorf("unknown side %q", side)
}

// sideRotation rotates the order in which sides run, so that drift and warm-up
// hit every side alike.
var sideRotation atomic.Int64

// sideOrder returns sides in this op's order: rotated by one from the
// previous call's (with two sides: alternating). KINFORMER_BENCH_SIDES
// (e.g. "k" or "kc") restricts them, for profiling one side. In an A/A run
// (aaRun) the floor does not run: only the two sides compared do.
func sideOrder(sides ...string) []string {
	r := int(sideRotation.Add(1))
	only := os.Getenv("KINFORMER_BENCH_SIDES")
	aa := aaRun()
	var out []string
	for i := range sides {
		s := sides[(i+r)%len(sides)]
		if (only == "" || strings.Contains(only, s)) && !(aa && s == SideFloor) {
			out = append(out, s)
		}
	}
	return out
}

// aaEnv, set to "1", makes every benchmark of the package an A/A control
// (`make bench-aa`): the client-go side (c) runs kinformer, built exactly
// as the kinformer side (k) of the same scenario, so that the per-pair
// ratios k/c measure the run-to-run spread of identical code, which the
// table tool judges the readings of `make bench` against (Row.AASpread).
// The floor does not run. Child processes inherit it with the rest of
// the environment.
const aaEnv = "KINFORMER_BENCH_AA"

// aaRun reports whether this is an A/A run (aaEnv).
func aaRun() bool {
	return os.Getenv(aaEnv) == "1"
}

// engineOf returns the implementation that side runs: side itself, except
// in an A/A run, where the client-go side runs kinformer. The builders of
// every scenario switch on it, and label figures by side.
func engineOf(side string) string {
	if side == SideClientGo && aaRun() {
		return SideKinformer
	}
	return side
}

// floorStore is the least bookkeeping both informers do: a map from
// namespace/name key to the object and the namespace index (namespace →
// keys), both guarded by one mutex so that readers on other goroutines
// (listers) could use it, updated per object.
type floorStore struct {
	mu    sync.RWMutex
	items map[string]*v1.Pod
	byNS  map[string]map[string]struct{}
}

func newFloorStore(capacity int) *floorStore {
	return &floorStore{items: make(map[string]*v1.Pod, capacity), byNS: map[string]map[string]struct{}{}}
}

func floorKey(p *v1.Pod) string {
	return p.Namespace + "/" + p.Name
}

// put stores p under key and returns the object it replaced, if any.
func (s *floorStore) put(key string, p *v1.Pod) (old *v1.Pod, existed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, existed = s.items[key]
	s.items[key] = p
	if existed && old.Namespace == p.Namespace {
		return old, true
	}
	if existed {
		s.unindex(key, old.Namespace)
	}
	keys := s.byNS[p.Namespace]
	if keys == nil {
		keys = map[string]struct{}{}
		s.byNS[p.Namespace] = keys
	}
	keys[key] = struct{}{}
	return old, existed
}

func (s *floorStore) unindex(key, ns string) {
	keys := s.byNS[ns]
	delete(keys, key)
	if len(keys) == 0 {
		delete(s.byNS, ns)
	}
}

// deleteUnlisted removes every object whose key listed lacks and returns
// them.
func (s *floorStore) deleteUnlisted(listed map[string]struct{}) []*v1.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []*v1.Pod
	for key, old := range s.items {
		if _, ok := listed[key]; !ok {
			delete(s.items, key)
			s.unindex(key, old.Namespace)
			gone = append(gone, old)
		}
	}
	return gone
}

// len returns the number of stored objects.
func (s *floorStore) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.items)
}

// floorInformer is the least work the job needs with the bookkeeping both
// informers do: LIST, then per object a copy out of the list, one insert in
// a floorStore (map and namespace index under a mutex) and a direct call
// per handler; then read the watch and, per event, one floorStore write and
// a direct call per handler. A relist (after an ERROR event) is read page
// by page and applied in place, then keys that were not listed are removed:
// the least memory a relist needs.
type floorInformer struct {
	lw     *MemoryLW
	hs     []*countingHandler
	store  *floorStore
	synced chan struct{}
}

func (f *floorInformer) run(ctx context.Context) {
	obj, err := f.lw.List(metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		panic(err)
	}
	list := obj.(*v1.PodList)
	for i := range list.Items {
		// Copy the item out of the list, as an informer must: a pointer
		// into the list would pin every listed object until all are gone.
		p := new(v1.Pod)
		*p = list.Items[i]
		f.store.put(floorKey(p), p)
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
			old, _ := f.store.put(floorKey(p), p)
			for _, h := range f.hs {
				h.OnUpdate(old, p)
			}
		}
	}
}

func (f *floorInformer) relist() {
	listed := make(map[string]struct{}, f.store.len())
	opts := metav1.ListOptions{Limit: reflectorPageSize}
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
			old, ok := f.store.put(key, p)
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
	for _, old := range f.store.deleteUnlisted(listed) {
		for _, h := range f.hs {
			h.OnDelete(old)
		}
	}
}

// reflectorPageSize is the page size of the paged relists (the Reflector's
// default, which the floor uses too).
const reflectorPageSize = 500

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
	w, err := awaitWatch(lw)
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// awaitWatch waits for lw's newest open watch, for at most childTimeout.
func awaitWatch(lw *MemoryLW) (*MemoryWatch, error) {
	deadline := time.After(childTimeout)
	for {
		w, opened := lw.Watcher()
		if w != nil {
			return w, nil
		}
		select {
		case <-opened:
		case <-deadline:
			return nil, fmt.Errorf("no watch was opened")
		}
	}
}

// figureSamples collects one figure per side and op, reported as medians
// (with -benchtime 1x: the one op's figures).
type figureSamples map[string][]float64

func (s figureSamples) add(side, unit string, v float64) {
	k := side + "-" + unit
	s[k] = append(s[k], v)
}

func (s figureSamples) report(b *testing.B) {
	for k, vs := range s {
		b.ReportMetric(Median(vs), k)
	}
}

func paramName(k string, v int) string {
	return fmt.Sprintf("%s=%d", k, v)
}

// msBetween returns the milliseconds from start to end.
func msBetween(start, end time.Time) float64 {
	return float64(end.Sub(start).Microseconds()) / 1000
}
