package diag

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// maxPendingConfirmations bounds the confirmations waiting for the store to
// reach them; the oldest is dropped beyond it (staleness then errs on the
// high side).
const maxPendingConfirmations = 16

// Confirmation is a resourceVersion the server said was current at a time.
type Confirmation struct {
	// ResourceVersion is the version confirmed.
	ResourceVersion string
	// At is when the server's answer arrived.
	At time.Time
}

// Freshness tracks how current an informer's cache is: the server confirms
// resourceVersions as current (a bookmark, a completed list, a staleness
// probe), and a confirmation counts once the cache's watermark has reached
// its resourceVersion, with the time the server's answer arrived.
//
// The Reflector calls Confirm; the informer calls WatermarkMoved whenever
// the cache's watermark moves. Without a watermark reader (Stats built by
// NewStats, for a Reflector built alone) nothing is tracked. Safe for
// concurrent use; get one from Stats.Freshness.
type Freshness struct {
	// storeRV returns the cache's watermark; nil means not tracked.
	storeRV func() string

	// waiting: pending is not empty, so WatermarkMoved must look.
	waiting atomic.Bool
	// received is the time (UnixNano) of the last confirmation received,
	// reached or not; 0 before the first.
	received atomic.Int64
	// probes and probeFailures count the staleness probes made and those
	// that failed.
	probes, probeFailures atomic.Uint64

	mu sync.Mutex
	// pending are the confirmations not yet reached, oldest first; a newer
	// one never has a resourceVersion at or below an older one's (that
	// older one is dropped: the newer is reached no later, and is newer).
	pending []Confirmation
	// confirmed is the newest confirmation reached (zero: none yet).
	confirmed Confirmation
}

// Confirm records that the server said rv was current at at. An empty rv
// is ignored, and so is everything when nothing is tracked.
func (f *Freshness) Confirm(rv string, at time.Time) {
	if f == nil || f.storeRV == nil || rv == "" {
		return
	}
	for ns := at.UnixNano(); ; {
		prev := f.received.Load()
		if ns <= prev || f.received.CompareAndSwap(prev, ns) {
			break
		}
	}
	f.mu.Lock()
	kept := f.pending[:0]
	for _, c := range f.pending {
		if !rvAtOrBelow(rv, c.ResourceVersion) {
			kept = append(kept, c)
		}
	}
	clear(f.pending[len(kept):])
	f.pending = kept
	if len(f.pending) == maxPendingConfirmations {
		f.pending = append(f.pending[:0], f.pending[1:]...)
	}
	f.pending = append(f.pending, Confirmation{ResourceVersion: rv, At: at})
	f.waiting.Store(true)
	f.mu.Unlock()
	// Read after waiting is set: a watermark move before this read is seen
	// here, one after it calls WatermarkMoved, which sees the confirmation.
	f.settle(f.storeRV())
}

// WatermarkMoved is called after the cache's watermark moved; it costs one
// atomic load while no confirmation waits.
func (f *Freshness) WatermarkMoved() {
	if f == nil || f.storeRV == nil || !f.waiting.Load() {
		return
	}
	f.settle(f.storeRV())
}

// settle counts the pending confirmations the cache at storeRV has reached.
func (f *Freshness) settle(storeRV string) {
	if storeRV == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := f.pending[:0]
	for _, c := range f.pending {
		if !rvAtOrBelow(c.ResourceVersion, storeRV) {
			kept = append(kept, c)
			continue
		}
		if f.confirmed.At.IsZero() || c.At.After(f.confirmed.At) {
			f.confirmed = c
		}
	}
	clear(f.pending[len(kept):])
	f.pending = kept
	f.waiting.Store(len(f.pending) > 0)
}

// LastConfirmed returns the newest confirmation the cache reached (zero:
// none).
func (f *Freshness) LastConfirmed() Confirmation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.confirmed
}

// LastReceived returns when the last confirmation arrived, reached or not
// (zero: none did).
func (f *Freshness) LastReceived() time.Time {
	if ns := f.received.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// CountProbe counts a staleness probe made.
func (f *Freshness) CountProbe() { f.probes.Add(1) }

// CountProbeFailure counts a staleness probe that failed.
func (f *Freshness) CountProbeFailure() { f.probeFailures.Add(1) }

// Probes returns how many staleness probes were made and how many of them
// failed.
func (f *Freshness) Probes() (made, failed uint64) {
	return f.probes.Load(), f.probeFailures.Load()
}

// rvAtOrBelow reports whether resourceVersion a is at or below b: compared
// as integers (KEP 4988), or, when they cannot be, equal.
func rvAtOrBelow(a, b string) bool {
	cmp, err := resourceversion.CompareResourceVersion(a, b)
	if err != nil {
		return a == b
	}
	return cmp <= 0
}
