package queue

import (
	"context"
	"fmt"
	"iter"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// Replace queues a relist (see BeginList): with Atomic one ReplacedAll
// delta, else deletions of what the list no longer has, then a Replaced
// delta per listed object. The queue owns list from then on.
func (r *Real[D, O]) Replace(list []any, resourceVersion string) error {
	return ReplaceList(r.BeginList(Source{}), list, resourceVersion)
}

// BeginList starts a list from source. A relist of a queue configured with
// Lists.PageByPage is applied page by page; any other list is gathered and
// queued whole at its end: with Atomic as one ReplacedAll delta, else as
// Deleted deltas carrying tombstones for every key missing from the list
// that is queued (in order of first appearance, with the newest queued
// object, unless that newest delta already is a deletion) or Known (in
// ListKeys order, with the known object), then a Replaced delta for every
// listed object, in list order. The first list before any change makes
// everything then queued the initial batch.
func (r *Real[D, O]) BeginList(source Source) Sink {
	return r.beginList(r, source)
}

// whole implements lister.
func (r *Real[D, O]) whole(source Source) Sink {
	var o O
	g := &Gather{
		Streamed: source.Streamed,
		Prepare: func(key string, obj any) (any, error) {
			return r.listedObject(key, obj, source)
		},
		Refused: o.Refused,
	}
	if r.atomic {
		if source.Streamed || r.lists.Cached != nil {
			g.KeyOf = r.keyOf
		}
		// The informer's own queue keeps the keys it computed, for the
		// consumer.
		g.FinishKeys = r.lists.Cached != nil
		g.Finish = r.queueReplacedAll
	} else {
		g.KeyOf = r.keyOf
		g.StrictKeys = true
		g.FinishKeys = true
		g.Finish = r.queueReplaced
	}
	return g
}

// listedObject implements lister: it returns what the queue keeps of obj,
// listed under key: the object the informer's cache holds for key when it
// is in obj's state (see unchangedCached), else obj transformed, or obj
// itself when it comes from a snapshot (it went through the transform
// before it was saved).
func (r *Real[D, O]) listedObject(key string, obj any, source Source) (any, error) {
	if source.Loaded {
		return obj, nil
	}
	if !source.Fresh {
		if cached, ok := r.unchangedCached(key, obj); ok {
			return cached, nil
		}
	}
	return r.transform(obj, key)
}

// unchangedCached returns the object the informer's cache holds for key when
// a list brings obj in the same state: both have the same, non-empty
// resourceVersion and the same UID (an object recreated with the same name,
// or another cluster's object in a cache loaded from a snapshot, is not the
// same object whatever its version). Source.Fresh lists do not ask for
// this. A relist then keeps the cached object and drops obj, the duplicate
// just decoded, so that during a relist only the objects that changed exist
// twice (the cached one and the listed one), and the transform does not run
// again on an object it ran on before. Only a queue an informer built for
// itself knows the cache.
func (r *Real[D, O]) unchangedCached(key string, obj any) (any, bool) {
	if r.lists.Cached == nil || key == "" {
		return nil, false
	}
	var o O
	listed, err := o.Meta(obj)
	if err != nil || listed.GetResourceVersion() == "" {
		return nil, false
	}
	cached, exists, err := r.lists.Cached.GetByKey(key)
	if err != nil || !exists {
		return nil, false
	}
	held, err := o.Meta(cached)
	if err != nil || held.GetResourceVersion() != listed.GetResourceVersion() || held.GetUID() != listed.GetUID() {
		return nil, false
	}
	return cached, true
}

// queueReplacedAll queues a complete list as one ReplacedAll delta, with
// the keys of its objects when the sink kept them (keys[i] is the key of
// objs[i]).
func (r *Real[D, O]) queueReplacedAll(objs []any, keys []string, resourceVersion string) error {
	if len(keys) != len(objs) {
		keys = nil
	}
	var o O
	r.lock.Lock()
	defer r.lock.Unlock()
	r.initLocked()
	r.pushLocked(ReplacedAll, o.ReplacedAll(resourceVersion, objs, keys), "")
	r.gate.FirstReplace(r.items.Len())
	return nil
}

// queueReplaced queues a complete list without Atomic: the deletions of what
// it no longer has, then a Replaced delta per object (keys[i] is the key of
// objs[i]).
func (r *Real[D, O]) queueReplaced(objs []any, keys []string, _ string) error {
	listed := make(map[string]struct{}, len(keys))
	for _, key := range keys {
		listed[key] = struct{}{}
	}
	r.lock.Lock()
	defer r.lock.Unlock()
	r.initLocked()
	err := reconcileDeletions[D, O](r.logger, r.queuedLocked(), r.known, listed, func(key string, tomb any) error {
		r.pushLocked(Deleted, tomb, key)
		return nil
	})
	if err != nil {
		return err
	}
	for i, obj := range objs {
		r.pushLocked(Replaced, obj, keys[i])
	}
	r.gate.FirstReplace(r.items.Len())
	return nil
}

// queuedLocked iterates over a snapshot of the queued (key, delta) pairs that
// concern one object, oldest first. The snapshot length is fixed up front, so
// entries pushed during the iteration are not visited.
func (r *Real[D, O]) queuedLocked() iter.Seq2[string, D] {
	return func(yield func(string, D) bool) {
		for i, n := 0, r.items.Len(); i < n; i++ {
			e := r.items.At(i)
			if !e.kind.Batchable() {
				continue
			}
			if !yield(e.key, e.delta) {
				return
			}
		}
	}
}

// queuePage implements lister: it queues a Replaced delta per object of page
// and waits until the consumer has popped them: the next page is fetched
// while this one is processed.
func (r *Real[D, O]) queuePage(ctx context.Context, page []listedObject) error {
	var o O
	r.lock.Lock()
	defer r.lock.Unlock()
	r.initLocked()
	for _, l := range page {
		if l.obj != nil {
			r.pushLocked(Replaced, l.obj, l.key)
		}
	}
	return r.drain.waitLocked(ctx, &r.lock, r.closed.Load, o.Closed(), func() bool { return r.items.Len() > 0 })
}

// finishPages implements lister: once everything queued is processed, it
// queues a Deleted delta carrying a tombstone for every cached key (in key
// order) that was not listed, then a Bookmark at resourceVersion ending the
// list.
func (r *Real[D, O]) finishPages(ctx context.Context, listed map[string]struct{}, resourceVersion string) error {
	var o O
	r.lock.Lock()
	defer r.lock.Unlock()
	r.initLocked()
	err := r.drain.waitLocked(ctx, &r.lock, r.closed.Load, o.Closed(), func() bool { return r.items.Len() > 0 || r.processing > 0 })
	if err != nil {
		return err
	}
	// Nothing is queued or being processed, and the Reflector is the only
	// producer while it lists: the cache holds what the list's pages left.
	for _, v := range vanishedKeys(r.logger, r.lists.Cached, listed) {
		r.pushLocked(Deleted, o.Tombstone(v.key, v.obj), v.key)
	}
	r.pushLocked(Bookmark, o.Bookmark(resourceVersion, true), "")
	r.gate.FirstReplace(r.items.Len())
	return nil
}

// reconcileReplacement decides, for a relist newItems, which deletions and
// replacements a consumer should see, given the deltas still queued
// (queuedItems, may be nil) and the objects it already knows (known, may be
// nil): onDelete is called with the key and a tombstone for every key that
// is queued (its last queued delta not being a deletion) or known but
// missing from newItems, then onReplace for every object of newItems in
// order. keyOf computes keys. The first error stops the work and is
// returned (key errors as Ops.KeyError, unless keyOf returned one).
func reconcileReplacement[D any, O Ops[D]](
	logger klog.Logger,
	queuedItems []D,
	known KeyLister,
	newItems []any,
	keyOf func(obj any) (string, error),
	isKeyError func(err error) bool,
	onDelete func(key string, tomb any) error,
	onReplace func(obj any) error,
) error {
	var o O
	keyErr := func(obj any, err error) error {
		if isKeyError(err) {
			return err
		}
		return o.KeyError(obj, err)
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
		key, err := keyOf(o.Object(d))
		if err != nil {
			return keyErr(o.Object(d), err)
		}
		queued[i] = key
	}
	seq := func(yield func(string, D) bool) {
		for i, d := range queuedItems {
			if !yield(queued[i], d) {
				return
			}
		}
	}
	if err := reconcileDeletions[D, O](logger, seq, known, listed, onDelete); err != nil {
		return err
	}
	for _, obj := range newItems {
		if err := onReplace(obj); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}
	return nil
}

// reconcileDeletions calls onDelete with the key and a tombstone for every
// key missing from listed that (a) appears in queued, whose last delta for
// the key is not already a deletion (in order of first appearance, carrying
// that last object), or (b) is listed by known (nil allowed) and does not
// appear in queued (in ListKeys order, carrying the known object, or nil
// when the lookup fails).
func reconcileDeletions[D any, O Ops[D]](
	logger klog.Logger,
	queued iter.Seq2[string, D],
	known KeyLister,
	listed map[string]struct{},
	onDelete func(key string, tomb any) error,
) error {
	var o O
	var order []string
	last := make(map[string]D)
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
		if o.Kind(d) == Deleted {
			continue
		}
		if err := onDelete(key, o.Tombstone(key, o.Object(d))); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}
	if known == nil {
		return nil
	}
	for _, key := range known.ListKeys() {
		if _, ok := listed[key]; ok {
			continue
		}
		if _, ok := last[key]; ok {
			continue
		}
		obj, exists, err := known.GetByKey(key)
		if err != nil {
			obj = nil
			utilruntime.HandleErrorWithLogger(logger, err, "Known object lookup failed, using DeletedFinalStateUnknown without object", "key", key)
		} else if !exists {
			obj = nil
			utilruntime.HandleErrorWithLogger(logger, nil, "Key listed by known objects has no object, using DeletedFinalStateUnknown without object", "key", key)
		}
		if err := onDelete(key, o.Tombstone(key, obj)); err != nil {
			return fmt.Errorf("couldn't enqueue object: %w", err)
		}
	}
	return nil
}
