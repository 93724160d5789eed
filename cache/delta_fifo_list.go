package cache

import (
	"context"
	"slices"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// Replace queues the relisted objects of list and detects deletions, in one
// step under the queue's lock:
//
//   - for each object of list (in order), a Replaced delta (Sync unless
//     EmitDeltaTypeReplaced);
//   - for each queued key missing from list, in queue order, a Deleted delta
//     carrying DeletedFinalStateUnknown{Key, newest queued object};
//   - for each KnownObjects key missing from list and not queued, in
//     ListKeys order, a Deleted delta carrying DeletedFinalStateUnknown{Key,
//     known object}.
//
// The first Replace before any Add, Update or Delete makes these keys the
// initial batch for HasSynced. resourceVersion only serves the watermark of
// the queue an informer builds for itself. It returns a KeyError for an
// object without key, or a transformer error (wrapped); in both cases
// nothing is queued.
//
// Difference from client-go: errors leave the queue untouched instead of
// half-replaced, and the deletions of queued keys come in queue order rather
// than random map order.
func (f *DeltaFIFO) Replace(list []interface{}, resourceVersion string) error {
	return replaceList(f.beginList(listSource{}), list, resourceVersion)
}

// beginList implements listTaker: a relist of a queue built with
// informerLists.pageByPage is applied page by page (pagewise_relist.go);
// any other list is gathered and queued whole at its end, as Replace
// describes.
func (f *DeltaFIFO) beginList(source listSource) listSink {
	if f.lists.pageByPage && source.relist {
		return f.newPageSink(source)
	}
	return &gatherSink{
		keyOf:      f.KeyOf,
		strictKeys: true,
		finishKeys: true,
		streamed:   source.streamed,
		prepare: func(key string, obj interface{}) (interface{}, error) {
			if source.loaded {
				return obj, nil
			}
			return f.transform(obj, key)
		},
		finish: f.queueReplaced,
	}
}

// queueReplaced queues a complete list (keys[i] is the key of objs[i]) as
// Replace describes.
func (f *DeltaFIFO) queueReplaced(objs []interface{}, keys []string, resourceVersion string) error {
	action := Sync
	if f.emitDeltaTypeReplaced {
		action = Replaced
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.pagesOpen = false

	listed := make(map[string]struct{}, len(keys))
	for i, key := range keys {
		listed[key] = struct{}{}
		f.appendLocked(key, Delta{Type: action, Object: objs[i]})
	}
	deletions := f.queueVanishedLocked(listed, false)
	f.listedLocked(resourceVersion)
	f.gate.firstReplace(len(listed) + deletions)
	if f.queue.len() > 0 {
		f.cond.Broadcast()
	}
	return nil
}

// queueVanishedLocked queues a Deleted delta carrying DeletedFinalStateUnknown
// for every queued key missing from listed (in queue order, with the newest
// queued object) and every KnownObjects key missing from listed and not
// queued (in ListKeys order, or key order when sorted, with the known
// object). It returns how many it queued.
func (f *DeltaFIFO) queueVanishedLocked(listed map[string]struct{}, sorted bool) int {
	deletions := 0
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
		deletions++
		f.appendLocked(key, Delta{Type: Deleted, Object: DeletedFinalStateUnknown{Key: key, Obj: last}})
	}
	if f.knownObjects == nil {
		return deletions
	}
	known := f.knownObjects.ListKeys()
	if sorted {
		slices.Sort(known)
	}
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
		deletions++
		f.appendLocked(key, Delta{Type: Deleted, Object: DeletedFinalStateUnknown{Key: key, Obj: obj}})
	}
	return deletions
}

// relistsPageByPage implements listTaker.
func (f *DeltaFIFO) relistsPageByPage() bool {
	return f.lists.pageByPage
}

// newPageSink returns the sink of a relist the queue applies page by page.
func (f *DeltaFIFO) newPageSink(source listSource) listSink {
	return &pageSink{
		logger:   f.logger,
		keyOf:    f.KeyOf,
		streamed: source.streamed,
		prepare: func(key string, obj interface{}) (interface{}, error) {
			if source.loaded {
				return obj, nil
			}
			return f.transform(obj, key)
		},
		hand:   f.queuePage,
		finish: f.finishPages,
	}
}

// queuePage queues a Replaced (or Sync) delta per object of page and waits
// until the consumer has popped every queued key.
func (f *DeltaFIFO) queuePage(ctx context.Context, page []listedObject) error {
	action := Sync
	if f.emitDeltaTypeReplaced {
		action = Replaced
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.pagesOpen = true
	for _, o := range page {
		if o.obj != nil {
			f.appendLocked(o.key, Delta{Type: action, Object: o.obj})
		}
	}
	// Pop processes with the lock held: an empty queue seen here has been
	// processed.
	return f.drain.waitLocked(ctx, &f.lock, f.closed.Load, func() bool { return f.queue.len() > 0 })
}

// finishPages ends a relist applied page by page: it queues a Deleted delta
// carrying DeletedFinalStateUnknown for every queued key (in queue order)
// and every KnownObjects key (in key order, when not queued) that was not
// listed, as Replace does.
func (f *DeltaFIFO) finishPages(_ context.Context, listed map[string]struct{}, resourceVersion string) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.pagesOpen = false
	f.queueVanishedLocked(listed, true)
	f.listedLocked(resourceVersion)
	f.gate.firstReplace(f.queue.len())
	if f.queue.len() > 0 {
		f.cond.Broadcast()
	}
	return nil
}

// settled reports whether everything queued has been popped and processed
// and no relist applied page by page is unfinished: the consumer's store
// then holds one consistent state at the watermark of what was popped
// (every change the queue received up to it, and none after it). While
// keys are queued, it does not: the queue pops per key and not in watch
// order, so a popped key may hold a newer state than the watermark, and a
// relist's keys are applied one by one.
func (f *DeltaFIFO) settled() bool {
	f.lock.Lock()
	defer f.lock.Unlock()
	return !f.pagesOpen && f.queue.len() == 0
}
