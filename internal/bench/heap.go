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
