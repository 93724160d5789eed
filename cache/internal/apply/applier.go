package apply

import (
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache/internal/fanout"
	"github.com/kinformer/kinformer/cache/internal/store"
)

// Kind is what a delta does, read from it by Ops.Split.
type Kind uint8

// The kinds of deltas, as client-go's delta types.
const (
	// Unknown is a delta of a type the applier does not know; applying it
	// fails.
	Unknown Kind = iota
	// Added stores an object.
	Added
	// Updated stores an object.
	Updated
	// Deleted removes an object's key.
	Deleted
	// Replaced stores an object of a list applied piece by piece.
	Replaced
	// Sync stores an object again (a resync of a queue that holds them).
	Sync
	// ReplacedAll makes a whole list the content of the store.
	ReplacedAll
	// SyncAll reports every cached object as updated.
	SyncAll
	// Bookmark records a resourceVersion.
	Bookmark
)

// Ops is what the applier knows of the caller's delta type D. Every
// function is required. Split is called for every delta applied and must
// not allocate; the others are called once per delta of their kind or on
// error paths.
type Ops[D any] struct {
	// Split returns d's kind and the object it carries.
	Split func(d D) (Kind, any)
	// Type returns d's type as users name it, for errors and logs.
	Type func(d D) string
	// Deltas returns the deltas of what a queue's Pop handed out; false
	// when obj is not a slice of deltas.
	Deltas func(obj any) ([]D, bool)
	// List reads the object of a ReplacedAll delta (the caller's
	// ReplacedAllInfo): the listed objects, the keys the queue computed
	// for them (nil, or one per object, "" where it has none), and the
	// list's resourceVersion; false when obj is not one.
	List func(obj any) (objects []any, keys []string, rv string, ok bool)
	// IsSyncAll reports whether obj is the object of a SyncAll delta (the
	// caller's SyncAllInfo).
	IsSyncAll func(obj any) bool
	// Bookmark reads the object of a Bookmark delta (the caller's
	// BookmarkInfo): its resourceVersion, and whether it ends a list
	// applied piece by piece; false when obj is not one.
	Bookmark func(obj any) (rv string, listEnd bool, ok bool)
	// IsTombstone reports whether obj stands for a deleted object whose
	// final state is unknown (the caller's DeletedFinalStateUnknown).
	IsTombstone func(obj any) bool
	// Tombstone wraps the last cached state of a key that a list no
	// longer has as such a placeholder.
	Tombstone func(key string, obj any) any
}

// Store is any store the applier writes to: the methods of client-go's
// cache.Store it calls, so that such a store is passed as it is.
type Store interface {
	Get(obj any) (item any, exists bool, err error)
	GetByKey(key string) (item any, exists bool, err error)
	Add(obj any) error
	Update(obj any) error
	Delete(obj any) error
	List() []any
	ListKeys() []string
	Replace(list []any, resourceVersion string) error
	Bookmark(rv string)
}

// Cache is the direct path into a store of the cache package
// (cache.NewStore, cache.NewIndexer): its engine, key function and
// transform, and the moves of its watermark. With it the applier writes to
// the engine itself, computes no key the queue already computed, and
// learns from the write whether it was an add or an update.
type Cache struct {
	// Map is the store's engine.
	Map *store.Map
	// Key computes an object's key with the store's key function.
	Key func(obj any) (string, error)
	// Transform, when not nil, is the store's transform, applied to every
	// object stored (not to deleted ones) after its key is computed.
	Transform func(obj any) (any, error)
	// Watermark is set when the store is an informer's cache, whose
	// resourceVersion is a watermark moved by the applier.
	Watermark bool
	// AdvanceResourceVersion moves the watermark forward to rv.
	AdvanceResourceVersion func(rv string)
	// ResetResourceVersion sets the watermark to the version of a complete
	// list, even a lower one.
	ResetResourceVersion func(rv string)
	// ReplaceKeyed makes objs, under keys, the whole content of the store
	// at rv (the store's Replace with keys computed).
	ReplaceKeyed func(keys []string, objs []any, rv string) error
}

// Transactor is a store of the caller's that applies a batch of writes in
// one transaction (client-go's TransactionStore). Transact applies writes
// (each one's Op and Object; the Key is not set) in order and returns nil
// when all of them succeeded; else the positions of those applied, in
// ascending order, the number of errors (one per failed write and one per
// applied write whose object an index left out) and an error reporting
// them.
type Transactor interface {
	Transact(writes []store.Write) (applied []int, errs int, err error)
}

