package cache

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// Pagewise relists.
//
// The queues an informer builds for itself (newInformerQueue) take lists
// from the Reflector page by page (pagewiseReplacer) instead of in one
// Replace holding the whole list. Each listed object then replaces the old
// one for its key as soon as its page is processed, so the old object
// becomes garbage while later pages are still being fetched, and the old
// state and the whole new list are never alive at the same time. The
// Reflector waits before handing over the next page while earlier ones are
// still queued, so at most two pages are in flight: the one being processed
// and the one being fetched. The keys seen are
// tracked in a set; at the end, the keys that were not listed are deleted.
//
// With the informer's RealFIFO (AtomicEvents), the queue carries the list as
// a start marker, one Replaced delta per object (applied in batches like
// watch events), and an end marker; the consumer (deltaApplier) tracks the
// keys seen between the markers and at the end marker deletes the others.
// With a DeltaFIFO, the queue itself tracks the keys seen and queues the
// deletions at the end, as its Replace does.
//
// What handlers see, compared with a single Replace:
//   - the same events for the same objects: an update (OnUpdate with the
//     previously cached object) for every listed key that was cached, an add
//     (isInInitialList true on the first list) for every other listed key,
//     and a delete carrying DeletedFinalStateUnknown (with the last cached
//     object) for every cached key that was not listed, in key order;
//   - but the deletions come after the adds and updates of the listed
//     objects, not before them: which keys vanished is only known once the
//     last page has been processed;
//   - a list that fails in the middle (a failed page request, the stop of
//     the informer) leaves what its pages applied in the cache and deletes
//     nothing; the next list starts over and decides the deletions. Its
//     objects that were already applied are reported again as updates
//     (with equal resource versions when unchanged), as by a second relist.
//     The same holds when a continue token expires in the middle of a paged
//     list: the list starts over as one unpaged request.
//
// Listers read the cache while it is being relisted: during a relist they
// may see some objects already in their new state and others still in their
// old one (client-go's RealFIFO with AtomicEvents swaps the whole cache at
// once, at the price of holding the old state and the whole new list
// together). Every object is always a state the server reported. HasSynced
// still turns true only after the last page of the first list (and its end)
// has been processed.

// Marker delta types of a pagewise list in an informer's RealFIFO. They
// never leave the informer (its consumer is a deltaApplier).
const (
	// deltaReplaceStart begins a pagewise list; Object is nil.
	deltaReplaceStart DeltaType = "kinformer.ReplaceStart"
	// deltaReplaceForget drops keys from the listed set; Object is a
	// []string.
	deltaReplaceForget DeltaType = "kinformer.ReplaceForget"
	// deltaReplaceEnd completes a pagewise list; Object is a
	// replaceEndInfo.
	deltaReplaceEnd DeltaType = "kinformer.ReplaceEnd"
)

// replaceEndInfo is the Object of a deltaReplaceEnd delta.
type replaceEndInfo struct {
	resourceVersion string
}

// pagewiseQueue is the state a queue keeps to take lists page by page.
// All fields are guarded by the queue's lock.
type pagewiseQueue struct {
	on bool
	// space is signalled when the consumer popped deltas while the
	// producer waits in replacePage (waiters > 0).
	space   sync.Cond
	waiters int
	// seen is the set of keys listed so far (DeltaFIFO only).
	seen map[string]struct{}
	// scratch holds a page's entries between computing them and queueing
	// them (RealFIFO only; the Reflector's goroutine is the only caller).
	scratch []realFIFOEntry
}

// enablePagewiseReplace makes q, a queue built by newInformerQueue, take
// lists page by page; it returns q.
func enablePagewiseReplace(q Queue) Queue {
	switch f := q.(type) {
	case *RealFIFO:
		f.lock.Lock()
		f.pw.on = f.emitAtomicEvents
		f.pw.space.L = &f.lock
		f.lock.Unlock()
	case *DeltaFIFO:
		f.lock.Lock()
		f.pw.on = true
		f.pw.space.L = &f.lock
		f.lock.Unlock()
	}
	return q
}

// poppedLocked wakes a producer waiting for the queue to drain. Called
// with the queue's lock held, after deltas were popped or the queue closed.
func (p *pagewiseQueue) poppedLocked() {
	if p.waiters > 0 {
		p.space.Broadcast()
	}
}

