package bench

import (
	"runtime"
	"runtime/metrics"
	"time"
)

const (
	metricHeapLive = "/gc/heap/live:bytes"
	metricAllocs   = "/gc/heap/allocs:objects"
	metricAllocB   = "/gc/heap/allocs:bytes"
	metricGCCycles = "/gc/cycles/total:gc-cycles"
)

// HeapAllocs returns the cumulative heap allocations since the program
// started: their number and their bytes.
func HeapAllocs() (objects, bytes uint64) {
	s := []metrics.Sample{{Name: metricAllocs}, {Name: metricAllocB}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

// LiveHeap forces two full GC cycles and returns the live heap the second
// one marked (/gc/heap/live:bytes): what the program holds now, garbage
// excluded.
func LiveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	_, live := readGCLive()
	return live
}

// HeapPhase measures the heap of one phase of a benchmark (an initial sync,
// a relist) with the one definition every heap figure of the package uses:
//
//   - Base, the baseline: the live heap after two forced GC cycles when
//     the phase starts (LiveHeap);
//   - peak live: the highest live heap marked by a GC cycle that completed
//     during the phase (LiveHeapWatch), End forcing one last cycle so that
//     at least one counts;
//   - retained: the live heap after the phase and two forced GC cycles.
//
// Peak and retained are reported above Base. The phase's allocations are
// counted from StartAllocs (or from StartHeapPhase) to StopAllocs.
//
// A HeapPhase is used by one goroutine.
type HeapPhase struct {
	// Base is the live heap when the phase started, in bytes.
	Base uint64

	watch          *LiveHeapWatch
	allocs0        uint64
	allocs         uint64
	allocsCounting bool
}

// StartHeapPhase reads the baseline and starts watching the live heap.
func StartHeapPhase() *HeapPhase {
	return StartHeapPhaseAt(LiveHeap())
}

// StartHeapPhaseAt starts watching the live heap of a phase whose figures
// are reported above base, a baseline read (with LiveHeap) before an
// earlier phase, so that the figures of both phases compare (the relist
// against the steady state after the initial sync).
func StartHeapPhaseAt(base uint64) *HeapPhase {
	p := &HeapPhase{Base: base}
	p.watch = StartLiveHeapWatch(time.Millisecond)
	p.StartAllocs()
	return p
}

// StartAllocs (re)starts counting the phase's heap allocations, for a phase
// whose measured part starts after some preparation.
func (p *HeapPhase) StartAllocs() {
	p.allocs0, _ = HeapAllocs()
	p.allocsCounting = true
}

// StopAllocs stops counting allocations and returns how many there were
// since StartAllocs. Later calls return the same count.
func (p *HeapPhase) StopAllocs() uint64 {
	if p.allocsCounting {
		n, _ := HeapAllocs()
		p.allocs = n - p.allocs0
		p.allocsCounting = false
	}
	return p.allocs
}

// End forces a GC cycle, stops watching and returns the peak live heap of
// the phase above Base, in MiB, and what the watch saw. It stops counting
// allocations if that still runs. Call it once.
func (p *HeapPhase) End() (peakMiB float64, seen LiveHeapPeak) {
	p.StopAllocs()
	runtime.GC()
	seen = p.watch.Stop()
	return mibAbove(seen.Peak, p.Base), seen
}

// Retained returns the live heap after two forced GC cycles above Base, in
// MiB. Call it after End, while what the phase built is still referenced.
func (p *HeapPhase) Retained() float64 {
	return mibAbove(LiveHeap(), p.Base)
}

// LiveHeapPeak is what a LiveHeapWatch saw.
type LiveHeapPeak struct {
	// Peak is the highest /gc/heap/live:bytes read after a GC cycle that
	// completed while the watch ran (0 when none did).
	Peak uint64
	// Cycles is the number of GC cycles that completed while the watch
	// ran; Unseen is how many of them completed so close to the next one
	// that their reading was overwritten before it could be read.
	Cycles, Unseen uint64
}

// LiveHeapWatch records the live heap the garbage collector marked at the
// end of each GC cycle that completes while it runs (runtime/metrics'
// /gc/heap/live:bytes, which every cycle updates once), by polling it with
// the cycle count.
type LiveHeapWatch struct {
	stop  chan struct{}
	done  chan struct{}
	start uint64
	last  uint64
	peak  LiveHeapPeak
}

// StartLiveHeapWatch starts a LiveHeapWatch polling every interval. Only
// cycles that complete after it started count.
func StartLiveHeapWatch(interval time.Duration) *LiveHeapWatch {
	w := &LiveHeapWatch{stop: make(chan struct{}), done: make(chan struct{})}
	w.start, _ = readGCLive()
	w.last = w.start
	go func() {
		defer close(w.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				w.poll()
			}
		}
	}()
	return w
}

// readGCLive reads the number of completed GC cycles and the live heap
// marked by the last of them, in one read.
func readGCLive() (cycles, live uint64) {
	s := []metrics.Sample{{Name: metricGCCycles}, {Name: metricHeapLive}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64()
}

func (w *LiveHeapWatch) poll() {
	cycles, live := readGCLive()
	if cycles == w.last {
		return
	}
	w.peak.Unseen += cycles - w.last - 1
	w.last = cycles
	w.peak.Peak = max(w.peak.Peak, live)
}

// Stop ends the watch, reads the metrics a last time (so that a cycle the
// caller just completed, e.g. with runtime.GC, counts) and returns what it
// saw. It must be called exactly once.
func (w *LiveHeapWatch) Stop() LiveHeapPeak {
	close(w.stop)
	<-w.done
	w.poll()
	w.peak.Cycles = w.last - w.start
	return w.peak
}

const bytesPerMiB = 1 << 20

// mibAbove returns bytes-base in MiB, 0 when bytes is below base.
func mibAbove(bytes, base uint64) float64 {
	if bytes < base {
		return 0
	}
	return float64(bytes-base) / bytesPerMiB
}
