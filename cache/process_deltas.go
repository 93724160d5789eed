package cache

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"k8s.io/klog/v2"
)

// deltaApplier applies popped deltas to a store and tells a handler what
// changed, in order. It is the Process/ProcessBatch implementation of both
// the low-level informer (handler = the user's handler) and the shared
// informer (handler = a notification collector).
//
// Rules, as client-go's processDeltas:
//   - Added, Updated, Replaced and Sync store the object: an update (OnUpdate
//     with the previously cached object) when the key is cached, else an add
//     (OnAdd with isInInitialList);
//   - Deleted removes the key and reports OnDelete with the delta's object
//     (possibly a DeletedFinalStateUnknown);
//   - ReplacedAll swaps the whole store in one Replace, then reports a
//     DeletedFinalStateUnknown delete for every key that vanished, then an
//     add or update for every listed object, in list order;
//   - SyncAll reports OnUpdate(obj, obj) for every cached object;
//   - Bookmark records the resource version in the store.
//
// Differences from client-go: an object the store rejects (for example one
// without a usable key) is logged with its type and counted in rejected, and
// the remaining deltas are still applied; client-go aborts the rest of the
// item or, for a relist, the whole relist. An object on which a user's index
// function fails is stored outside that index, delivered to the handler and
// counted in unindexed, in a list as in a watch event; client-go panics. Deletions found by a relist are
// reported in key order.
//
// A deltaApplier is used by one processing goroutine at a time.
type deltaApplier struct {
	logger  klog.Logger
	store   Store
	handler ResourceEventHandler

	// rejected counts objects that could not be applied to the store.
	rejected atomic.Int64
	// unindexed counts objects stored outside an index whose function
	// failed on them.
	unindexed atomic.Int64

	// keysOf, when set, returns the keys the queue already computed for a
	// popped slice of deltas (nil when it has none); they are reused
	// instead of being computed again. Only set when the queue's keys are
	// the store's keys (same key function, no transform in between).
	keysOf func([]Delta) []string

	// queueWatermark, when set, returns the resourceVersion up to which
	// every change the queue received has been popped, including the pop
	// being processed (a DeltaFIFO's, which pops per key and not in watch
	// order), and whether it completes a list (the cache then takes it even
	// when lower). When nil, the deltas are taken to come in watch order (a
	// RealFIFO's), so the newest watch change among them is the watermark.
	queueWatermark func() (rv string, listed bool)

	// derivedDeletes counts the deletions relists derived (objects a
	// ReplacedAll no longer had); the informer's statistics take and reset
	// it after each pop (see appliedDeltas).
	derivedDeletes uint64
	// listNotApplied is set when the store refused a whole list
	// (ReplacedAll), so that appliedDeltas does not count it.
	listNotApplied bool

	// Scratch space reused between batches.
	txns []Transaction
	olds []interface{}
}

func newDeltaApplier(logger klog.Logger, store Store, handler ResourceEventHandler) *deltaApplier {
	return &deltaApplier{logger: logger, store: store, handler: handler}
}

// newInformerApplier returns the deltaApplier of an informer whose queue is
// queue and whose transform is transform (nil when none): it reuses the
// keys a RealFIFO computed when nothing transforms the objects between the
// queue and the store, and takes a DeltaFIFO's watermark.
func newInformerApplier(logger klog.Logger, queue Queue, store Store, handler ResourceEventHandler, transform TransformFunc) *deltaApplier {
	a := newDeltaApplier(logger, store, handler)
	switch q := queue.(type) {
	case *RealFIFO:
		if transform == nil {
			// The queue keys objects as the store does (namespace/name,
			// or a tombstone's key).
			a.keysOf = q.poppedKeys
		}
	case *DeltaFIFO:
		if q.wm != nil {
			a.queueWatermark = q.poppedWatermark
		}
	}
	return a
}

// advanceWatermark moves the watermark of the informer's cache (see
// withResourceVersionWatermark) once deltas, just popped, are applied: to
// the queue's watermark when it keeps one, else to the resourceVersion of
// the newest watch change (Added, Updated or Deleted carrying an object)
// among deltas. Relisted objects (Replaced) and resynced ones (Sync) do not
// move it: a list moves it once complete (ReplacedAll, or the Bookmark that
// ends a list applied page by page).
func (a *deltaApplier) advanceWatermark(deltas []Delta) {
	c, ok := a.store.(ownStore)
	if !ok || !c.keepsWatermark() {
		return
	}
	if a.queueWatermark != nil {
		if rv, listed := a.queueWatermark(); listed {
			c.resetResourceVersion(rv)
		} else {
			c.advanceResourceVersion(rv)
		}
		return
	}
	for i := len(deltas) - 1; i >= 0; i-- {
		switch d := deltas[i]; d.Type {
		case Added, Updated, Deleted:
			if _, tomb := d.Object.(DeletedFinalStateUnknown); tomb {
				continue
			}
			if rv, ok := storeResourceVersionOf(d.Object); ok && rv != "" {
				c.advanceResourceVersion(rv)
				return
			}
		}
	}
}