// waitLocked blocks, with lock held (released while waiting), until more
// than limit returns false, the queue is closed or ctx ends.
func (p *pagewiseQueue) waitLocked(ctx context.Context, lock sync.Locker, closed func() bool, more func() bool) error {
	if !more() {
		return nil
	}
	stop := context.AfterFunc(ctx, func() {
		lock.Lock()
		p.space.Broadcast()
		lock.Unlock()
	})
	defer stop()
	for more() {
		if closed() {
			return ErrFIFOClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		p.waiters++
		p.space.Wait()
		p.waiters--
	}
	return nil
}

// pagewiseReplace implements pagewiseReplacer.
func (f *RealFIFO) pagewiseReplace() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.pw.on
}

// replaceStart implements pagewiseReplacer: it queues the start marker.
func (f *RealFIFO) replaceStart() error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.pushLocked(realFIFOEntry{delta: Delta{Type: deltaReplaceStart}})
	return nil
}

// replacePage implements pagewiseReplacer: it queues a forget marker (when
// forget is not empty) and a Replaced delta per object, then waits until
// the consumer has popped them all: the next page is fetched while this one
// is processed, and at most these two pages are in flight.
func (f *RealFIFO) replacePage(ctx context.Context, objs []interface{}, forget []string) error {
	entries := f.pw.scratch[:0]
	for _, obj := range objs {
		key, err := f.keyOf(obj)
		if err != nil {
			utilruntime.HandleErrorWithLogger(f.logger, err, "Listed object has no key; skipping it", "objectType", fmt.Sprintf("%T", obj))
			continue
		}
		if obj, err = f.transform(obj, key); err != nil {
			clear(entries)
			f.pw.scratch = entries[:0]
			return err
		}
		entries = append(entries, realFIFOEntry{delta: Delta{Type: Replaced, Object: obj}, key: key})
	}
	defer func() {
		clear(entries)
		f.pw.scratch = entries[:0]
	}()

	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	if len(forget) > 0 {
		f.pushLocked(realFIFOEntry{delta: Delta{Type: deltaReplaceForget, Object: slices.Clone(forget)}})
	}
	for _, e := range entries {
		f.pushLocked(e)
	}
	return f.pw.waitLocked(ctx, &f.lock, f.closed.Load, func() bool { return f.items.len() > 0 })
}

// replaceEnd implements pagewiseReplacer: it queues the end marker; the
// first list's end makes everything queued the initial batch.
func (f *RealFIFO) replaceEnd(resourceVersion string) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.pushLocked(realFIFOEntry{delta: Delta{Type: deltaReplaceEnd, Object: replaceEndInfo{resourceVersion: resourceVersion}}})
	f.gate.firstReplace(f.items.len())
	return nil
}

// pagewiseReplace implements pagewiseReplacer.
func (f *DeltaFIFO) pagewiseReplace() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return f.pw.on
}

// replaceStart implements pagewiseReplacer: it starts a new set of listed
// keys.
func (f *DeltaFIFO) replaceStart() error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.pw.seen = make(map[string]struct{})
	return nil
}

// replacePage implements pagewiseReplacer: it queues a Replaced (or Sync)
// delta per object and records its key as listed, then waits until the
// consumer has popped every queued key.
func (f *DeltaFIFO) replacePage(ctx context.Context, objs []interface{}, forget []string) error {
	action := Sync
	if f.emitDeltaTypeReplaced {
		action = Replaced
	}
	keys := make([]string, 0, len(objs))
	out := make([]interface{}, 0, len(objs))
	for _, obj := range objs {
		key, err := f.KeyOf(obj)
		if err != nil {
			utilruntime.HandleErrorWithLogger(f.logger, err, "Listed object has no key; skipping it", "objectType", fmt.Sprintf("%T", obj))
			continue
		}
		if obj, err = f.transform(obj, key); err != nil {
			return err
		}
		keys = append(keys, key)
		out = append(out, obj)
	}

	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	if f.pw.seen == nil {
		f.pw.seen = make(map[string]struct{})
	}
	for _, key := range forget {
		delete(f.pw.seen, key)
	}
	for i, key := range keys {
		f.pw.seen[key] = struct{}{}
		f.appendLocked(key, Delta{Type: action, Object: out[i]})
	}
	return f.pw.waitLocked(ctx, &f.lock, f.closed.Load, func() bool { return f.queue.len() > 0 })
}