// Config is what an Applier is built from. Ops, Store and Handler are
// required.
type Config[D any] struct {
	// Logger receives the errors of objects the store did not take.
	Logger klog.Logger
	// Ops reads the deltas.
	Ops Ops[D]
	// Store is the store written to.
	Store Store
	// Cache, when not nil, is the direct path into Store, a store of the
	// cache package; Store is then written through it.
	Cache *Cache
	// Transactor, when not nil (and Cache is nil), applies batches to
	// Store in one transaction; without either, a batch is applied delta
	// by delta.
	Transactor Transactor
	// Key computes the key of a listed object for a Store without Cache
	// (DeletionHandlingMetaNamespaceKeyFunc in client-go).
	Key func(obj any) (string, error)
	// Handler is told of every applied change, in order.
	Handler fanout.Handler
	// KeysOf, when not nil, returns the keys the queue already computed
	// for a popped slice of deltas (nil when it has none); they are used
	// instead of being computed again. Set it only when the queue's keys
	// are the store's (same key function, no transform in between).
	KeysOf func([]D) []string
	// QueueWatermark, when not nil, returns the resourceVersion up to
	// which every change the queue received has been popped, including
	// the pop being applied, and whether it completes a list (the cache
	// then takes it even when lower): a queue that pops per key and not in
	// watch order. When nil, deltas come in watch order, and the newest
	// watch change among them is the watermark.
	QueueWatermark func() (rv string, listed bool)
	// Delivery, when not nil, is where Deliver and DeliverItem hand what
	// they applied: a shared informer's. Handler must then be
	// Delivery.Notes.
	Delivery *Delivery[D]
}

// Delivery is how a shared informer's Applier hands on what it applied:
// every popped item is applied and its notifications handed to the
// handlers in one step under Lock.
type Delivery[D any] struct {
	// Lock is held while a popped item is applied and its notifications
	// handed on; whoever holds it (a handler being added, a snapshot)
	// sees no item half done.
	Lock sync.Locker
	// Notes collects the notifications of the item (the Applier's
	// Handler); To gets them once it is applied.
	Notes *Notes
	To    *fanout.Processor
	// Popped, when not nil, is told with Lock held of every applied item:
	// its deltas (nil for an item that is not a list of deltas) and how
	// many of them reached the cache (Applied).
	Popped func(deltas []D, applied uint64)
}

// Applier applies popped deltas to a store and tells a handler what
// changed, in order. See the package documentation for the rules. An
// Applier is used by one goroutine at a time; Rejected and Unindexed may
// be read concurrently.
type Applier[D any] struct {
	logger  klog.Logger
	ops     Ops[D]
	store   Store
	cache   *Cache
	tx      Transactor
	key     func(obj any) (string, error)
	handler fanout.Handler
	keysOf  func([]D) []string
	queueWM func() (rv string, listed bool)
	deliver *Delivery[D]

	rejected  atomic.Int64
	unindexed atomic.Int64

	// derivedDeletes counts the deletions lists derived since Applied was
	// last called; listNotApplied is set when the store refused a whole
	// list, so that Applied does not count it.
	derivedDeletes uint64
	listNotApplied bool

	// Scratch space reused between batches, cleared after use.
	writes  []store.Write
	pos     []int
	olds    []any
	existed []bool
	// observe is a.observeWrite, bound once.
	observe func(i int, prev any, existed bool)
}

// New returns an Applier for cfg.
func New[D any](cfg Config[D]) *Applier[D] {
	a := &Applier[D]{
		logger:  cfg.Logger,
		ops:     cfg.Ops,
		store:   cfg.Store,
		cache:   cfg.Cache,
		tx:      cfg.Transactor,
		key:     cfg.Key,
		handler: cfg.Handler,
		keysOf:  cfg.KeysOf,
		queueWM: cfg.QueueWatermark,
		deliver: cfg.Delivery,
	}
	a.observe = a.observeWrite
	return a
}

// Rejected returns how many objects the store did not take.
func (a *Applier[D]) Rejected() int64 { return a.rejected.Load() }

// Unindexed returns how many objects were stored outside an index whose
// function failed on them.
func (a *Applier[D]) Unindexed() int64 { return a.unindexed.Load() }

// Process applies what a queue's Pop handed out (deltas, oldest first);
// it is the Pop callback of a queue of deltas.
func (a *Applier[D]) Process(obj any, isInInitialList bool) error {
	deltas, ok := a.ops.Deltas(obj)
	if !ok {
		return fmt.Errorf("process expects Deltas, got %T", obj)
	}
	return a.apply(deltas, isInInitialList)
}