// unindexedObjects logs and counts n objects stored outside an index whose
// function failed on them (err says which).
func (a *deltaApplier) unindexedObjects(n int, err error) {
	a.unindexed.Add(int64(n))
	a.logger.Error(err, "Objects stored in the informer's cache outside the indices that failed on them", "objects", n)
}

// reject logs and counts an object the store did not take.
func (a *deltaApplier) reject(err error, what string, obj interface{}) {
	a.rejected.Add(1)
	a.logger.Error(err, "Object could not be applied to the informer's cache and is skipped", "operation", what, "objectType", fmt.Sprintf("%T", obj))
}

// process is a ProcessFunc for queues that pop Deltas.
func (a *deltaApplier) process(obj interface{}, isInInitialList bool) error {
	deltas, ok := obj.(Deltas)
	if !ok {
		return fmt.Errorf("process expects Deltas, got %T", obj)
	}
	return a.apply(deltas, isInInitialList)
}

// poppedKeys returns the queue's keys for deltas, or nil.
func (a *deltaApplier) poppedKeys(deltas []Delta) []string {
	if a.keysOf == nil {
		return nil
	}
	keys := a.keysOf(deltas)
	if len(keys) != len(deltas) {
		return nil
	}
	return keys
}

// apply applies deltas one by one, from oldest to newest.
func (a *deltaApplier) apply(deltas []Delta, isInInitialList bool) error {
	var errs []error
	keys := a.poppedKeys(deltas)
	for i, d := range deltas {
		key := ""
		if keys != nil {
			key = keys[i]
		}
		if err := a.applyOne(d, key, isInInitialList); err != nil {
			errs = append(errs, err)
		}
	}
	a.advanceWatermark(deltas)
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return fmt.Errorf("%d deltas failed: %v", len(errs), errs)
}

// applyOne applies one delta. key is the object's key when the caller
// knows it, else "".
func (a *deltaApplier) applyOne(d Delta, key string, isInInitialList bool) error {
	obj := d.Object
	c, own := a.store.(ownStore)
	switch d.Type {
	case Added, Updated, Replaced, Sync:
		if own {
			// One map access, and no key computation when key is known.
			var old interface{}
			var exists bool
			var err error
			if key != "" {
				old, exists, err = c.updateKeyedWithPrevious(key, obj)
			} else {
				old, exists, err = c.updateWithPrevious(obj)
			}
			switch {
			case err != nil && !storeIsIndexError(err):
				// No key, or the store's transform failed: not stored.
				a.reject(err, string(d.Type), obj)
				return nil
			case err != nil:
				// Stored all the same, outside the failing indices.
				a.unindexedObjects(1, err)
			}
			switch {
			case exists:
				a.handler.OnUpdate(old, obj)
			default:
				a.handler.OnAdd(obj, isInInitialList)
			}
			return nil
		}
		old, exists, err := a.store.Get(obj)
		if err != nil {
			a.reject(err, string(d.Type), obj)
			return nil
		}
		if exists {
			if err := a.store.Update(obj); err != nil {
				a.reject(err, string(d.Type), obj)
				return nil
			}
			a.handler.OnUpdate(old, obj)
			return nil
		}
		if err := a.store.Add(obj); err != nil {
			a.reject(err, string(d.Type), obj)
			return nil
		}
		a.handler.OnAdd(obj, isInInitialList)
	case Deleted:
		if own && key != "" {
			c.deleteKeyed(key, obj)
			a.handler.OnDelete(obj)
			return nil
		}
		if err := a.store.Delete(obj); err != nil {
			a.reject(err, string(d.Type), obj)
			return nil
		}
		a.handler.OnDelete(obj)
	case ReplacedAll:
		info, ok := obj.(ReplacedAllInfo)
		if !ok {
			return fmt.Errorf("%s delta carries %T instead of ReplacedAllInfo", d.Type, obj)
		}
		a.replaceAll(info, isInInitialList)
	case SyncAll:
		if _, ok := obj.(SyncAllInfo); !ok {
			return fmt.Errorf("%s delta carries %T instead of SyncAllInfo", d.Type, obj)
		}
		for _, cached := range a.store.List() {
			a.handler.OnUpdate(cached, cached)
		}
	case Bookmark:
		info, ok := obj.(BookmarkInfo)
		if !ok {
			return fmt.Errorf("%s delta carries %T instead of BookmarkInfo", d.Type, obj)
		}
		if c, own := a.store.(ownStore); own && info.listEnd {
			c.resetResourceVersion(info.ResourceVersion)
		} else {
			a.store.Bookmark(info.ResourceVersion)
		}
	default:
		return fmt.Errorf("unknown delta type %q", d.Type)
	}
	return nil
}

