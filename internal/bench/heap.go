package bench

import (
	"runtime"
	"runtime/metrics"
	"time"
)

const (
	metricHeapObjects = "/memory/classes/heap/objects:bytes"
	metricHeapLive    = "/gc/heap/live:bytes"
	metricAllocs      = "/gc/heap/allocs:objects"
	metricAllocBytes  = "/gc/heap/allocs:bytes"
)

// HeapStats is one reading of the runtime's heap metrics.
type HeapStats struct {
	// Objects is the heap occupied by objects, live or not yet swept.
	Objects uint64
	// Live is the heap marked live by the last completed GC.
	Live uint64
	// Allocs and AllocBytes are the cumulative heap allocations (count and
	// bytes) since the program started.
	Allocs, AllocBytes uint64
}

// ReadHeap reads the heap metrics now.
func ReadHeap() HeapStats {
	s := []metrics.Sample{{Name: metricHeapObjects}, {Name: metricHeapLive}, {Name: metricAllocs}, {Name: metricAllocBytes}}
	metrics.Read(s)
	return HeapStats{
		Objects:    s[0].Value.Uint64(),
		Live:       s[1].Value.Uint64(),
		Allocs:     s[2].Value.Uint64(),
		AllocBytes: s[3].Value.Uint64(),
	}
}

// SettledHeap runs two full GCs and returns the heap in use by live objects
// afterwards.
func SettledHeap() uint64 {
	runtime.GC()
	runtime.GC()
	return ReadHeap().Objects
}

// HeapSampler records the peak heap while it runs: a goroutine reads the heap
// metrics every interval until Stop.
type HeapSampler struct {
	stop     chan struct{}
	done     chan struct{}
	peakObj  uint64
	peakLive uint64
}

// StartHeapSampler starts sampling every interval.
func StartHeapSampler(interval time.Duration) *HeapSampler {
	h := &HeapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	h.sample()
	go func() {
		defer close(h.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-t.C:
				h.sample()
			}
		}
	}()
	return h
}

func (h *HeapSampler) sample() {
	s := ReadHeap()
	h.peakObj = max(h.peakObj, s.Objects)
	h.peakLive = max(h.peakLive, s.Live)
}

// Stop ends sampling, takes a last sample and returns the peak heap in use
// by objects (garbage not yet swept included) and the peak live heap seen at
// the end of a GC. It must be called exactly once.
func (h *HeapSampler) Stop() (peakObjects, peakLive uint64) {
	close(h.stop)
	<-h.done
	h.sample()
	return h.peakObj, h.peakLive
}

const metricGCCycles = "/gc/cycles/total:gc-cycles"

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
