package cache

import (
	"context"
	"slices"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// Relists applied page by page (SharedIndexInformerOptions.RelistPageByPage,
// a kinformer extension).
//
// By default an informer applies a relist atomically, as client-go does: the
// whole list is queued as one ReplacedAll once complete, so the old state
// and the new list are in memory together until the processing loop swaps
// them (only the objects that changed are held twice, see
// RealFIFO.listedObject). With RelistPageByPage, the queue takes a relist
// page by page instead: the objects of a page are queued (as Replaced
// deltas) when the page is complete, and the Reflector fetches the next page
// only once the processing loop has popped them, so at most two pages are in
// flight. When the last page has been applied, the queue looks at the cache
// for the keys the list did not have and queues their deletions (carrying
// DeletedFinalStateUnknown with the cached object, in key order), then a
// Bookmark at the list's resourceVersion. The first list of an informer is
// always taken whole: there is no old state for it to replace.
//
// What handlers and listers see, compared with an atomic relist:
//   - the same events for the same objects: an update (OnUpdate with the
//     previously cached object) for every listed key that was cached, an
//     add for every other listed key, and a delete carrying
//     DeletedFinalStateUnknown for every cached key that was not listed;
//   - but the deletions come after the adds and updates, not before them:
//     which keys vanished is only known once the last page is applied;
//   - listers see partial states while a relist runs: some objects already
//     in their new state, others still in their old one, and objects the
//     server no longer has. Every object is always a state the server
//     reported;
//   - a list that fails in the middle (a failed page request, the stop of
//     the informer) leaves what its pages applied in the cache and deletes
//     nothing; the next list starts over and decides the deletions. Its
//     objects that were applied already are reported again as updates. The
//     same holds when a continue token expires in the middle of a list: it
//     starts over with one unpaged request.
//
// The cache's resourceVersion stays a watermark: the Replaced deltas of the
// pages do not move it (a page does not say that every change up to the
// list's version is applied); the Bookmark after the deletions does.
// WaitForResourceVersion therefore relies on the version the cache had
// before it during such a relist; an informer stopped before the relist is
// complete writes no snapshot (its cache holds newer states of some objects
// under the older version; see SharedIndexInformerOptions.SnapshotFile).

// informerLists is how a queue an informer builds for itself takes lists.
type informerLists struct {
	// cached is the informer's cache: the page-by-page relist looks there
	// for what the list no longer has.
	cached KeyListerGetter
	// pageByPage: relists are applied page by page.
	pageByPage bool
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
// returns false, the queue is closed (ErrFIFOClosed) or ctx ends (its
// error).
func (w *drainWait) waitLocked(ctx context.Context, lock sync.Locker, closed func() bool, busy func() bool) error {
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
			return ErrFIFOClosed
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

// vanishedKeys returns a DeletedFinalStateUnknown, carrying the cached
// object, for every key of cached (in key order) that is not in listed. A
// failed lookup is logged and yields a tombstone without object.
func vanishedKeys(logger klog.Logger, cached KeyListerGetter, listed map[string]struct{}) []DeletedFinalStateUnknown {
	if cached == nil {
		return nil
	}
	keys := cached.ListKeys()
	slices.Sort(keys)
	var out []DeletedFinalStateUnknown
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
		out = append(out, DeletedFinalStateUnknown{Key: key, Obj: obj})
	}
	return out
}
