// Package synctrack helps consumers of an informer tell when they are
// "synced": when the informer has delivered its initial list and the consumer
// has finished processing every item of that list. It mirrors
// k8s.io/client-go/tools/cache/synctrack.
//
// Both trackers in this package combine two facts:
//
//   - the upstream (usually an informer) has synced, reported once through
//     UpstreamHasSynced, and
//   - every item of the initial list that was announced with Start has been
//     reported back with Finished.
//
// Once both hold, the tracker is synced for good: HasSynced returns true and
// the channel returned by Done is closed. A tracker never becomes unsynced
// again.
package synctrack

import (
	"sync"
	"sync/atomic"
)

// syncLatch is a one-way switch with a channel that closes when the switch
// flips. The zero value is not usable; use newSyncLatch.
type syncLatch struct {
	once sync.Once
	ch   chan struct{}
	set  atomic.Bool
}

func newSyncLatch() syncLatch {
	return syncLatch{ch: make(chan struct{})}
}

// fire flips the latch. Calling it more than once is harmless.
func (l *syncLatch) fire() {
	l.once.Do(func() {
		l.set.Store(true)
		close(l.ch)
	})
}

// AsyncTracker tracks syncing when the items of the initial list are
// processed concurrently and possibly out of order, for example by several
// workers of a work queue. Items are identified by a comparable key of type T.
//
// The caller watches the upstream "has synced" state itself and calls
// UpstreamHasSynced once it has become true, after it has called Start for
// every key of the initial list.
//
// All methods are safe for concurrent use. Create instances with
// NewAsyncTracker; the zero value is not usable.
type AsyncTracker[T comparable] struct {
	name string

	upstreamSynced atomic.Bool

	mu      sync.Mutex
	pending map[T]struct{}

	latch syncLatch
}

// NewAsyncTracker returns a tracker that is not synced. The name is returned
// by Name and describes what is being waited for (for log messages).
func NewAsyncTracker[T comparable](name string) *AsyncTracker[T] {
	return &AsyncTracker[T]{name: name, latch: newSyncLatch()}
}

// Start records that the item with the given key, which is part of the
// initial list, is about to be processed. It must be called before the
// upstream reports that it has synced.
func (t *AsyncTracker[T]) Start(key T) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pending == nil {
		t.pending = make(map[T]struct{})
	}
	t.pending[key] = struct{}{}
}

// Finished records that the item with the given key has been processed.
// Keys are tracked individually, so calling Finished for a key that was never
// started (for example because the caller cannot tell whether an item came
// from the initial list) is allowed and has no effect on other keys.
func (t *AsyncTracker[T]) Finished(key T) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.pending, key)
	if len(t.pending) == 0 && t.upstreamSynced.Load() {
		t.latch.fire()
	}
}

// UpstreamHasSynced tells the tracker that the upstream has synced. It must be
// called at least once, after Start has been called for every key of the
// initial list. Further calls have no effect.
func (t *AsyncTracker[T]) UpstreamHasSynced() {
	t.upstreamSynced.Store(true)
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) == 0 {
		t.latch.fire()
	}
}

// HasSynced reports whether the upstream has synced and every started key has
// finished. It does not block.
func (t *AsyncTracker[T]) HasSynced() bool {
	return t.latch.set.Load()
}

// Done returns a channel that is closed once HasSynced has become true. The
// same channel is returned on every call.
func (t *AsyncTracker[T]) Done() <-chan struct{} {
	return t.latch.ch
}

// Name returns the name passed to NewAsyncTracker.
func (t *AsyncTracker[T]) Name() string {
	return t.name
}

// SingleFileTracker tracks syncing when the items of the initial list are
// processed one after the other, in the order in which they were started (for
// example by the single goroutine of an event handler). It only counts items,
// which makes Start and Finished cheap.
//
// The caller watches the upstream "has synced" state itself and calls
// UpstreamHasSynced once it has become true, after it has called Start for
// every item of the initial list.
//
// All methods are safe for concurrent use. Create instances with
// NewSingleFileTracker; the zero value is not usable.
type SingleFileTracker struct {
	name string

	// outstanding counts items that were started but have not finished yet.
	outstanding atomic.Int64

	upstreamSynced atomic.Bool

	latch syncLatch
}

// NewSingleFileTracker returns a tracker that is not synced. The name is
// returned by Name and describes what is being waited for (for log messages).
func NewSingleFileTracker(name string) *SingleFileTracker {
	return &SingleFileTracker{name: name, latch: newSyncLatch()}
}

// Start records that one more item of the initial list is about to be
// processed. It must be called before the upstream reports that it has
// synced.
func (t *SingleFileTracker) Start() {
	t.outstanding.Add(1)
}

// Finished records that one started item has been processed. A call
// without a matching Start is a logic error of the caller; it is ignored
// (the counter never drops below zero), so the tracker stays correct for
// all paired calls. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (t *SingleFileTracker) Finished() {
	for {
		n := t.outstanding.Load()
		if n <= 0 {
			return
		}
		if t.outstanding.CompareAndSwap(n, n-1) {
			if n == 1 && t.upstreamSynced.Load() {
				t.latch.fire()
			}
			return
		}
	}
}

// UpstreamHasSynced tells the tracker that the upstream has synced. It must be
// called at least once, after Start has been called for every item of the
// initial list. Further calls have no effect.
func (t *SingleFileTracker) UpstreamHasSynced() {
	t.upstreamSynced.Store(true)
	if t.outstanding.Load() == 0 {
		t.latch.fire()
	}
}

// HasSynced reports whether the upstream has synced and every started item
// has finished. It does not block.
func (t *SingleFileTracker) HasSynced() bool {
	return t.latch.set.Load()
}

// Done returns a channel that is closed once HasSynced has become true. The
// same channel is returned on every call.
func (t *SingleFileTracker) Done() <-chan struct{} {
	return t.latch.ch
}

// Name returns the name passed to NewSingleFileTracker.
func (t *SingleFileTracker) Name() string {
	return t.name
}