// replaceEnd implements pagewiseReplacer: it queues a Deleted delta
// carrying DeletedFinalStateUnknown for every queued key (in queue order)
// and every KnownObjects key (in key order, when not queued) that was not
// listed, as Replace does (Replace uses ListKeys order for the latter).
// resourceVersion serves the queue's watermark, as in Replace.
func (f *DeltaFIFO) replaceEnd(resourceVersion string) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	if f.wm != nil {
		defer f.wm.listed(resourceVersion)
	}
	listed := f.pw.seen
	f.pw.seen = nil
	if listed == nil {
		listed = map[string]struct{}{}
	}
	for i, n := 0, f.queue.len(); i < n; i++ {
		key := *f.queue.at(i)
		if _, ok := listed[key]; ok {
			continue
		}
		var last interface{}
		if newest := f.items[key].Newest(); newest != nil {
			last = newest.Object
			if tomb, ok := last.(DeletedFinalStateUnknown); ok {
				last = tomb.Obj
			}
		}
		f.appendLocked(key, Delta{Type: Deleted, Object: DeletedFinalStateUnknown{Key: key, Obj: last}})
	}
	if f.knownObjects != nil {
		known := f.knownObjects.ListKeys()
		slices.Sort(known)
		for _, key := range known {
			if _, ok := listed[key]; ok {
				continue
			}
			if len(f.items[key]) > 0 {
				continue
			}
			obj, exists, err := f.knownObjects.GetByKey(key)
			if err != nil {
				obj = nil
				utilruntime.HandleErrorWithLogger(f.logger, err, "Known object lookup failed, queueing DeletedFinalStateUnknown without object", "key", key)
			} else if !exists {
				obj = nil
				f.logger.Info("Key listed by known objects has no object, queueing DeletedFinalStateUnknown without object", "key", key)
			}
			f.appendLocked(key, Delta{Type: Deleted, Object: DeletedFinalStateUnknown{Key: key, Obj: obj}})
		}
	}
	f.gate.firstReplace(f.queue.len())
	if f.queue.len() > 0 {
		f.cond.Broadcast()
	}
	return nil
}

// applierRelist is the consumer's state of a pagewise list: the keys listed
// so far. seen is nil when the cache was empty at the list's start (the
// first list, usually): such a list deletes only what a streaming list
// forgot (and did not list again), so only those keys are tracked, in
// forgotten.
type applierRelist struct {
	seen      map[string]struct{}
	forgotten map[string]struct{}
}

// noteListed records the keys of the Replaced deltas among deltas (keys are
// their keys when known, else nil) as listed by the pagewise list in
// progress.
func (a *deltaApplier) noteListed(deltas []Delta, keys []string) {
	seen := a.relist.seen
	if seen == nil {
		seen = a.relist.forgotten
		if len(seen) == 0 {
			return
		}
		// Listed again after being forgotten: no longer to delete.
		for i, d := range deltas {
			if d.Type != Replaced {
				continue
			}
			if keys != nil {
				delete(seen, keys[i])
			} else if key, err := a.storeKey(d.Object); err == nil {
				delete(seen, key)
			}
		}
		return
	}
	for i, d := range deltas {
		if d.Type != Replaced {
			continue
		}
		if keys != nil {
			seen[keys[i]] = struct{}{}
			continue
		}
		key, err := a.storeKey(d.Object)
		if err != nil {
			continue // the store rejects it too, and logs it
		}
		seen[key] = struct{}{}
	}
}

// storeKey computes obj's key as the store does.
func (a *deltaApplier) storeKey(obj interface{}) (string, error) {
	if c, ok := a.store.(*cache); ok {
		return c.key(obj)
	}
	return DeletionHandlingMetaNamespaceKeyFunc(obj)
}

