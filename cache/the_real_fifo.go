package cache

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// RealFIFOOptions configures NewRealFIFOWithOptions.
type RealFIFOOptions struct {
	// Logger receives the queue's log output; klog.Background() when nil.
	// The queue's name is added to it.
	Logger *klog.Logger

	// Name names the queue in logs and DoneChecker reports when
	// Identifier has no name; "RealFIFO" when empty.
	Name string

	// KeyFunction computes an object's key; MetaNamespaceKeyFunc when nil.
	KeyFunction KeyFunc

	// KnownObjects lists the keys (and objects) the consumer already holds.
	// Without AtomicEvents, Replace emits deletions for known keys missing
	// from the new list and Resync re-queues known objects. With
	// AtomicEvents it is not consulted (the consumer reconciles ReplacedAll
	// and SyncAll against its own store) and should be nil.
	KnownObjects KeyListerGetter

	// Transformer, when set, is applied to every object before it is queued,
	// except to DeletedFinalStateUnknown tombstones and to the objects Resync
	// takes from KnownObjects.
	Transformer TransformFunc

	// AtomicEvents makes Replace queue one ReplacedAll delta (holding the
	// whole list) and Resync one SyncAll delta, instead of one delta per
	// object.
	AtomicEvents bool

	// UnlockWhileProcessing lets producers keep queueing while Pop or
	// PopBatch runs its process function (unless two full batches are
	// already waiting). Only honoured together with AtomicEvents. The
	// queue must then have a single consumer goroutine.
	UnlockWhileProcessing bool

	// Identifier names the queue for metrics and logs. Metrics are only
	// published when it is reserved (see InformerNameAndResource.Reserved);
	// its name, when set, overrides Name.
	Identifier InformerNameAndResource

	// MetricsProvider creates the queue's metrics (queue depth, processing
	// latency); when nil, the provider set with SetInformerMetricsProvider
	// is used.
	MetricsProvider InformerMetricsProvider

	// EmitDeltaTypeBookmark makes Bookmark queue Bookmark deltas. Only
	// honoured together with AtomicEvents.
	EmitDeltaTypeBookmark bool

	// reusePopBuffers lets PopBatch hand its process functions slices the
	// queue reuses after they return. Only a shared informer sets it, for
	// the queue it builds and consumes itself with functions that never
	// keep what they are given; it makes that hot path allocation-free.
	reusePopBuffers bool
}

// realFIFODefaultBatchSize bounds how many deltas PopBatch hands over at once.
const realFIFODefaultBatchSize = 1000

// ReplacedAllInfo is the Object of a ReplacedAll delta.
type ReplacedAllInfo struct {
	// ResourceVersion is the resource version given to Replace.
	ResourceVersion string
	// Objects is the list given to Replace, transformed by the queue's
	// Transformer if it has one.
	Objects []interface{}
}

// BookmarkInfo is the Object of a Bookmark delta.
type BookmarkInfo struct {
	// ResourceVersion is the resource version given to Bookmark.
	ResourceVersion string
}

// SyncAllInfo is the Object of a SyncAll delta: the consumer should re-deliver
// every object it holds.
type SyncAllInfo struct{}

// RealFIFO is a QueueWithBatch that hands every change to the consumer, in the
// order the producer queued it: nothing is coalesced per key, deleted objects
// are still delivered, and each popped accumulator is a Deltas of length one.
// It is the informer's default queue.
//
// Without AtomicEvents, Replace queues Deleted deltas (carrying
// DeletedFinalStateUnknown) for keys that disappeared, then a Replaced delta
// per listed object, and Resync queues Sync deltas for known objects. With
// AtomicEvents, Replace queues a single ReplacedAll delta and Resync a single
// SyncAll delta, which the consumer resolves against its store; Bookmark
// queues Bookmark deltas when EmitDeltaTypeBookmark is set.
//
// Create it with NewRealFIFOWithOptions. The zero value is usable too
// (MetaNamespaceKeyFunc, non-atomic, no known objects). All methods are safe
// for concurrent use. Pop and PopBatch run their process functions with the
// queue locked unless UnlockWhileProcessing is in effect; they are meant for a
// single consumer goroutine.
type RealFIFO struct {
	// logger is the queue's logger with its name attached.
	logger klog.Logger
	name   string

	lock   sync.Mutex
	cond   sync.Cond
	inited bool

	// items holds every queued delta, oldest first, with its key.
	items queueRing[realFIFOEntry]

	gate   fifoSyncGate
	closed atomic.Bool

	keyFunc               KeyFunc
	knownObjects          KeyListerGetter
	transformer           TransformFunc
	batchSize             int
	emitAtomicEvents      bool
	unlockWhileProcessing bool
	emitDeltaTypeBookmark bool
	// reusePopBuffers: see RealFIFOOptions.reusePopBuffers.
	reusePopBuffers bool

	identifier InformerNameAndResource
	metrics    realFIFOMetrics

	// pw is the state of pagewise lists (see pagewise_relist.go).
	pw pagewiseQueue

	// Consumer scratch space of an informer's own queue (reusePopBuffers),
	// reused between pops while no other consumer is using it (consuming).
	// batchKeys holds the keys of the deltas in batch (or single) while they
	// are being processed; see poppedKeys.
	consuming bool
	batch     []Delta
	batchKeys []string
	batchSeen map[string]struct{}
	single    Deltas
	singleBox interface{}
}

