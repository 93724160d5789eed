package bench

import (
	"runtime"
	"strconv"
	"testing"
	"time"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Every benchmark op runs the scenario once on each side (kinformer,
// client-go, floor), in an order that rotates from op to op, and reports
// per-side medians as "<side>-<figure>" metrics (k = kinformer, c =
// client-go, f = floor). ns/op covers all sides and is not a figure of
// interest. cmd/benchtable turns the output into the comparison table.

const pfSampleEvery = time.Millisecond

// BenchmarkSync is scenario 1: the initial sync of a realistic pod
// population from an in-memory LIST into a SharedIndexInformer with the
// namespace index and one handler. Figures: time to HasSynced, peak heap
// during the sync and heap after sync and GC (both above the heap before the
// list was built, so they include the listed objects, as a decoded list
// would), heap allocations per pod.
func BenchmarkSync(b *testing.B) {
	for _, pods := range []int{pfSize(2000, 10000), pfSize(10000, 50000)} {
		b.Run(pfName("pods", pods), func(b *testing.B) {
			samples := pfSamples{}
			for range b.N {
				for _, side := range pfOrdered() {
					pfSyncOnce(b, side, pods, samples)
				}
			}
			samples.report(b)
		})
	}
}

func pfSyncOnce(b *testing.B, side pfSide, pods int, samples pfSamples) {
	lw := NewMemoryLW(pods, 1000)
	h := &pfHandler{}
	handlerDone := h.arm(pods)
	r := side.build(lw, []*pfHandler{h})

	base := SettledHeap()
	lw.SetNextList(NewPodList(0, pods, "1000"))
	runtime.GC()
	before := ReadHeap()
	sampler := StartHeapSampler(pfSampleEvery)
	start := time.Now()
	stop := pfStart(r, lw)
	pfWaitSynced(b, r)
	elapsed := time.Since(start)
	after := ReadHeap()
	peak, peakLive := sampler.Stop()
	h.waitFor(b, handlerDone, "initial adds")
	settled := SettledHeap()
	stop()

	samples.add(side.id, "sync-ms", float64(elapsed.Microseconds())/1000)
	samples.add(side.id, "peak-MB", pfMB(peak, base))
	samples.add(side.id, "peaklive-MB", pfMB(peakLive, base))
	samples.add(side.id, "heap-MB", pfMB(settled, base))
	samples.add(side.id, "allocs/pod", float64(after.Allocs-before.Allocs)/float64(pods))
}

// BenchmarkEvents is scenario 2: after a sync, MODIFIED events through the
// watch to an informer with 1 and with 10 handlers. Figures: events per
// second until every handler saw every event, and heap allocations and bytes
// per event (net of the one allocation per event the producer makes).
func BenchmarkEvents(b *testing.B) {
	pods := pfSize(2000, 10000)
	events := pfSize(40000, 200000)
	templates := NewPodList(0, pods, "1000").Items
	rvs := make([]string, events)
	for i := range rvs {
		rvs[i] = strconv.Itoa(1001 + i)
	}
	for _, handlers := range []int{1, 10} {
		b.Run(pfName("handlers", handlers), func(b *testing.B) {
			samples := pfSamples{}
			for range b.N {
				for _, side := range pfOrdered() {
					pfEventsOnce(b, side, handlers, templates, rvs, samples)
				}
			}
			samples.report(b)
		})
	}
}

// pfProduce sends one MODIFIED event per resource version, cycling over the
// template pods. It allocates exactly one object per event (the pod).
func pfProduce(w *MemoryWatch, templates []v1.Pod, rvs []string) error {
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

func pfEventsOnce(b *testing.B, side pfSide, handlers int, templates []v1.Pod, rvs []string, samples pfSamples) {
	pods := len(templates)
	lw := NewMemoryLW(pods, 1000)
	hs := make([]*pfHandler, handlers)
	synced := make([]<-chan struct{}, handlers)
	for i := range hs {
		hs[i] = &pfHandler{}
		synced[i] = hs[i].arm(pods)
	}
	r := side.build(lw, hs)
	stop := pfStart(r, lw)
	defer stop()
	pfWaitSynced(b, r)
	for i, h := range hs {
		h.waitFor(b, synced[i], "initial adds")
	}
	w := pfWatcher(b, lw)
	done := make([]<-chan struct{}, handlers)
	for i, h := range hs {
		done[i] = h.arm(len(rvs))
	}

	runtime.GC()
	before := ReadHeap()
	start := time.Now()
	if err := pfProduce(w, templates, rvs); err != nil {
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
func BenchmarkRelist(b *testing.B) {
	pods := pfSize(10000, 50000)
	b.Run(pfName("pods", pods), func(b *testing.B) {
		samples := pfSamples{}
		for range b.N {
			for _, side := range pfOrdered() {
				pfRelistOnce(b, side, pods, samples)
			}
		}
		samples.report(b)
	})
}

func pfRelistOnce(b *testing.B, side pfSide, pods int, samples pfSamples) {
	lw := NewMemoryLW(pods, 1000)
	h := &pfHandler{}
	synced := h.arm(pods)
	r := side.build(lw, []*pfHandler{h})
	base := SettledHeap()
	stop := pfStart(r, lw)
	defer stop()
	pfWaitSynced(b, r)
	h.waitFor(b, synced, "initial adds")
	w := pfWatcher(b, lw)
	steady := SettledHeap()

	lw.SetResourceVersion(2000)
	relisted := h.arm(pods)
	sampler := StartHeapSampler(pfSampleEvery)
	start := time.Now()
	if err := w.SendExpired(); err != nil {
		b.Fatal(err)
	}
	h.waitFor(b, relisted, "relist")
	elapsed := time.Since(start)
	peak, peakLive := sampler.Stop()

	steadyMB := pfMB(steady, base)
	samples.add(side.id, "steady-MB", steadyMB)
	samples.add(side.id, "peak-MB", pfMB(peak, base))
	samples.add(side.id, "peaklive-MB", pfMB(peakLive, base))
	samples.add(side.id, "peak/steady", pfMB(peak, base)/steadyMB)
	samples.add(side.id, "peaklive/steady", pfMB(peakLive, base)/steadyMB)
	samples.add(side.id, "relist-ms", float64(elapsed.Microseconds())/1000)
}
