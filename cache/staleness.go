package cache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// DefaultStalenessProbeInterval is the staleness probe interval of an
// informer whose SharedIndexInformerOptions.StalenessProbeInterval is zero:
// longer than the interval at which kube-apiserver's watch cache sends
// bookmarks (about a minute), so that an informer that gets them never
// probes.
const DefaultStalenessProbeInterval = 2 * time.Minute

// effectiveStalenessProbeInterval maps the option's value to the interval
// used: zero is the default, negative is none (returned as 0).
func effectiveStalenessProbeInterval(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultStalenessProbeInterval
	case d < 0:
		return 0
	}
	return d
}

// maxPendingConfirmations bounds the confirmations waiting for the store to
// reach them; the oldest is dropped beyond it (staleness then errs on the
// high side).
const maxPendingConfirmations = 16

// confirmation is a resourceVersion the server said was current at a time.
type confirmation struct {
	rv string
	at time.Time
}

// freshness tracks how current an informer's cache is (see
// InformerStatus.Confirmed): the server confirms resourceVersions as
// current (a bookmark, a completed list, a staleness probe), and a
// confirmation counts once the cache's watermark has reached its
// resourceVersion, with the time the server's answer arrived.
//
// The Reflector calls confirm; the informer calls storeMoved whenever the
// cache's watermark moves. Without storeRV (a Reflector built alone) nothing
// is tracked. Safe for concurrent use.
type freshness struct {
	// storeRV returns the cache's watermark; nil means not tracked.
	storeRV func() string

	// waiting: pending is not empty, so storeMoved must look.
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
	pending []confirmation
	// confirmed is the newest confirmation reached (zero: none yet).
	confirmed confirmation
}

// confirm records that the server said rv was current at at. An empty rv is
// ignored.
func (f *freshness) confirm(rv string, at time.Time) {
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
		if !rvAtOrBelow(rv, c.rv) {
			kept = append(kept, c)
		}
	}
	clear(f.pending[len(kept):])
	f.pending = kept
	if len(f.pending) == maxPendingConfirmations {
		f.pending = append(f.pending[:0], f.pending[1:]...)
	}
	f.pending = append(f.pending, confirmation{rv: rv, at: at})
	f.waiting.Store(true)
	f.mu.Unlock()
	// Read after waiting is set: a watermark move before this read is seen
	// here, one after it calls storeMoved, which sees the confirmation.
	f.settle(f.storeRV())
}

// storeMoved is called after the cache's watermark moved; it costs one
// atomic load while no confirmation waits.
func (f *freshness) storeMoved() {
	if f == nil || f.storeRV == nil || !f.waiting.Load() {
		return
	}
	f.settle(f.storeRV())
}

// settle counts the pending confirmations the cache at storeRV has reached.
func (f *freshness) settle(storeRV string) {
	if storeRV == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := f.pending[:0]
	for _, c := range f.pending {
		if !rvAtOrBelow(c.rv, storeRV) {
			kept = append(kept, c)
			continue
		}
		if f.confirmed.at.IsZero() || c.at.After(f.confirmed.at) {
			f.confirmed = c
		}
	}
	clear(f.pending[len(kept):])
	f.pending = kept
	f.waiting.Store(len(f.pending) > 0)
}

// lastConfirmed returns the newest confirmation the cache reached.
func (f *freshness) lastConfirmed() confirmation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.confirmed
}

// lastReceived returns when the last confirmation arrived (zero: none did).
func (f *freshness) lastReceived() time.Time {
	if ns := f.received.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
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

// errProbeNoResourceVersion is a probe answer without a resourceVersion.
var errProbeNoResourceVersion = errors.New("the list has no resourceVersion")

// runStalenessProbe confirms the cache's resourceVersion with a LIST of one
// object (limit=1, resourceVersion "": a consistent read) whenever no
// confirmation arrived for interval while the informer has synced. It runs
// until ctx ends; its timer runs on timers.
func (s *sharedIndexInformer) runStalenessProbe(ctx context.Context, interval time.Duration, timers clock.Clock) {
	lw := ToListerWatcherWithContext(s.listerWatcher)
	t := timers.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		wait := interval
		if s.HasSynced() {
			last := s.stats.freshness.lastReceived()
			if since := s.clock.Since(last); last.IsZero() || since >= interval {
				s.probeStaleness(ctx, lw)
			} else {
				wait = interval - since
			}
		}
		t.Reset(wait)
	}
}

// probeStaleness makes one staleness probe.
func (s *sharedIndexInformer) probeStaleness(ctx context.Context, lw ListerWatcherWithContext) {
	f := &s.stats.freshness
	obj, err := lw.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: "", Limit: 1})
	at := s.clock.Now()
	if ctx.Err() != nil {
		return
	}
	f.probes.Add(1)
	var rv string
	if err == nil {
		var list metav1.ListInterface
		if list, err = meta.ListAccessor(obj); err == nil {
			if rv = list.GetResourceVersion(); rv == "" {
				err = errProbeNoResourceVersion
			}
		}
	}
	if err != nil {
		f.probeFailures.Add(1)
		klog.FromContext(ctx).V(2).Info("Staleness probe failed", "type", s.config.objectDescription, "objectType", s.objectType, "err", err)
		return
	}
	f.confirm(rv, at)
}