// replaceAll applies a relist atomically: the store is swapped in one
// Replace call and only then are the handlers told what changed. With the
// package's own store, each key is computed once and handed to the store
// with its object: the informer's RealFIFO computed it already when nothing
// transforms objects between queue and store (a.keysOf is set then, and
// info carries the keys), else the store's key function does.
func (a *deltaApplier) replaceAll(info ReplacedAllInfo, isInInitialList bool) {
	type change struct {
		obj     interface{}
		old     interface{}
		existed bool
	}
	c, own := a.store.(ownStore)
	keyOf := DeletionHandlingMetaNamespaceKeyFunc
	if own {
		keyOf = c.key
	}
	// Vanished keys are looked for only when something was cached (never
	// on the initial list).
	cachedKeys := a.store.ListKeys()
	var listed map[string]struct{}
	if len(cachedKeys) > 0 {
		listed = make(map[string]struct{}, len(info.Objects))
	}
	var keys []string
	if own {
		keys = make([]string, 0, len(info.Objects))
	}
	changes := make([]change, 0, len(info.Objects))
	objects := info.Objects
	filtered := false
	var queueKeys []string
	if a.keysOf != nil && len(info.keys) == len(info.Objects) {
		queueKeys = info.keys
	}
	for i, obj := range info.Objects {
		var key string
		var err error
		if queueKeys != nil && queueKeys[i] != "" {
			key = queueKeys[i]
		} else {
			key, err = keyOf(obj)
		}
		if err != nil {
			a.reject(err, string(ReplacedAll), obj)
			if !filtered {
				// First bad object: go on with a copy that leaves it out.
				objects = slices.Clone(info.Objects[:i])
				filtered = true
			}
			continue
		}
		if filtered {
			objects = append(objects, obj)
		}
		if own {
			keys = append(keys, key)
		}
		if listed == nil {
			changes = append(changes, change{obj: obj})
			continue
		}
		listed[key] = struct{}{}
		old, exists, err := a.store.GetByKey(key)
		changes = append(changes, change{obj: obj, old: old, existed: err == nil && exists})
	}

	var vanished []DeletedFinalStateUnknown
	for _, key := range cachedKeys {
		if _, ok := listed[key]; ok {
			continue
		}
		old, exists, err := a.store.GetByKey(key)
		if err != nil || !exists {
			old = nil
		}
		vanished = append(vanished, DeletedFinalStateUnknown{Key: key, Obj: old})
	}
	listed = nil
	slices.SortFunc(vanished, func(x, y DeletedFinalStateUnknown) int { return strings.Compare(x.Key, y.Key) })

	var err error
	if own {
		err = c.replaceKeyed(keys, objects, info.ResourceVersion)
	} else {
		err = a.store.Replace(objects, info.ResourceVersion)
	}
	n, unindexed := storeUnindexedObjects(err)
	switch {
	case unindexed:
		// The whole list is applied; some objects are outside an index.
		a.unindexedObjects(n, err)
	case err != nil:
		// Only a store of the caller's, or a transform of the store's own,
		// fails a whole list.
		a.rejected.Add(1)
		a.listNotApplied = true
		a.logger.Error(err, "Relist could not be applied to the informer's cache", "resourceVersion", info.ResourceVersion, "objects", len(objects))
		return
	}
	a.derivedDeletes += uint64(len(vanished))
	for _, tomb := range vanished {
		a.handler.OnDelete(tomb)
	}
	for _, c := range changes {
		if c.existed {
			a.handler.OnUpdate(c.old, c.obj)
		} else {
			a.handler.OnAdd(c.obj, isInInitialList)
		}
	}
}

// processBatch is a ProcessBatchFunc: the batch (each key at most once) is
// applied to the store in a single transaction when the store supports it,
// then the handler is told about every applied change in batch order.
// Deltas that cannot be part of a transaction (ReplacedAll, SyncAll,
// Bookmark) are applied on their own, in order.
func (a *deltaApplier) processBatch(deltas []Delta, isInInitialList bool) error {
	txnStore, ok := a.store.(TransactionStore)
	if !ok {
		return a.apply(deltas, isInInitialList)
	}
	keys := a.poppedKeys(deltas)
	keysIn := func(from, to int) []string {
		if keys == nil {
			return nil
		}
		return keys[from:to]
	}
	start := 0
	for i, d := range deltas {
		switch d.Type {
		case Added, Updated, Replaced, Sync, Deleted:
			continue
		}
		a.commit(txnStore, deltas[start:i], keysIn(start, i), isInInitialList)
		if err := a.applyOne(d, "", isInInitialList); err != nil {
			a.advanceWatermark(deltas[:i])
			return err
		}
		start = i + 1
	}
	a.commit(txnStore, deltas[start:], keysIn(start, len(deltas)), isInInitialList)
	a.advanceWatermark(deltas)
	return nil
}

