package queue

import (
	"context"
	"slices"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// Lists is how a queue an informer builds for itself takes lists.
type Lists struct {
	// Cached is the informer's cache: the page-by-page relist looks there
	// for what the list no longer has, and a RealFIFO's list keeps a cached
	// object in place of a listed one in the same state.
	Cached KeyLister
	// PageByPage: relists are applied page by page.
	PageByPage bool
	// SetWatermark, when not nil, moves the watermark of the informer's
	// cache to rv (reset: even when lower). A Keyed queue tracking its
	// watermark calls it when a list leaves nothing to pop.
	SetWatermark func(rv string, reset bool)
}

// drainWait lets a producer wait until the consumer of a queue has caught up
// (a relist applied page by page hands over its next page only then).
// Its fields are guarded by the queue's lock; cond.L must be that lock.
type drainWait struct {
	cond    sync.Cond
	waiters int
}

// signalLocked wakes waiting producers. Called with the queue's lock held,
// after deltas were popped or processed, or the queue was closed.
func (w *drainWait) signalLocked() {
	if w.waiters > 0 {
		w.cond.Broadcast()
	}
}

// waitLocked blocks, with lock held (released while waiting), until busy
// returns false, the queue is closed (closedErr) or ctx ends (its error).
func (w *drainWait) waitLocked(ctx context.Context, lock sync.Locker, closed func() bool, closedErr error, busy func() bool) error {
	if !busy() {
		return nil
	}
	stop := context.AfterFunc(ctx, func() {
		lock.Lock()
		w.cond.Broadcast()
		lock.Unlock()
	})
	defer stop()
	for busy() {
		if closed() {
			return closedErr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		w.waiters++
		w.cond.Wait()
		w.waiters--
	}
	return nil
}

// vanishedKeys returns, for every key of cached (in key order) that is not
// in listed, the key and its cached object. A failed lookup is logged and
// yields a nil object.
func vanishedKeys(logger klog.Logger, cached KeyLister, listed map[string]struct{}) []listedObject {
	if cached == nil {
		return nil
	}
	keys := cached.ListKeys()
	slices.Sort(keys)
	var out []listedObject
	for _, key := range keys {
		if _, ok := listed[key]; ok {
			continue
		}
		obj, exists, err := cached.GetByKey(key)
		if err != nil {
			obj = nil
			utilruntime.HandleErrorWithLogger(logger, err, "Cached object lookup failed, using DeletedFinalStateUnknown without object", "key", key)
		} else if !exists {
			obj = nil
			utilruntime.HandleErrorWithLogger(logger, nil, "Key listed by the cache has no object, using DeletedFinalStateUnknown without object", "key", key)
		}
		out = append(out, listedObject{key: key, obj: obj})
	}
	return out
}