// realFIFOEntry is one queued delta and its key ("" for the atomic kinds).
type realFIFOEntry struct {
	delta Delta
	key   string
}

var (
	_ QueueWithBatch         = &RealFIFO{}
	_ DoneChecker            = &RealFIFO{}
	_ TransformingStore      = &RealFIFO{}
	_ ReflectorBookmarkStore = &RealFIFO{}
)

// NewRealFIFO returns a non-atomic RealFIFO keyed by keyFunc, reconciling
// against knownObjects and transforming with transformer (both may be nil).
//
// Deprecated: use NewRealFIFOWithOptions.
func NewRealFIFO(keyFunc KeyFunc, knownObjects KeyListerGetter, transformer TransformFunc) *RealFIFO {
	return NewRealFIFOWithOptions(RealFIFOOptions{
		KeyFunction:  keyFunc,
		KnownObjects: knownObjects,
		Transformer:  transformer,
	})
}

// NewRealFIFOWithOptions returns an empty RealFIFO configured by opts.
//
// Difference from client-go: inconsistent options do not panic. With
// AtomicEvents, KnownObjects is ignored; without it, UnlockWhileProcessing and
// EmitDeltaTypeBookmark are ignored, and a nil KnownObjects makes Replace
// detect deletions among queued keys only and Resync queue nothing. Each case
// is logged once.
func NewRealFIFOWithOptions(opts RealFIFOOptions) *RealFIFO {
	f := &RealFIFO{
		name:                  opts.Name,
		keyFunc:               opts.KeyFunction,
		knownObjects:          opts.KnownObjects,
		transformer:           opts.Transformer,
		emitAtomicEvents:      opts.AtomicEvents,
		unlockWhileProcessing: opts.UnlockWhileProcessing,
		emitDeltaTypeBookmark: opts.EmitDeltaTypeBookmark,
		reusePopBuffers:       opts.reusePopBuffers,
		identifier:            opts.Identifier,
	}
	if n := opts.Identifier.Name(); n != "" {
		f.name = n
	}
	if f.name == "" {
		f.name = "RealFIFO"
	}
	logger := klog.Background()
	if opts.Logger != nil {
		logger = *opts.Logger
	}
	f.logger = klog.LoggerWithName(logger, f.name)

	if f.emitAtomicEvents {
		if f.knownObjects != nil {
			f.logger.Error(nil, "KnownObjects is ignored by a RealFIFO with AtomicEvents")
			f.knownObjects = nil
		}
	} else {
		if f.unlockWhileProcessing {
			f.logger.Error(nil, "UnlockWhileProcessing requires AtomicEvents; the queue stays locked while processing")
			f.unlockWhileProcessing = false
		}
		if f.emitDeltaTypeBookmark {
			f.logger.Error(nil, "EmitDeltaTypeBookmark requires AtomicEvents; bookmarks are not queued")
			f.emitDeltaTypeBookmark = false
		}
		if f.knownObjects == nil {
			f.logger.Error(nil, "RealFIFO without AtomicEvents has no KnownObjects; Replace only detects deletions of queued keys and Resync does nothing")
		}
	}
	f.metrics = newRealFIFOMetrics(opts.Identifier, opts.MetricsProvider)
	f.lock.Lock()
	f.initLocked()
	f.lock.Unlock()
	return f
}