// applyPagewiseMarker applies a marker delta of a pagewise list.
func (a *deltaApplier) applyPagewiseMarker(d Delta) {
	switch d.Type {
	case deltaReplaceStart:
		// A list still in progress was abandoned: it deletes nothing.
		var size int
		if c, ok := a.store.(*cache); ok {
			size = c.tsm.count()
		} else {
			size = len(a.store.ListKeys())
		}
		if size == 0 {
			a.relist = &applierRelist{}
			return
		}
		a.relist = &applierRelist{seen: make(map[string]struct{}, size)}
	case deltaReplaceForget:
		if a.relist == nil {
			return
		}
		keys, _ := d.Object.([]string)
		if a.relist.seen == nil {
			if a.relist.forgotten == nil {
				a.relist.forgotten = make(map[string]struct{}, len(keys))
			}
			for _, key := range keys {
				a.relist.forgotten[key] = struct{}{}
			}
			return
		}
		for _, key := range keys {
			delete(a.relist.seen, key)
		}
	case deltaReplaceEnd:
		info, _ := d.Object.(replaceEndInfo)
		a.finishRelist(info.resourceVersion)
	}
}

// finishRelist ends a pagewise list: every cached key that was not listed is
// deleted and reported with a DeletedFinalStateUnknown carrying the cached
// object, in key order; the store records resourceVersion.
func (a *deltaApplier) finishRelist(resourceVersion string) {
	relist := a.relist
	a.relist = nil
	if relist == nil {
		a.logger.Error(nil, "End of a pagewise list without its start; no deletions are derived from it", "resourceVersion", resourceVersion)
		a.store.Bookmark(resourceVersion)
		return
	}
	var vanished []DeletedFinalStateUnknown
	emptyAtStart := relist.seen == nil
	for _, key := range relist.candidates(a.store) {
		if _, ok := relist.seen[key]; ok {
			continue
		}
		old, exists, err := a.store.GetByKey(key)
		if err != nil || !exists {
			if emptyAtStart {
				continue // forgotten before it was stored
			}
			old = nil
		}
		vanished = append(vanished, DeletedFinalStateUnknown{Key: key, Obj: old})
	}
	relist.seen = nil
	slices.SortFunc(vanished, func(x, y DeletedFinalStateUnknown) int { return strings.Compare(x.Key, y.Key) })
	c, own := a.store.(*cache)
	for _, tomb := range vanished {
		if own {
			c.deleteKeyed(tomb.Key, nil)
		} else if err := a.store.Delete(tomb); err != nil {
			a.reject(err, string(Deleted), tomb)
			continue
		}
		a.derivedDeletes++
		a.handler.OnDelete(tomb)
	}
	a.store.Bookmark(resourceVersion)
}

// isPagewiseMarker reports whether t is one of the marker delta types of a
// pagewise list.
func isPagewiseMarker(t DeltaType) bool {
	return t == deltaReplaceStart || t == deltaReplaceForget || t == deltaReplaceEnd
}

// appliedDeltas returns how many deltas a pop of deltas applied to the
// cache, for the informer's DeltasProcessed: the markers of pagewise lists
// do not count, a whole list (ReplacedAll) counts its objects, and the
// deletions lists derived count one each (so a list counts one per listed
// object and one per object it deleted, however it was queued). It resets
// the derived count.
func (a *deltaApplier) appliedDeltas(deltas []Delta) uint64 {
	n := a.derivedDeletes
	a.derivedDeletes = 0
	for _, d := range deltas {
		switch {
		case isPagewiseMarker(d.Type):
		case d.Type == ReplacedAll:
			if info, ok := d.Object.(ReplacedAllInfo); ok {
				n += uint64(len(info.Objects))
			}
		default:
			n++
		}
	}
	return n
}

// candidates returns the keys a finished list may have to delete: every
// cached key, or, when the cache was empty at the list's start, the keys
// the stream forgot and did not list again (the rest was all listed).
func (r *applierRelist) candidates(store Store) []string {
	if r.seen != nil {
		return store.ListKeys()
	}
	keys := make([]string, 0, len(r.forgotten))
	for key := range r.forgotten {
		keys = append(keys, key)
	}
	return keys
}

// count returns the number of stored objects.
func (m *threadSafeMap) count() int {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return len(m.items)
}
