package bench

import (
	"errors"
	"fmt"
	"github.com/stretchr/testify/assert"
	"runtime"
	"strconv"
	"testing"
	"time"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kinformer/kinformer/cache"
)

// Every benchmark op measures one pair: the scenario once on each side
// (kinformer, client-go, and the floor where the scenario has one), in an
// order that rotates from op to op (sideOrder), and reports each side's
// figures as "<side>-<figure>" metrics (k = kinformer, c = client-go, f =
// the floor). With -benchtime 1x and -count N the output has N result
// lines per benchmark, one per pair. ns/op covers all sides and is not a
// figure of interest. cmd/benchtable turns the output into the comparison
// table.
//
// The heap figures (peaklive-MB, retained-MB, steady-MB, B/pod) come from
// child processes, one per side and op (child_test.go), and follow the one
// definition of HeapPhase: above the child's live heap after two forced GC
// cycles before the phase (the baseline), the peak is the highest live heap
// marked by a GC cycle of the phase and the retained heap the live heap
// after it and two forced GC cycles. The baseline is read after the
// informer (and its clientset or ListerWatcher) is built and before any
// pod exists in the child: pods that an in-memory ListerWatcher hands over
// are built after it and count, as the decoded pods of a real LIST would.

// BenchmarkSync is the initial sync of a realistic pod population
// (NewPod) from an in-memory LIST into a SharedIndexInformer with the
// namespace index and one handler, each side in its own process. Sizes:
// 1,000, 10,000, 50,000 and 100,000 pods with KINFORMER_BENCH_FULL=1,
// 1,000 to 10,000 otherwise. Figures: sync-ms (from Run to HasSynced),
// peaklive-MB and retained-MB (the sync's heap phase; it includes the
// listed pods, built after the baseline), allocs/pod (heap allocations
// from Run until the handler has seen every pod, per pod).
func BenchmarkSync(b *testing.B) {
	for _, pods := range sizesFor([]int{1000, 2000, 5000, 10000}, []int{1000, 10000, 50000, 100000}) {
		b.Run(paramName("pods", pods), func(b *testing.B) {
			samples := figureSamples{}
			for range b.N {
				runPairInChildren(b, childSpec{Scenario: childSync, Pods: pods}, memorySides, samples)
			}
			samples.report(b)
		})
	}
}

// syncChild is BenchmarkSync's side in its child process.
func syncChild(s childSpec, _ func() error) (any, error) {
	lw := NewMemoryLW(s.Pods, 1000)
	h := &countingHandler{}
	handlerDone := h.arm(s.Pods)
	r, err := buildMemorySide(s.Side, lw, []*countingHandler{h})
	if err != nil {
		return nil, err
	}
	phase := StartHeapPhase()
	lw.SetNextList(NewPodList(0, s.Pods, "1000"))
	// Collect once the list is built, so that every side starts the sync
	// from the same heap: the list's growth makes a collection due at
	// once, and left to the timed sync it marks every listed pod on one
	// side and not the other, by chance (the A/A spread of the rows was
	// ±140 % to ±700 % before). The informer's own garbage still
	// triggers what it triggers.
	runtime.GC()
	phase.StartAllocs()
	cpu := processCPU()
	start := time.Now()
	stop := startInformer(r, lw)
	defer stop()
	return syncFigures(phase, start, cpu, r, h, handlerDone, s.Pods)
}

// syncFigures are the figures of an initial sync of pods pods started at
// start within phase: it waits until r has synced (sync-ms) and h has seen
// every pod (handlerDone), then ends phase (peaklive-MB, retained-MB, and
// allocs/pod since phase's allocation count started). cpu-us/pod is the
// process's CPU time (user and system, every goroutine, the garbage
// collector's included) from cpu0, read at start, until h saw every pod.
func syncFigures(phase *HeapPhase, start time.Time, cpu0 time.Duration, r informerUnderTest, h *countingHandler, handlerDone <-chan struct{}, pods int) (childFigures, error) {
	if err := waitClosed(r.synced, "sync"); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	if err := h.wait(handlerDone, "initial adds"); err != nil {
		return nil, err
	}
	cpu := processCPU() - cpu0
	allocs := phase.StopAllocs()
	peak, _ := phase.End()
	return childFigures{
		"sync-ms":     float64(elapsed.Microseconds()) / 1000,
		"peaklive-MB": peak,
		"retained-MB": phase.Retained(),
		"allocs/pod":  float64(allocs) / float64(pods),
		"cpu-us/pod":  float64(cpu.Microseconds()) / float64(pods),
	}, nil
}