// initLocked makes a zero-value RealFIFO usable. Called with f.lock held.
func (f *RealFIFO) initLocked() {
	if f.inited {
		return
	}
	f.inited = true
	f.cond.L = &f.lock
	if f.keyFunc == nil {
		f.keyFunc = MetaNamespaceKeyFunc
	}
	if f.batchSize <= 0 {
		f.batchSize = realFIFODefaultBatchSize
	}
	if f.name == "" {
		f.name = "RealFIFO"
		f.logger = klog.LoggerWithName(klog.Background(), f.name)
	}
	f.gate.init()
}

// Close marks the queue closed and unblocks every waiting Pop or PopBatch.
// Deltas still queued remain poppable; writes are still accepted.
func (f *RealFIFO) Close() {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.closed.Store(true)
	f.cond.Broadcast()
	f.pw.poppedLocked()
}

// IsClosed reports whether Close has been called.
func (f *RealFIFO) IsClosed() bool {
	return f.closed.Load()
}

// keyOf returns the key of obj, of a Delta's or a Deltas' newest object, or a
// DeletedFinalStateUnknown's Key; failures are KeyErrors.
func (f *RealFIFO) keyOf(obj interface{}) (string, error) {
	if d, ok := obj.(Delta); ok {
		obj = d.Object
	}
	return queueKeyOf(f.keyFunc, obj)
}

// Transformer returns the transform function the queue applies to incoming
// objects (nil when none); it implements TransformingStore.
func (f *RealFIFO) Transformer() TransformFunc {
	return f.transformer
}

// HasSynced reports whether Add, Update or Delete was called before any
// Replace, or whether everything queued up to and including the first Replace
// has been popped and processed. It never blocks.
//
// Difference from client-go: with UnlockWhileProcessing, a delta popped
// before the first Replace but still being processed when it arrives (a
// Bookmark or SyncAll) no longer counts as one of the initial items, which
// made client-go report synced one item early.
func (f *RealFIFO) HasSynced() bool {
	return f.gate.isDone()
}

// HasSyncedChecker returns f itself: its Done channel closes when HasSynced
// turns true.
func (f *RealFIFO) HasSyncedChecker() DoneChecker {
	return f
}

// Name returns the queue's name: the Identifier's name, else
// RealFIFOOptions.Name, else "RealFIFO".
func (f *RealFIFO) Name() string {
	if f.name == "" {
		return "RealFIFO"
	}
	return f.name
}

// Done returns a channel that is closed once HasSynced is true.
func (f *RealFIFO) Done() <-chan struct{} {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	return f.gate.done
}

// transform applies the transformer, if any (see queueTransform).
func (f *RealFIFO) transform(obj interface{}, key string) (interface{}, error) {
	return queueTransform(f.transformer, f.Name(), key, obj)
}

// pushLocked queues one entry and wakes a consumer.
func (f *RealFIFO) pushLocked(e realFIFOEntry) {
	f.items.push(e)
	f.cond.Signal()
	if f.metrics.on {
		f.metrics.queued.Set(float64(f.items.len()))
	}
}

// Add queues an Added delta for obj. It returns a KeyError when obj has no
// key, or the transformer's error (wrapped); nothing is queued then.
func (f *RealFIFO) Add(obj interface{}) error {
	return f.queueChange(Added, obj)
}

// Update queues an Updated delta for obj; errors as for Add.
func (f *RealFIFO) Update(obj interface{}) error {
	return f.queueChange(Updated, obj)
}

// Delete queues a Deleted delta for obj (always: RealFIFO does not check
// whether the object is known); errors as for Add.
func (f *RealFIFO) Delete(obj interface{}) error {
	return f.queueChange(Deleted, obj)
}

func (f *RealFIFO) queueChange(t DeltaType, obj interface{}) error {
	key, err := f.keyOf(obj)
	if err != nil {
		return err
	}
	if obj, err = f.transform(obj, key); err != nil {
		return err
	}
	f.lock.Lock()
	f.initLocked()
	f.gate.markPopulated()
	f.pushLocked(realFIFOEntry{delta: Delta{Type: t, Object: obj}, key: key})
	f.lock.Unlock()
	return nil
}