// commit applies add/update/delete deltas in one store transaction and then
// notifies the handler of the applied ones. keys are the deltas' keys when
// known, else nil.
func (a *deltaApplier) commit(txnStore TransactionStore, deltas []Delta, keys []string, isInInitialList bool) {
	if len(deltas) == 0 {
		return
	}
	if c, ok := txnStore.(ownStore); ok {
		a.commitOwn(c, deltas, keys, isInInitialList)
		return
	}
	txns, olds := a.txns[:0], a.olds[:0]
	for _, d := range deltas {
		obj := d.Object
		if d.Type == Deleted {
			txns = append(txns, Transaction{Type: TransactionTypeDelete, Object: obj})
			olds = append(olds, nil)
			continue
		}
		old, exists, err := a.store.Get(obj)
		if err != nil {
			a.reject(err, string(d.Type), obj)
			continue
		}
		if exists {
			txns = append(txns, Transaction{Type: TransactionTypeUpdate, Object: obj})
			olds = append(olds, old)
		} else {
			txns = append(txns, Transaction{Type: TransactionTypeAdd, Object: obj})
			olds = append(olds, nil)
		}
	}
	defer func() {
		clear(txns)
		clear(olds)
		a.txns, a.olds = txns[:0], olds[:0]
	}()

	if txErr := txnStore.Transaction(txns...); txErr != nil {
		a.partlyCommitted(txErr, txns, olds, isInInitialList)
		return
	}
	for i, t := range txns {
		a.notify(t, olds[i], isInInitialList)
	}
}

// commitOwn is commit for the package's own store: the transaction itself
// reports the replaced objects and tells adds from updates, so no Get (and
// no key computation, when keys are known) is needed per delta.
func (a *deltaApplier) commitOwn(c ownStore, deltas []Delta, keys []string, isInInitialList bool) {
	txns := slices.Grow(a.txns[:0], len(deltas))[:len(deltas)]
	olds := slices.Grow(a.olds[:0], len(deltas))[:len(deltas)]
	defer func() {
		clear(txns)
		clear(olds)
		a.txns, a.olds = txns[:0], olds[:0]
	}()
	for i, d := range deltas {
		typ := TransactionTypeUpdate
		if d.Type == Deleted {
			typ = TransactionTypeDelete
		}
		txns[i] = Transaction{Type: typ, Object: d.Object}
	}
	if txErr := c.transactionWithKeys(txns, keys, olds); txErr != nil {
		a.partlyCommitted(txErr, txns, olds, isInInitialList)
		return
	}
	for i, t := range txns {
		a.notify(t, olds[i], isInInitialList)
	}
}

// partlyCommitted handles a transaction that did not go through cleanly: it
// counts and logs the operations that failed and the objects stored outside
// an index, and notifies the handler of the applied operations.
func (a *deltaApplier) partlyCommitted(txErr *TransactionError, txns []Transaction, olds []interface{}, isInInitialList bool) {
	failed := txErr.TotalTransactions - len(txErr.SuccessfulIndices)
	if failed > 0 {
		a.rejected.Add(int64(failed))
		a.logger.Error(txErr, "Some objects could not be applied to the informer's cache and are skipped", "failed", failed, "batch", len(txns))
	}
	if unindexed := len(txErr.Errors) - failed; unindexed > 0 {
		a.unindexedObjects(unindexed, txErr)
	}
	for _, i := range txErr.SuccessfulIndices {
		if i >= 0 && i < len(txns) {
			a.notify(txns[i], olds[i], isInInitialList)
		}
	}
}

func (a *deltaApplier) notify(t Transaction, old interface{}, isInInitialList bool) {
	switch t.Type {
	case TransactionTypeAdd:
		a.handler.OnAdd(t.Object, isInInitialList)
	case TransactionTypeUpdate:
		a.handler.OnUpdate(old, t.Object)
	case TransactionTypeDelete:
		a.handler.OnDelete(t.Object)
	}
}

// appliedDeltas returns how many deltas a pop of deltas applied to the
// cache, for the informer's DeltasProcessed: a whole list (ReplacedAll)
// counts its objects and the deletions it derived, anything else one. It
// resets the derived count.
func (a *deltaApplier) appliedDeltas(deltas []Delta) uint64 {
	n := a.derivedDeletes
	a.derivedDeletes = 0
	for _, d := range deltas {
		if d.Type == ReplacedAll {
			if info, ok := d.Object.(ReplacedAllInfo); ok && !a.listNotApplied {
				n += uint64(len(info.Objects))
			}
			a.listNotApplied = false
			continue
		}
		n++
	}
	return n
}
