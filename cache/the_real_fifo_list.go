package cache

import (
	"context"
	"errors"
	"fmt"
	"iter"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// Replace queues a relist. With AtomicEvents it queues one ReplacedAll delta
// whose ReplacedAllInfo holds the objects of list (transformed; the queue
// owns them from now on) and resourceVersion. Without it, it first queues a
// Deleted delta carrying DeletedFinalStateUnknown for every key missing from
// list that is queued (in order of first appearance, with the newest queued
// object, unless that newest delta already is a deletion) or known to
// KnownObjects (in ListKeys order, with the known object), then a Replaced
// delta for every object of list, in list order.
//
// The first Replace before any Add, Update or Delete makes everything then
// queued the initial batch for HasSynced. It returns a KeyError for an object
// without key (without AtomicEvents) or a transformer error (wrapped);
// nothing is queued then.
//
// Difference from client-go: a transformer error leaves the queue untouched
// also without AtomicEvents, where client-go's leaves it half-replaced (see
// COMPATIBILITY.md).
func (f *RealFIFO) Replace(newItems []interface{}, resourceVersion string) error {
	return replaceList(f.beginList(listSource{}), newItems, resourceVersion)
}

// beginList implements listTaker: a relist of a queue built with
// informerLists.pageByPage is applied page by page (pagewise_relist.go);
// any other list is gathered and queued whole at its end, as Replace
// describes.
func (f *RealFIFO) beginList(source listSource) listSink {
	if f.lists.pageByPage && source.relist {
		return f.newPageSink(source)
	}
	g := &gatherSink{
		streamed: source.streamed,
		prepare: func(key string, obj interface{}) (interface{}, error) {
			return f.listedObject(key, obj, source)
		},
	}
	if f.emitAtomicEvents {
		if source.streamed || f.lists.cached != nil {
			g.keyOf = f.keyOf
		}
		// The informer's own queue keeps the keys it computed, for the
		// delta applier.
		g.finishKeys = f.lists.cached != nil
		g.finish = f.queueReplacedAll
	} else {
		g.keyOf = f.keyOf
		g.strictKeys = true
		g.finishKeys = true
		g.finish = f.queueReplaced
	}
	return g
}

// listedObject returns what the queue keeps of obj, listed under key: the
// object the informer's cache holds for key when it is in obj's state (see
// unchangedCached), else obj transformed, or obj itself when it comes from
// a snapshot (it went through the transform before it was saved).
func (f *RealFIFO) listedObject(key string, obj interface{}, source listSource) (interface{}, error) {
	if source.loaded {
		return obj, nil
	}
	if !source.fresh {
		if cached, ok := f.unchangedCached(key, obj); ok {
			return cached, nil
		}
	}
	return f.transform(obj, key)
}

// unchangedCached returns the object the informer's cache holds for key when
// a list brings obj in the same state: both have the same, non-empty
// resourceVersion and the same UID (an object recreated with the same name,
// or another cluster's object in a cache loaded from a snapshot, is not the
// same object whatever its version). The Reflector does not ask for this on
// the first list after resuming from a snapshot or after the server said a
// version is too large (listSource.fresh). A relist then keeps the cached object and drops obj, the
// duplicate just decoded, so that during a relist only the objects that
// changed exist twice (the cached one and the listed one), and the
// transform does not run again on an object it ran on before. Only a queue
// an informer built for itself knows the cache.
func (f *RealFIFO) unchangedCached(key string, obj interface{}) (interface{}, bool) {
	if f.lists.cached == nil || key == "" {
		return nil, false
	}
	listed, err := storeMetaAccessor(obj)
	if err != nil || listed.GetResourceVersion() == "" {
		return nil, false
	}
	cached, exists, err := f.lists.cached.GetByKey(key)
	if err != nil || !exists {
		return nil, false
	}
	held, err := storeMetaAccessor(cached)
	if err != nil || held.GetResourceVersion() != listed.GetResourceVersion() || held.GetUID() != listed.GetUID() {
		return nil, false
	}
	return cached, true
}

// queueReplacedAll queues a complete list as one ReplacedAll delta, with
// the keys of its objects when the sink kept them (keys[i] is the key of
// objs[i]).
func (f *RealFIFO) queueReplacedAll(objs []interface{}, keys []string, resourceVersion string) error {
	info := ReplacedAllInfo{ResourceVersion: resourceVersion, Objects: objs}
	if len(keys) == len(objs) {
		info.keys = keys
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.pushLocked(realFIFOEntry{delta: Delta{Type: ReplacedAll, Object: info}})
	f.gate.firstReplace(f.items.len())
	return nil
}

// queueReplaced queues a complete list without AtomicEvents: the deletions
// of what it no longer has, then a Replaced delta per object (keys[i] is
// the key of objs[i]).
func (f *RealFIFO) queueReplaced(objs []interface{}, keys []string, _ string) error {
	listed := make(map[string]struct{}, len(keys))
	for _, key := range keys {
		listed[key] = struct{}{}
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	err := reconcileDeletions(f.logger, f.queuedLocked(), f.knownObjects, listed, func(tomb DeletedFinalStateUnknown) error {
		f.pushLocked(realFIFOEntry{delta: Delta{Type: Deleted, Object: tomb}, key: tomb.Key})
		return nil
	})
	if err != nil {
		return err
	}
	for i, obj := range objs {
		f.pushLocked(realFIFOEntry{delta: Delta{Type: Replaced, Object: obj}, key: keys[i]})
	}
	f.gate.firstReplace(f.items.len())
	return nil
}

// queuedLocked iterates over a snapshot of the queued (key, delta) pairs that
// concern one object, oldest first. The snapshot length is fixed up front, so
// entries pushed during the iteration are not visited.
func (f *RealFIFO) queuedLocked() iter.Seq2[string, Delta] {
	return func(yield func(string, Delta) bool) {
		for i, n := 0, f.items.len(); i < n; i++ {
			e := f.items.at(i)
			if !deltaTypeBatchable(e.delta.Type) {
				continue
			}
			if !yield(e.key, e.delta) {
				return
			}
		}
	}
}

// reconcileReplacement decides, for a relist newItems, which deletions and
// replacements a consumer should see, given the deltas still queued
// (queuedItems, may be nil) and the objects it already knows (knownObjects,
// may be nil): onDelete is called with a DeletedFinalStateUnknown for every
// key that is queued (its last queued delta not being a deletion) or known
// but missing from newItems, then onReplace for every object of newItems in
// order. keyOf computes keys. The first error stops the work and is returned
// (key errors as KeyError).
func reconcileReplacement(
	logger klog.Logger,
	queuedItems []Delta,
	knownObjects KeyListerGetter,
	newItems []interface{},
	keyOf func(obj interface{}) (string, error),
	onDelete func(obj DeletedFinalStateUnknown) error,
	onReplace func(obj interface{}) error,
) error {
	keyErr := func(obj interface{}, err error) error {
		var ke KeyError
		if errors.As(err, &ke) {
			return err
		}
		return KeyError{Obj: obj, Err: err}
	}
	listed := make(map[string]struct{}, len(newItems))
	for _, obj := range newItems {
		key, err := keyOf(obj)
		if err != nil {
			return keyErr(obj, err)
		}
		listed[key] = struct{}{}
	}
	queued := make([]string, len(queuedItems))
	for i, d := range queuedItems {
		key, err := keyOf(d.Object)
		if err != nil {
			return keyErr(d.Object, err)
		}
		queued[i] = key
	}
	seq := func(yield func(string, Delta) bool) {
		for i, d := range queuedItems {
			if !yield(queued[i], d) {
				return
			}
		}
	}
	if err := reconcileDeletions(logger, seq, knownObjects, listed, onDelete); err != nil {
		return err
	}
	for _, obj := range newItems {
		if err := onReplace(obj); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}
	return nil
}

// reconcileDeletions calls onDelete with a DeletedFinalStateUnknown for every
// key missing from listed that (a) appears in queued, whose last delta for
// the key is not already a deletion (in order of first appearance, carrying
// that last object), or (b) is listed by knownObjects (nil allowed) and does
// not appear in queued (in ListKeys order, carrying the known object, or nil
// when the lookup fails).
func reconcileDeletions(
	logger klog.Logger,
	queued iter.Seq2[string, Delta],
	knownObjects KeyListerGetter,
	listed map[string]struct{},
	onDelete func(DeletedFinalStateUnknown) error,
) error {
	var order []string
	last := make(map[string]Delta)
	for key, d := range queued {
		if _, seen := last[key]; !seen {
			order = append(order, key)
		}
		last[key] = d
	}
	for _, key := range order {
		if _, ok := listed[key]; ok {
			continue
		}
		d := last[key]
		if d.Type == Deleted {
			continue
		}
		if err := onDelete(DeletedFinalStateUnknown{Key: key, Obj: d.Object}); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}
	if knownObjects == nil {
		return nil
	}
	for _, key := range knownObjects.ListKeys() {
		if _, ok := listed[key]; ok {
			continue
		}
		if _, ok := last[key]; ok {
			continue
		}
		obj, exists, err := knownObjects.GetByKey(key)
		if err != nil {
			obj = nil
			utilruntime.HandleErrorWithLogger(logger, err, "Known object lookup failed, using DeletedFinalStateUnknown without object", "key", key)
		} else if !exists {
			obj = nil
			utilruntime.HandleErrorWithLogger(logger, nil, "Key listed by known objects has no object, using DeletedFinalStateUnknown without object", "key", key)
		}
		if err := onDelete(DeletedFinalStateUnknown{Key: key, Obj: obj}); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}
	return nil
}

// relistsPageByPage implements listTaker.
func (f *RealFIFO) relistsPageByPage() bool {
	return f.lists.pageByPage
}

// newPageSink returns the sink of a relist the queue applies page by page.
func (f *RealFIFO) newPageSink(source listSource) listSink {
	return &pageSink{
		logger:   f.logger,
		keyOf:    f.keyOf,
		streamed: source.streamed,
		prepare: func(key string, obj interface{}) (interface{}, error) {
			return f.listedObject(key, obj, source)
		},
		hand:   f.queuePage,
		finish: f.finishPages,
	}
}

// queuePage queues a Replaced delta per object of page and waits until the
// consumer has popped them: the next page is fetched while this one is
// processed.
func (f *RealFIFO) queuePage(ctx context.Context, page []listedObject) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	for _, o := range page {
		if o.obj != nil {
			f.pushLocked(realFIFOEntry{delta: Delta{Type: Replaced, Object: o.obj}, key: o.key})
		}
	}
	return f.drain.waitLocked(ctx, &f.lock, f.closed.Load, func() bool { return f.items.len() > 0 })
}

// finishPages ends a relist applied page by page: once everything queued is
// processed, it queues a Deleted delta carrying DeletedFinalStateUnknown for
// every cached key (in key order) that was not listed, then a Bookmark at
// resourceVersion.
func (f *RealFIFO) finishPages(ctx context.Context, listed map[string]struct{}, resourceVersion string) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	err := f.drain.waitLocked(ctx, &f.lock, f.closed.Load, func() bool { return f.items.len() > 0 || f.processing > 0 })
	if err != nil {
		return err
	}
	// Nothing is queued or being processed, and the Reflector is the only
	// producer while it lists: the cache holds what the list's pages left.
	for _, tomb := range vanishedKeys(f.logger, f.lists.cached, listed) {
		f.pushLocked(realFIFOEntry{delta: Delta{Type: Deleted, Object: tomb}, key: tomb.Key})
	}
	f.pushLocked(realFIFOEntry{delta: Delta{Type: Bookmark, Object: BookmarkInfo{ResourceVersion: resourceVersion, listEnd: true}}})
	f.gate.firstReplace(f.items.len())
	return nil
}
