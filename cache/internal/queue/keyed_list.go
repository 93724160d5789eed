package queue

import (
	"context"
	"slices"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// Replace queues the relisted objects of list and detects deletions, in one
// step under the queue's lock (see BeginList).
func (k *Keyed[D, O]) Replace(list []any, resourceVersion string) error {
	return ReplaceList(k.BeginList(Source{}), list, resourceVersion)
}

// BeginList starts a list from source. A relist of a queue configured with
// Lists.PageByPage is applied page by page; any other list is gathered and
// queued whole at its end, in one step under the queue's lock:
//
//   - for each listed object (in order), a Replaced delta (Sync unless
//     KeyedConfig.Replaced);
//   - for each queued key missing from the list, in queue order, a Deleted
//     delta carrying a tombstone with the newest queued object;
//   - for each Known key missing from the list and not queued, in ListKeys
//     order, a Deleted delta carrying a tombstone with the known object.
//
// The first list before any change makes these keys the initial batch. An
// object without key, or a transform error, fails the list; nothing is
// queued then.
func (k *Keyed[D, O]) BeginList(source Source) Sink {
	return k.beginList(k, source)
}

// whole implements lister.
func (k *Keyed[D, O]) whole(source Source) Sink {
	var o O
	return &Gather{
		KeyOf:      k.KeyOf,
		StrictKeys: true,
		FinishKeys: true,
		Streamed:   source.Streamed,
		Prepare: func(key string, obj any) (any, error) {
			return k.listedObject(key, obj, source)
		},
		Refused: o.Refused,
		Finish:  k.queueReplaced,
	}
}

// listedObject implements lister: obj transformed, or obj itself when it
// comes from a snapshot.
func (k *Keyed[D, O]) listedObject(key string, obj any, source Source) (any, error) {
	if source.Loaded {
		return obj, nil
	}
	return k.transform(obj, key)
}

// listKind is the kind of the deltas a list queues.
func (k *Keyed[D, O]) listKind() Kind {
	if k.replaced {
		return Replaced
	}
	return Sync
}

// queueReplaced queues a complete list (keys[i] is the key of objs[i]) as
// BeginList describes.
func (k *Keyed[D, O]) queueReplaced(objs []any, keys []string, resourceVersion string) error {
	var o O
	action := k.listKind()
	k.lock.Lock()
	defer k.lock.Unlock()
	k.initLocked()
	k.pagesOpen = false

	listed := make(map[string]struct{}, len(keys))
	for i, key := range keys {
		listed[key] = struct{}{}
		k.appendLocked(key, o.Make(action, objs[i]))
	}
	deletions := k.queueVanishedLocked(listed, false)
	k.listedLocked(resourceVersion)
	k.gate.FirstReplace(len(listed) + deletions)
	if k.queue.Len() > 0 {
		k.cond.Broadcast()
	}
	return nil
}

// queueVanishedLocked queues a Deleted delta carrying a tombstone for every
// queued key missing from listed (in queue order, with the newest queued
// object) and every Known key missing from listed and not queued (in
// ListKeys order, or key order when sorted, with the known object). It
// returns how many it queued.
func (k *Keyed[D, O]) queueVanishedLocked(listed map[string]struct{}, sorted bool) int {
	var o O
	deletions := 0
	for i, n := 0, k.queue.Len(); i < n; i++ {
		key := *k.queue.At(i)
		if _, ok := listed[key]; ok {
			continue
		}
		var last any
		if ds := k.items[key]; len(ds) > 0 {
			last = o.Object(ds[len(ds)-1])
			if _, obj, ok := o.AsTombstone(last); ok {
				last = obj
			}
		}
		deletions++
		k.appendLocked(key, o.Make(Deleted, o.Tombstone(key, last)))
	}
	if k.known == nil {
		return deletions
	}
	known := k.known.ListKeys()
	if sorted {
		slices.Sort(known)
	}
	for _, key := range known {
		if _, ok := listed[key]; ok {
			continue
		}
		if len(k.items[key]) > 0 {
			continue
		}
		obj, exists, err := k.known.GetByKey(key)
		if err != nil {
			obj = nil
			utilruntime.HandleErrorWithLogger(k.logger, err, "Known object lookup failed, queueing DeletedFinalStateUnknown without object", "key", key)
		} else if !exists {
			obj = nil
			k.logger.Info("Key listed by known objects has no object, queueing DeletedFinalStateUnknown without object", "key", key)
		}
		deletions++
		k.appendLocked(key, o.Make(Deleted, o.Tombstone(key, obj)))
	}
	return deletions
}

// queuePage implements lister: it queues a Replaced (or Sync) delta per
// object of page and waits until the consumer has popped every queued key.
func (k *Keyed[D, O]) queuePage(ctx context.Context, page []listedObject) error {
	var o O
	action := k.listKind()
	k.lock.Lock()
	defer k.lock.Unlock()
	k.initLocked()
	k.pagesOpen = true
	for _, l := range page {
		if l.obj != nil {
			k.appendLocked(l.key, o.Make(action, l.obj))
		}
	}
	// Pop processes with the lock held: an empty queue seen here has been
	// processed.
	return k.drain.waitLocked(ctx, &k.lock, k.closed.Load, o.Closed(), func() bool { return k.queue.Len() > 0 })
}

// finishPages implements lister: it queues a Deleted delta carrying a
// tombstone for every queued key (in queue order) and every Known key (in
// key order, when not queued) that was not listed, as a whole list does.
func (k *Keyed[D, O]) finishPages(_ context.Context, listed map[string]struct{}, resourceVersion string) error {
	k.lock.Lock()
	defer k.lock.Unlock()
	k.initLocked()
	k.pagesOpen = false
	k.queueVanishedLocked(listed, true)
	k.listedLocked(resourceVersion)
	k.gate.FirstReplace(k.queue.Len())
	if k.queue.Len() > 0 {
		k.cond.Broadcast()
	}
	return nil
}

// Settled reports whether everything queued has been popped and processed
// and no relist applied page by page is unfinished: the consumer's store
// then holds one consistent state at the watermark of what was popped
// (every change the queue received up to it, and none after it). While
// keys are queued, it does not: the queue pops per key and not in watch
// order, so a popped key may hold a newer state than the watermark, and a
// relist's keys are applied one by one.
func (k *Keyed[D, O]) Settled() bool {
	k.lock.Lock()
	defer k.lock.Unlock()
	return !k.pagesOpen && k.queue.Len() == 0
}