// Bookmark queues a Bookmark delta carrying resourceVersion when the queue was
// built with AtomicEvents and EmitDeltaTypeBookmark; otherwise it does
// nothing. It always returns nil. It implements ReflectorBookmarkStore.
func (f *RealFIFO) Bookmark(resourceVersion string) error {
	if !f.emitDeltaTypeBookmark {
		return nil
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.pushLocked(realFIFOEntry{delta: Delta{Type: Bookmark, Object: BookmarkInfo{ResourceVersion: resourceVersion}}})
	return nil
}

// Replace queues a relist. With AtomicEvents it queues one ReplacedAll delta
// whose ReplacedAllInfo holds list (transformed in place; the queue owns list
// from now on) and resourceVersion. Without it, it first queues a Deleted
// delta carrying DeletedFinalStateUnknown for every key missing from list
// that is queued (in order of first appearance, with the newest queued object,
// unless that newest delta already is a deletion) or known to KnownObjects
// (in ListKeys order, with the known object), then a Replaced delta for every
// object of list, in list order.
//
// The first Replace before any Add, Update or Delete makes everything then
// queued the initial batch for HasSynced. It returns a KeyError for an object
// without key or a transformer error (wrapped); nothing is queued then.
//
// Difference from client-go: errors leave the queue untouched instead of
// half-replaced.
func (f *RealFIFO) Replace(newItems []interface{}, resourceVersion string) error {
	return f.replace(newItems, resourceVersion, f.transformer != nil)
}

// replaceLoaded is Replace for objects that already went through the
// transformer (a warm start's snapshot, snapshot.go): they are queued as
// they are.
func (f *RealFIFO) replaceLoaded(newItems []interface{}, resourceVersion string) error {
	return f.replace(newItems, resourceVersion, false)
}

// replace implements Replace, transforming the listed objects if transform.
func (f *RealFIFO) replace(newItems []interface{}, resourceVersion string, transform bool) error {
	if f.emitAtomicEvents {
		if transform {
			for i, obj := range newItems {
				out, err := f.transformer(obj)
				if err != nil {
					return fmt.Errorf("%s: transforming object #%d of the list: %w", f.Name(), i, err)
				}
				newItems[i] = out
			}
		}
		f.lock.Lock()
		defer f.lock.Unlock()
		f.initLocked()
		f.pushLocked(realFIFOEntry{delta: Delta{Type: ReplacedAll, Object: ReplacedAllInfo{ResourceVersion: resourceVersion, Objects: newItems}}})
		f.gate.firstReplace(f.items.len())
		return nil
	}

	keys := make([]string, len(newItems))
	listed := make(map[string]struct{}, len(newItems))
	objs := newItems
	if transform {
		objs = make([]interface{}, len(newItems))
	}
	for i, obj := range newItems {
		key, err := f.keyOf(obj)
		if err != nil {
			return err
		}
		keys[i] = key
		listed[key] = struct{}{}
		if transform {
			if objs[i], err = f.transform(obj, key); err != nil {
				return err
			}
		}
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

// Resync asks for known objects to be re-delivered. With AtomicEvents it
// queues one SyncAll delta. Without it, it queues a Sync delta for every
// KnownObjects object whose key is not queued (a queued change is newer than
// the known state); it does nothing without KnownObjects. Lookup failures
// are logged and skipped; a known object without key is skipped and its
// KeyError returned after the others were queued.
//
// Difference from client-go: a KeyError does not stop the resync of the
// remaining objects, and the returned error is the KeyError itself.
func (f *RealFIFO) Resync() error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	if f.emitAtomicEvents {
		f.pushLocked(realFIFOEntry{delta: Delta{Type: SyncAll, Object: SyncAllInfo{}}})
		return nil
	}
	if f.knownObjects == nil {
		return nil
	}
	queued := make(map[string]struct{}, f.items.len())
	for key := range f.queuedLocked() {
		queued[key] = struct{}{}
	}
	var firstErr error
	for _, k := range f.knownObjects.ListKeys() {
		if _, ok := queued[k]; ok {
			continue
		}
		obj, exists, err := f.knownObjects.GetByKey(k)
		if err != nil {
			utilruntime.HandleErrorWithLogger(f.logger, err, "Known object lookup failed, not queueing it for sync", "key", k)
			continue
		}
		if !exists {
			utilruntime.HandleErrorWithLogger(f.logger, nil, "Key listed by known objects has no object, not queueing it for sync", "key", k)
			continue
		}
		key, err := f.keyOf(obj)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		f.pushLocked(realFIFOEntry{delta: Delta{Type: Sync, Object: obj}, key: key})
	}
	return firstErr
}

// waitLocked blocks until a delta is queued or the queue is closed; it
// returns false for a closed, empty queue.
func (f *RealFIFO) waitLocked() bool {
	for f.items.len() == 0 {
		if f.closed.Load() {
			return false
		}
		f.cond.Wait()
	}
	return true
}

// Pop waits until a delta is queued or the queue is closed, removes the oldest
// delta and calls process with a fresh Deltas holding just that delta. It
// returns that Deltas and process's error (the delta is not requeued), or
// ErrFIFOClosed on a closed, empty queue. process runs with the queue locked
// unless UnlockWhileProcessing is in effect and fewer than two batches wait.
func (f *RealFIFO) Pop(process PopProcessFunc) (interface{}, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	if !f.waitLocked() {
		return nil, ErrFIFOClosed
	}
	initial := !f.gate.isDone()
	e := f.items.popFront()
	var deltas interface{} = Deltas{e.delta}
	err := f.processLocked(e.key, 1, func() error { return process(deltas, initial) })
	return deltas, err
}

// PopBatch waits until a delta is queued or the queue is closed (then it
// returns ErrFIFOClosed), and removes the longest run of oldest deltas that
//
//   - holds at most the batch size (1000) deltas,
//   - holds no two deltas of the same key,
//   - holds only per-object deltas (Added, Updated, Deleted, Replaced, Sync):
//     a ReplacedAll, SyncAll or Bookmark delta is always popped alone, and
//   - does not mix deltas of the initial batch with later ones.
//
// A run of one delta goes to processSingle as a Deltas of length one; a
// longer run goes to processBatch. It returns the function's error; popped
// deltas are not requeued. The functions run with the queue locked unless
// UnlockWhileProcessing is in effect and fewer than two batches wait.
//
// The slice passed to processBatch, and the Deltas passed to processSingle,
// are new for each call and belong to the caller from then on: the functions
// may keep them, and the queue never touches them again (as in client-go).
// The queue a shared informer builds for itself reuses them instead, since it
// alone consumes it.
func (f *RealFIFO) PopBatch(processBatch ProcessBatchFunc, processSingle PopProcessFunc) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	if !f.waitLocked() {
		return ErrFIFOClosed
	}
	initial := !f.gate.isDone()

	limit := min(f.items.len(), f.batchSize)
	if p := f.gate.pending; p > 0 {
		limit = min(limit, p)
	}
	n := 1
	if first := f.items.at(0); deltaTypeBatchable(first.delta.Type) {
		for n < limit {
			e := f.items.at(n)
			if !deltaTypeBatchable(e.delta.Type) || f.inRunLocked(n, e.key) {
				break
			}
			n++
		}
	}
	if n > inRunLinearLimit {
		// Forget the run's keys one by one: cheaper than clearing a set
		// that once held a full batch.
		for i := 0; i < n; i++ {
			delete(f.batchSeen, f.items.at(i).key)
		}
	}

	// An informer's own queue uses the shared scratch buffers unless another
	// consumer holds them (several consumers with UnlockWhileProcessing
	// break the contract, but must not corrupt each other's batches). Any
	// other queue hands out fresh slices: one allocation per batch.
	shared := f.reusePopBuffers && !f.consuming
	if shared {
		f.consuming = true
		defer func() { f.consuming = false }()
	}

	if n == 1 {
		e := f.items.popFront()
		var arg interface{}
		if shared {
			if f.singleBox == nil {
				f.single = make(Deltas, 1)
				f.singleBox = f.single
			}
			f.single[0] = e.delta
			f.batchKeys = append(f.batchKeys[:0], e.key)
			arg = f.singleBox
			defer func() {
				f.single[0] = Delta{}
				clear(f.batchKeys)
				f.batchKeys = f.batchKeys[:0]
			}()
		} else {
			arg = Deltas{e.delta}
		}
		return f.processLocked(e.key, 1, func() error { return processSingle(arg, initial) })
	}

	var batch []Delta
	if shared {
		if cap(f.batch) < n {
			f.batch = make([]Delta, 0, max(n, min(2*cap(f.batch), f.batchSize)))
		}
		batch = f.batch[:n]
		f.batchKeys = slices.Grow(f.batchKeys[:0], n)[:n]
		defer func() {
			clear(batch)
			clear(f.batchKeys)
			f.batchKeys = f.batchKeys[:0]
		}()
	} else {
		batch = make([]Delta, n)
	}
	key := f.items.at(0).key
	for i := range batch {
		e := f.items.popFront()
		batch[i] = e.delta
		if shared {
			f.batchKeys[i] = e.key
		}
	}
	return f.processLocked(key, n, func() error { return processBatch(batch, initial) })
}

// poppedKeys returns the keys the queue computed for deltas, when deltas is
// exactly what the PopBatch call in progress handed to its process function
// from the queue's reused buffers (the batch slice, or the Deltas of length
// one); otherwise nil. keys[i] is the key of deltas[i] ("" for the atomic
// kinds). It lets the consumer skip computing the keys again. It must only
// be called from within that process function, by the queue's only consumer
// goroutine (an informer's processing loop); the result is valid until the
// function returns.
func (f *RealFIFO) poppedKeys(deltas []Delta) []string {
	n := len(deltas)
	if n == 0 || len(f.batchKeys) != n {
		return nil
	}
	first := &deltas[0]
	if n == 1 && len(f.single) == 1 && first == &f.single[0] {
		return f.batchKeys
	}
	if cap(f.batch) >= n && first == &f.batch[:1][0] {
		return f.batchKeys
	}
	return nil
}

// inRunLinearLimit is the run length up to which PopBatch finds duplicate keys
// by linear search instead of a set.
const inRunLinearLimit = 16

// inRunLocked reports whether key is among the keys of items[0:n] (the run
// being collected by PopBatch), remembering key for the next call. Short
// runs compare linearly; long ones switch to a reusable set.
func (f *RealFIFO) inRunLocked(n int, key string) bool {
	const linearLimit = inRunLinearLimit
	if n <= linearLimit {
		for i := 0; i < n; i++ {
			if f.items.at(i).key == key {
				return true
			}
		}
		if n == linearLimit {
			if f.batchSeen == nil {
				f.batchSeen = make(map[string]struct{})
			}
			for i := 0; i <= n; i++ {
				f.batchSeen[f.items.at(i).key] = struct{}{}
			}
		}
		return false
	}
	if _, dup := f.batchSeen[key]; dup {
		return true
	}
	f.batchSeen[key] = struct{}{}
	return false
}

// processLocked runs process for count just-popped deltas (the first with key
// firstKey), with the lock released when UnlockWhileProcessing allows it,
// then updates metrics and the initial-batch accounting. Called and returns
// with f.lock held.
//
// Only deltas that were queued when the first Replace ran count towards the
// initial batch. As the queue pops in order, those are the first "pending"
// pops; the share of this pop is fixed now, before the lock may be released,
// so that a Replace arriving while an earlier delta is processed (possible
// with UnlockWhileProcessing) is not marked synced by that delta.
func (f *RealFIFO) processLocked(firstKey string, count int, process func() error) error {
	f.pw.poppedLocked()
	depth := f.items.len()
	if f.metrics.on {
		f.metrics.queued.Set(float64(depth))
	}
	var start time.Time
	timed := f.metrics.on || depth > 10
	if timed {
		start = time.Now()
	}
	// consumed must run even if process panics, and with the lock held.
	defer f.gate.consumed(min(count, f.gate.pending))
	if f.unlockWhileProcessing && depth < 2*f.batchSize {
		f.lock.Unlock()
		defer f.lock.Lock()
	}
	err := process()
	if timed {
		elapsed := time.Since(start)
		if f.metrics.on {
			f.metrics.latency.Observe(elapsed.Seconds())
		}
		if depth > 10 && elapsed > min(time.Duration(count)*100*time.Millisecond, time.Second) {
			kv := []interface{}{"key", firstKey, "depth", depth, "batchSize", count, "duration", elapsed, "reason", "slow event handlers blocking the queue"}
			if gvr := f.identifier.GroupVersionResource(); !gvr.Empty() {
				kv = append(kv, "resource", gvr)
			}
			f.logger.Info("Slow processing of popped deltas", kv...)
		}
	}
	return err
}

// realFIFOMetrics holds a RealFIFO's metrics; on is false when none are
// published, and then the queue skips them (and the clock reads) entirely.
type realFIFOMetrics struct {
	on      bool
	queued  GaugeMetric
	latency HistogramMetric
}

func newRealFIFOMetrics(id InformerNameAndResource, provider InformerMetricsProvider) realFIFOMetrics {
	if !id.Reserved() {
		return realFIFOMetrics{}
	}
	m := newFIFOMetrics(id, provider)
	return realFIFOMetrics{on: true, queued: m.numberOfQueuedItem, latency: m.processingLatency}
}