// eventsPerOp is how many MODIFIED events one side of BenchmarkEvents
// receives per number of handlers: 200,000 (at full sizes), and 150,000 at
// 50 handlers, where client-go delivers about 35,000 events/s on 2 cores,
// so that 10 pairs take under a minute of client-go's time.
func eventsPerOp(handlers int) int {
	if handlers >= 50 {
		return sizeFor(10000, 150000)
	}
	return sizeFor(40000, 200000)
}

// BenchmarkEvents is, after a sync of pods (2,000; 10,000 with
// KINFORMER_BENCH_FULL=1), MODIFIED events through the watch to an informer
// with several handlers (eventsPerOp events), in process. Rows:
//
//   - handlers=N (1, 10, 50): every handler only counts its notifications,
//     so the rows measure the informer's dispatch overhead, not a
//     controller's throughput;
//   - work=1us/handlers=N (1, 10): every handler call first does about
//     1 µs of computation over the pod (workOn, its rounds calibrated once
//     per process by calibrateWork, the same on every side; the time a
//     calibrated call took is reported as work-ns/call).
//
// Figures: events/s until every handler saw every event, and heap
// allocations and bytes per event (net of the one allocation per event
// the producer makes; workOn allocates nothing).
func BenchmarkEvents(b *testing.B) {
	pods := sizeFor(2000, 10000)
	templates := NewPodList(0, pods, "1000").Items
	rounds, perCall := calibrateWork(&templates[0], time.Microsecond)
	b.Logf("handler work: %d rounds of workOn, %v per call", rounds, perCall)
	for _, tc := range []struct {
		name     string
		handlers int
		work     int
	}{
		{"", 1, 0}, {"", 10, 0}, {"", 50, 0},
		{"work=1us/", 1, rounds}, {"work=1us/", 10, rounds},
	} {
		rvs := make([]string, eventsPerOp(tc.handlers))
		for i := range rvs {
			rvs[i] = strconv.Itoa(1001 + i)
		}
		b.Run(tc.name+paramName("handlers", tc.handlers), func(b *testing.B) {
			samples := figureSamples{}
			for range b.N {
				for _, side := range sideOrder(memorySides...) {
					runEventsOnce(b, side, tc.handlers, tc.work, templates, rvs, samples)
				}
			}
			samples.report(b)
			if tc.work > 0 {
				b.ReportMetric(float64(perCall.Nanoseconds()), "work-ns/call")
			}
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

// runEventsOnce runs BenchmarkEvents's scenario once on side, with
// handlers handlers each doing work rounds of workOn per notification.
func runEventsOnce(b *testing.B, side string, handlers, work int, templates []v1.Pod, rvs []string, samples figureSamples) {
	pods := len(templates)
	lw := NewMemoryLW(pods, 1000)
	hs := make([]*countingHandler, handlers)
	synced := make([]<-chan struct{}, handlers)
	for i := range hs {
		hs[i] = &countingHandler{work: work}
		synced[i] = hs[i].arm(pods)
	}
	r, err := buildMemorySide(side, lw, hs)
	if err != nil {
		b.Fatal(err)
	}
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
	allocs0, bytes0 := HeapAllocs()
	start := time.Now()
	if err := sendModified(w, templates, rvs); err != nil {
		b.Fatal(err)
	}
	for i, h := range hs {
		h.waitFor(b, done[i], "events")
	}
	elapsed := time.Since(start)
	allocs1, bytes1 := HeapAllocs()

	n := float64(len(rvs))
	podSize := float64(unsafe.Sizeof(v1.Pod{}))
	samples.add(side, "events/s", n/elapsed.Seconds())
	samples.add(side, "allocs/event", float64(allocs1-allocs0)/n-1)
	samples.add(side, "B/event", float64(bytes1-bytes0)/n-podSize)
}

// BenchmarkRelist is a relist under a running, synced informer (10,000
// pods; 50,000 with KINFORMER_BENCH_FULL=1), each side in its own process:
// the watch fails with 410 Gone and the informer relists the whole
// population at a newer resource version, so that every object changed
// and every listed object is notified. Figures, all heaps above the
// baseline read before the initial sync (so that they compare with each
// other):
//
//   - steady-MB: the live heap after the initial sync (two forced GCs);
//   - relist-ms: from the relist's first LIST request (not the reflector's
//     backoff of 0.8–1.6 s before it; the floor has none) to the handler's
//     last notification of the relist;
//   - peaklive-MB: the highest live heap over the GC cycles from the watch's
//     failure to the last notification (one forced at the end);
//   - retained-MB: the live heap after the relist, once the new watch is
//     open, and two forced GCs;
//   - peaklive/steady and retained/steady: their ratios to steady-MB.
//
// Relist/pods=N is every side on its defaults: kinformer's relist, like
// client-go's, is atomic. Relist/pagewise/pods=N runs kinformer with its
// opt-in RelistPageByPage (informers.WithRelistPageByPage), which applies
// each page as it arrives, as the floor does; client-go and the floor are
// as in the first row.
func BenchmarkRelist(b *testing.B) {
	pods := sizeFor(10000, 50000)
	for _, tc := range []struct {
		name     string
		pagewise bool
	}{{"", false}, {"pagewise/", true}} {
		b.Run(tc.name+paramName("pods", pods), func(b *testing.B) {
			samples := figureSamples{}
			for range b.N {
				runPairInChildren(b, childSpec{Scenario: childRelist, Pods: pods, Pagewise: tc.pagewise}, memorySides, samples)
			}
			samples.report(b)
		})
	}
}

// relistChild is BenchmarkRelist's side in its child process.
func relistChild(s childSpec, _ func() error) (any, error) {
	lw := NewMemoryLW(s.Pods, 1000)
	h := &countingHandler{}
	synced := h.arm(s.Pods)
	r, err := buildMemorySideWith(s.Side, lw, []*countingHandler{h}, cache.SharedIndexInformerOptions{RelistPageByPage: s.Pagewise})
	if err != nil {
		return nil, err
	}
	base := LiveHeap()
	stop := startInformer(r, lw)
	defer stop()
	if err := waitClosed(r.synced, "sync"); err != nil {
		return nil, err
	}
	if err := h.wait(synced, "initial adds"); err != nil {
		return nil, err
	}
	w, err := awaitWatch(lw)
	if err != nil {
		return nil, err
	}
	steady := mibAbove(LiveHeap(), base)

	lw.SetResourceVersion(2000)
	relisted := h.arm(s.Pods)
	_, reopened := lw.Watcher()
	phase := StartHeapPhaseAt(base)
	lw.StartListClock()
	if err := w.SendExpired(); err != nil {
		return nil, err
	}
	if err := h.wait(relisted, "relist"); err != nil {
		return nil, err
	}
	end := h.reachedAt()
	peak, _ := phase.End()
	if err := waitClosed(reopened, "watch after the relist"); err != nil {
		return nil, err
	}
	retained := phase.Retained()
	first, ok := lw.ListClock()
	if !ok {
		return nil, errors.New("no LIST after the watch failed")
	}
	if steady <= 0 {
		return nil, fmt.Errorf("steady heap %.1f MiB", steady)
	}
	return childFigures{
		"relist-ms":       msBetween(first, end),
		"steady-MB":       steady,
		"peaklive-MB":     peak,
		"retained-MB":     retained,
		"peaklive/steady": peak / steady,
		"retained/steady": retained / steady,
	}, nil
}

// The events rows' handler work allocates nothing (the allocs/event figure
// stays the informer's) and depends on the pod and on the rounds.
func TestHandlerWorkAllocatesNothing(t *testing.T) {
	pods := NewPodList(0, 2, "1000").Items
	assert.Zero(t, testing.AllocsPerRun(100, func() { workOn(&pods[0], 8) }))
	assert.NotEqual(t, workOn(&pods[0], 8), workOn(&pods[1], 8))
	assert.NotEqual(t, workOn(&pods[0], 8), workOn(&pods[0], 9))
	assert.Zero(t, workOn(cache.DeletedFinalStateUnknown{Key: "a/b"}, 8))
	rounds, _ := calibrateWork(&pods[0], time.Microsecond)
	assert.Positive(t, rounds)
}
