package bench

import (
	"runtime"
	"strconv"
	"testing"
	"time"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Every benchmark op runs the scenario once on each side (kinformer,
// client-go, floor), in an order that rotates from op to op, and reports
// per-side medians as "<side>-<figure>" metrics (k = kinformer, c =
// client-go, f = floor). ns/op covers all sides and is not a figure of
// interest. cmd/benchtable turns the output into the comparison table.

const heapSampleEvery = time.Millisecond

// BenchmarkSync is scenario 1: the initial sync of a realistic pod
// population from an in-memory LIST into a SharedIndexInformer with the
// namespace index and one handler. Figures: time to HasSynced, peak heap
// during the sync and heap after sync and GC (both above the heap before the
// list was built, so they include the listed objects, as a decoded list
// would), heap allocations per pod.
func BenchmarkSync(b *testing.B) {
	for _, pods := range []int{sizeFor(2000, 10000), sizeFor(10000, 50000)} {
		b.Run(paramName("pods", pods), func(b *testing.B) {
			samples := figureSamples{}
			for range b.N {
				for _, side := range orderedSides() {
					runSyncOnce(b, side, pods, samples)
				}
			}
			samples.report(b)
		})
	}
}

func runSyncOnce(b *testing.B, side benchSide, pods int, samples figureSamples) {
	lw := NewMemoryLW(pods, 1000)
	h := &countingHandler{}
	handlerDone := h.arm(pods)
	r := side.build(lw, []*countingHandler{h})

	base := SettledHeap()
	lw.SetNextList(NewPodList(0, pods, "1000"))
	runtime.GC()
	before := ReadHeap()
	sampler := StartHeapSampler(heapSampleEvery)
	start := time.Now()
	stop := startInformer(r, lw)
	waitSynced(b, r)
	elapsed := time.Since(start)
	after := ReadHeap()
	peak, peakLive := sampler.Stop()
	h.waitFor(b, handlerDone, "initial adds")
	settled := SettledHeap()
	stop()

	samples.add(side.id, "sync-ms", float64(elapsed.Microseconds())/1000)
	samples.add(side.id, "peak-MB", mibAbove(peak, base))
	samples.add(side.id, "peaklive-MB", mibAbove(peakLive, base))
	samples.add(side.id, "heap-MB", mibAbove(settled, base))
	samples.add(side.id, "allocs/pod", float64(after.Allocs-before.Allocs)/float64(pods))
}

// BenchmarkEvents is scenario 2: after a sync, MODIFIED events through the
// watch to an informer with 1 and with 10 handlers. Figures: events per
// second until every handler saw every event, and heap allocations and bytes
// per event (net of the one allocation per event the producer makes).
func BenchmarkEvents(b *testing.B) {
	pods := sizeFor(2000, 10000)
	events := sizeFor(40000, 200000)
	templates := NewPodList(0, pods, "1000").Items
	rvs := make([]string, events)
	for i := range rvs {
		rvs[i] = strconv.Itoa(1001 + i)
	}
	for _, handlers := range []int{1, 10} {
		b.Run(paramName("handlers", handlers), func(b *testing.B) {
			samples := figureSamples{}
			for range b.N {
				for _, side := range orderedSides() {
					runEventsOnce(b, side, handlers, templates, rvs, samples)
				}
			}
			samples.report(b)
		})
	}
}

// sendModified sends one MODIFIED event per resource version, cycling over the
// template pods. It allocates exactly one object per event (the pod).
func sendModified(w *MemoryWatch, templates []v1.Pod, rvs []string) error {
	for i, rv := range rvs {
		p := new(v1.Pod)
		*p = templates[i%len(templates)]
		p.ResourceVersion = rv
		if err := w.Send(watch.Event{Type: watch.Modified, Object: p}); err != nil {
			return err
		}
	}
	return nil
}

func runEventsOnce(b *testing.B, side benchSide, handlers int, templates []v1.Pod, rvs []string, samples figureSamples) {
	pods := len(templates)
	lw := NewMemoryLW(pods, 1000)
	hs := make([]*countingHandler, handlers)
	synced := make([]<-chan struct{}, handlers)
	for i := range hs {
		hs[i] = &countingHandler{}
		synced[i] = hs[i].arm(pods)
	}
	r := side.build(lw, hs)
	stop := startInformer(r, lw)
	defer stop()
	waitSynced(b, r)
	for i, h := range hs {
		h.waitFor(b, synced[i], "initial adds")
	}
	w := waitForWatch(b, lw)
	done := make([]<-chan struct{}, handlers)
	for i, h := range hs {
		done[i] = h.arm(len(rvs))
	}

	runtime.GC()
	before := ReadHeap()
	start := time.Now()
	if err := sendModified(w, templates, rvs); err != nil {
		b.Fatal(err)
	}
	for i, h := range hs {
		h.waitFor(b, done[i], "events")
	}
	elapsed := time.Since(start)
	after := ReadHeap()

	n := float64(len(rvs))
	podSize := float64(unsafe.Sizeof(v1.Pod{}))
	samples.add(side.id, "events/s", n/elapsed.Seconds())
	samples.add(side.id, "allocs/event", float64(after.Allocs-before.Allocs)/n-1)
	samples.add(side.id, "B/event", float64(after.AllocBytes-before.AllocBytes)/n-podSize)
}

// BenchmarkRelist is scenario 3: under a running, synced informer, the watch
// fails with 410 Gone and the informer relists the whole population (at a
// newer resource version, so that every object changed). Figures: peak heap
// during the relist and steady-state heap (both above the heap before the
// informer started), and their ratio.
//
// The sampled peaks include what the garbage collector has not reclaimed
// yet (peak-MB: garbage not yet swept; peaklive-MB: everything allocated
// while a GC cycle was marking counts as live), which on a relist that
// replaces every object is mostly a matter of GC pacing: the floor itself
// reaches about 1.25x the steady state in peaklive. A second relist
// therefore measures what the relist retains: the LIST is held at five
// points (the first page, a quarter, half and three quarters of the pages,
// and the last page, each held with the page just generated alive), and,
// once everything handed over before that point has been processed (the
// handler saw the objects of the earlier pages on the sides that apply
// pages as they come; client-go delivers nothing before the whole list is
// in), the heap after two full GCs is read (retained-MB: the largest of
// those readings; retained/steady: against the steady state read the same
// way just before). An unpaged list (client-go's relist at a resource
// version) is held once, with the whole new list generated.
func BenchmarkRelist(b *testing.B) {
	pods := sizeFor(10000, 50000)
	b.Run(paramName("pods", pods), func(b *testing.B) {
		samples := figureSamples{}
		for range b.N {
			for _, side := range orderedSides() {
				runRelistOnce(b, side, pods, samples)
			}
		}
		samples.report(b)
	})
}

func runRelistOnce(b *testing.B, side benchSide, pods int, samples figureSamples) {
	lw := NewMemoryLW(pods, 1000)
	h := &countingHandler{}
	synced := h.arm(pods)
	r := side.build(lw, []*countingHandler{h})
	base := SettledHeap()
	stop := startInformer(r, lw)
	defer stop()
	waitSynced(b, r)
	h.waitFor(b, synced, "initial adds")
	w := waitForWatch(b, lw)
	steady := SettledHeap()

	lw.SetResourceVersion(2000)
	relisted := h.arm(pods)
	_, reopened := lw.Watcher()
	sampler := StartHeapSampler(heapSampleEvery)
	start := time.Now()
	if err := w.SendExpired(); err != nil {
		b.Fatal(err)
	}
	h.waitFor(b, relisted, "relist")
	elapsed := time.Since(start)
	peak, peakLive := sampler.Stop()

	select {
	case <-reopened:
	case <-time.After(waitTimeout):
		b.Fatal("no watch was opened after the relist")
	}
	steady2 := SettledHeap()
	retained := retainedRelistHeap(b, side, lw, h, pods, 3000)
	samples.add(side.id, "retained-MB", mibAbove(retained, base))
	samples.add(side.id, "retained/steady", mibAbove(retained, base)/mibAbove(steady2, base))

	steadyMB := mibAbove(steady, base)
	samples.add(side.id, "steady-MB", steadyMB)
	samples.add(side.id, "peak-MB", mibAbove(peak, base))
	samples.add(side.id, "peaklive-MB", mibAbove(peakLive, base))
	samples.add(side.id, "peak/steady", mibAbove(peak, base)/steadyMB)
	samples.add(side.id, "peaklive/steady", mibAbove(peakLive, base)/steadyMB)
	samples.add(side.id, "relist-ms", float64(elapsed.Microseconds())/1000)
}

// reflectorPageSize is the page size of the paged relists (the Reflector's
// default, which the floor uses too).
const reflectorPageSize = 500

// retainedRelistHeap forces a relist at resource version rv and holds its LIST
// at checkpoints (see BenchmarkRelist); it returns the largest settled heap
// read at them.
func retainedRelistHeap(b *testing.B, side benchSide, lw *MemoryLW, h *countingHandler, pods, rv int) uint64 {
	w := waitForWatch(b, lw)
	pages := (pods + reflectorPageSize - 1) / reflectorPageSize
	check := map[int]bool{0: true, pages / 4: true, pages / 2: true, 3 * pages / 4: true, pages - 1: true}
	type hold struct {
		page   int
		resume chan struct{}
	}
	holds := make(chan hold)
	done := make(chan struct{})
	defer close(done)
	lw.SetListHook(func(options metav1.ListOptions, list *v1.PodList) {
		page := 0
		if options.Continue != "" {
			offset, _ := strconv.Atoi(options.Continue)
			page = offset / reflectorPageSize
		}
		if !check[page] {
			return
		}
		hd := hold{page: page, resume: make(chan struct{})}
		select {
		case holds <- hd:
			<-hd.resume
		case <-done:
		}
		runtime.KeepAlive(list)
	})
	defer lw.SetListHook(nil)

	start := h.seen.Load()
	relisted := h.arm(pods)
	lw.SetResourceVersion(rv)
	if err := w.SendExpired(); err != nil {
		b.Fatal(err)
	}
	deadline := time.After(waitTimeout)
	var retained uint64
	for {
		select {
		case hd := <-holds:
			if side.pagewise {
				want := int64(hd.page * reflectorPageSize)
				for h.seen.Load()-start < want {
					select {
					case <-deadline:
						b.Fatalf("retained relist: handler saw %d of the %d objects before page %d", h.seen.Load()-start, want, hd.page)
					case <-time.After(time.Millisecond):
					}
				}
			}
			retained = max(retained, SettledHeap())
			close(hd.resume)
		case <-relisted:
			return retained
		case <-deadline:
			b.Fatalf("retained relist: handler saw %d of %d notifications", h.seen.Load()-start, pods)
		}
	}
}