// ProcessBatch applies a popped batch (each key at most once): its adds,
// updates and deletes in one store transaction when the store has them,
// its other deltas (ReplacedAll, SyncAll, Bookmark) on their own, all in
// order; then the handler is told of every applied change in batch
// order. It returns the error of a delta it could not read, without
// applying the rest.
func (a *Applier[D]) ProcessBatch(deltas []D, isInInitialList bool) error {
	if a.cache == nil && a.tx == nil {
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
		switch kind, _ := a.ops.Split(d); kind {
		case Added, Updated, Replaced, Sync, Deleted:
			continue
		}
		a.commit(deltas[start:i], keysIn(start, i), isInInitialList)
		if err := a.applyOne(d, "", isInInitialList); err != nil {
			a.advanceWatermark(deltas[:i])
			return err
		}
		start = i + 1
	}
	a.commit(deltas[start:], keysIn(start, len(deltas)), isInInitialList)
	a.advanceWatermark(deltas)
	return nil
}

// Deliver is the batch function of a shared informer's queue (Config.Delivery
// must be set): with the Delivery's Lock held, it applies deltas
// (ProcessBatch), tells Popped, and hands the notifications to the
// handlers' processor.
func (a *Applier[D]) Deliver(deltas []D, isInInitialList bool) error {
	d := a.deliver
	d.Lock.Lock()
	defer d.Lock.Unlock()
	err := a.ProcessBatch(deltas, isInInitialList)
	a.handOn(deltas, a.Applied(deltas))
	return err
}

// DeliverItem is Deliver for one item a queue's Pop hands out (Process);
// an item that is not deltas is refused with Process's error, and Popped
// is told of no delta.
func (a *Applier[D]) DeliverItem(obj any, isInInitialList bool) error {
	d := a.deliver
	d.Lock.Lock()
	defer d.Lock.Unlock()
	err := a.Process(obj, isInInitialList)
	deltas, _ := a.ops.Deltas(obj)
	a.handOn(deltas, a.Applied(deltas))
	return err
}

// handOn tells the Delivery's Popped of an applied item and hands its
// notifications to the processor, which copies them.
func (a *Applier[D]) handOn(deltas []D, applied uint64) {
	d := a.deliver
	if d.Popped != nil {
		d.Popped(deltas, applied)
	}
	n := d.Notes
	d.To.Distribute(n.notes, n.hasResync)
	n.reset()
}

// Applied returns how many deltas a pop of deltas applied to the cache: a
// whole list (ReplacedAll) counts its objects and the deletions it
// derived, any other delta one. It resets the count of derived deletions;
// call it once after each pop.
func (a *Applier[D]) Applied(deltas []D) uint64 {
	n := a.derivedDeletes
	a.derivedDeletes = 0
	for _, d := range deltas {
		kind, obj := a.ops.Split(d)
		if kind == ReplacedAll {
			if objects, _, _, ok := a.ops.List(obj); ok && !a.listNotApplied {
				n += uint64(len(objects))
			}
			a.listNotApplied = false
			continue
		}
		n++
	}
	return n
}

// poppedKeys returns the queue's keys for deltas, or nil.
func (a *Applier[D]) poppedKeys(deltas []D) []string {
	if a.keysOf == nil {
		return nil
	}
	keys := a.keysOf(deltas)
	if len(keys) != len(deltas) {
		return nil
	}
	return keys
}

// apply applies deltas one by one, oldest first.
func (a *Applier[D]) apply(deltas []D, isInInitialList bool) error {
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

// advanceWatermark moves the watermark of an informer's cache once deltas,
// just popped, are applied: to the queue's watermark when it keeps one,
// else to the resourceVersion of the newest watch change (Added, Updated
// or Deleted of an object, not of a tombstone) among deltas. Objects of a
// list (Replaced) or a resync (Sync) do not move it: a list moves it once
// complete.
func (a *Applier[D]) advanceWatermark(deltas []D) {
	c := a.cache
	if c == nil || !c.Watermark {
		return
	}
	if a.queueWM != nil {
		if rv, listed := a.queueWM(); listed {
			c.ResetResourceVersion(rv)
		} else {
			c.AdvanceResourceVersion(rv)
		}
		return
	}
	for i := len(deltas) - 1; i >= 0; i-- {
		switch kind, obj := a.ops.Split(deltas[i]); kind {
		case Added, Updated, Deleted:
			if a.ops.IsTombstone(obj) {
				continue
			}
			if meta, err := store.ObjectMeta(obj); err == nil && meta.GetResourceVersion() != "" {
				c.AdvanceResourceVersion(meta.GetResourceVersion())
				return
			}
		}
	}
}

// unindexedObjects logs and counts n objects stored outside an index
// whose function failed on them (err says which).
func (a *Applier[D]) unindexedObjects(n int, err error) {
	a.unindexed.Add(int64(n))
	a.logger.Error(err, "Objects stored in the informer's cache outside the indices that failed on them", "objects", n)
}

// reject logs and counts an object the store did not take.
func (a *Applier[D]) reject(err error, what string, obj any) {
	a.rejected.Add(1)
	a.logger.Error(err, "Object could not be applied to the informer's cache and is skipped", "operation", what, "objectType", fmt.Sprintf("%T", obj))
}

// put stores obj in the package's own store under key ("" when unknown)
// and returns what the key held before.
func (a *Applier[D]) put(key string, obj any) (prev any, existed bool, err error) {
	c := a.cache
	if key == "" {
		if key, err = c.Key(obj); err != nil {
			return nil, false, err
		}
	}
	if c.Transform != nil {
		if obj, err = c.Transform(obj); err != nil {
			return nil, false, transformError(key, err)
		}
	}
	return c.Map.Put(key, obj)
}

// transformError is the error of a store's transform failing on the
// object with key.
func transformError(key string, err error) error {
	return fmt.Errorf("transforming object with key %q: %w", key, err)
}

// applyOne applies one delta. key is the object's key when the caller
// knows it, else "".
func (a *Applier[D]) applyOne(d D, key string, isInInitialList bool) error {
	kind, obj := a.ops.Split(d)
	switch kind {
	case Added, Updated, Replaced, Sync:
		if a.cache != nil {
			old, exists, err := a.put(key, obj)
			switch {
			case err != nil && !store.IsIndexError(err):
				// No key, or the store's transform failed: not stored.
				a.reject(err, a.ops.Type(d), obj)
				return nil
			case err != nil:
				// Stored all the same, outside the failing indices.
				a.unindexedObjects(1, err)
			}
			if exists {
				a.handler.OnUpdate(old, obj)
			} else {
				a.handler.OnAdd(obj, isInInitialList)
			}
			return nil
		}
		old, exists, err := a.store.Get(obj)
		if err != nil {
			a.reject(err, a.ops.Type(d), obj)
			return nil
		}
		if exists {
			if err := a.store.Update(obj); err != nil {
				a.reject(err, a.ops.Type(d), obj)
				return nil
			}
			a.handler.OnUpdate(old, obj)
			return nil
		}
		if err := a.store.Add(obj); err != nil {
			a.reject(err, a.ops.Type(d), obj)
			return nil
		}
		a.handler.OnAdd(obj, isInInitialList)
	case Deleted:
		switch {
		case a.cache != nil:
			if key == "" {
				var err error
				if key, err = a.cache.Key(obj); err != nil {
					a.reject(err, a.ops.Type(d), obj)
					return nil
				}
			}
			a.cache.Map.Delete(key, obj)
		default:
			if err := a.store.Delete(obj); err != nil {
				a.reject(err, a.ops.Type(d), obj)
				return nil
			}
		}
		a.handler.OnDelete(obj)
	case ReplacedAll:
		objects, keys, rv, ok := a.ops.List(obj)
		if !ok {
			return fmt.Errorf("%s delta carries %T instead of ReplacedAllInfo", a.ops.Type(d), obj)
		}
		a.replaceAll(objects, keys, rv, a.ops.Type(d), isInInitialList)
	case SyncAll:
		if !a.ops.IsSyncAll(obj) {
			return fmt.Errorf("%s delta carries %T instead of SyncAllInfo", a.ops.Type(d), obj)
		}
		for _, cached := range a.store.List() {
			a.handler.OnUpdate(cached, cached)
		}
	case Bookmark:
		rv, listEnd, ok := a.ops.Bookmark(obj)
		if !ok {
			return fmt.Errorf("%s delta carries %T instead of BookmarkInfo", a.ops.Type(d), obj)
		}
		if a.cache != nil && listEnd {
			a.cache.ResetResourceVersion(rv)
		} else {
			a.store.Bookmark(rv)
		}
	default:
		return fmt.Errorf("unknown delta type %q", a.ops.Type(d))
	}
	return nil
}
