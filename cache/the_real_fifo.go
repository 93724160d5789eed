package cache

import (
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache/internal/queue"
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

// ReplacedAllInfo is the Object of a ReplacedAll delta.
type ReplacedAllInfo struct {
	// ResourceVersion is the resource version given to Replace.
	ResourceVersion string
	// Objects is the list given to Replace, transformed by the queue's
	// Transformer if it has one.
	Objects []interface{}

	// keys[i] is the key the queue computed for Objects[i] ("" for an
	// object without one), when the queue is one a shared informer built
	// for itself; nil otherwise. The informer's delta applier uses them
	// instead of computing every key again (see deltaApplier.replaceAll).
	keys []string
}

// BookmarkInfo is the Object of a Bookmark delta.
type BookmarkInfo struct {
	// ResourceVersion is the resource version given to Bookmark.
	ResourceVersion string

	// listEnd is set on the Bookmark that ends a list applied page by
	// page: once it is applied, every listed object is, and the list's
	// version becomes the informer cache's watermark even when lower.
	listEnd bool
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
	q queue.Real[Delta, deltaOps]
}

var (
	_ QueueWithBatch         = &RealFIFO{}
	_ DoneChecker            = &RealFIFO{}
	_ TransformingStore      = &RealFIFO{}
	_ ReflectorBookmarkStore = &RealFIFO{}
	_ listTaker              = &RealFIFO{}
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
// Inconsistent options do not panic: with AtomicEvents, KnownObjects is
// ignored; without it, UnlockWhileProcessing and EmitDeltaTypeBookmark are
// ignored, and a nil KnownObjects makes Replace detect deletions among queued
// keys only and Resync queue nothing. Each case is logged once. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func NewRealFIFOWithOptions(opts RealFIFOOptions) *RealFIFO {
	return newInformerRealFIFO(opts, informerLists{})
}

// newInformerRealFIFO returns the RealFIFO an informer builds for itself:
// configured by opts, taking lists as lists says.
func newInformerRealFIFO(opts RealFIFOOptions, lists informerLists) *RealFIFO {
	name := opts.Name
	if n := opts.Identifier.Name(); n != "" {
		name = n
	}
	logger := klog.Background()
	if opts.Logger != nil {
		logger = *opts.Logger
	}
	cfg := queue.RealConfig{
		Logger:                logger,
		Name:                  name,
		KeyFunc:               opts.KeyFunction,
		Known:                 opts.KnownObjects,
		Transform:             opts.Transformer,
		Atomic:                opts.AtomicEvents,
		UnlockWhileProcessing: opts.UnlockWhileProcessing,
		Bookmarks:             opts.EmitDeltaTypeBookmark,
		ReusePopBuffers:       opts.reusePopBuffers,
		Resource:              opts.Identifier.GroupVersionResource(),
		Lists:                 lists.engine(),
	}
	if opts.Identifier.Reserved() {
		m := newFIFOMetrics(opts.Identifier, opts.MetricsProvider)
		cfg.Queued, cfg.Latency = m.numberOfQueuedItem, m.processingLatency
	}
	f := &RealFIFO{}
	f.q.Configure(cfg)
	return f
}

// Close marks the queue closed and unblocks every waiting Pop or PopBatch.
// Deltas still queued remain poppable; writes are still accepted.
func (f *RealFIFO) Close() {
	f.q.Close()
}

// IsClosed reports whether Close has been called.
func (f *RealFIFO) IsClosed() bool {
	return f.q.IsClosed()
}

// Transformer returns the transform function the queue applies to incoming
// objects (nil when none); it implements TransformingStore.
func (f *RealFIFO) Transformer() TransformFunc {
	return f.q.Transformer()
}

// HasSynced reports whether Add, Update or Delete was called before any
// Replace, or whether everything queued up to and including the first Replace
// has been popped and processed. It never blocks. With UnlockWhileProcessing,
// a delta popped before the first Replace but still being processed when it
// arrives (a Bookmark or SyncAll) is not one of the initial items. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (f *RealFIFO) HasSynced() bool {
	return f.q.Synced()
}

// HasSyncedChecker returns f itself: its Done channel closes when HasSynced
// turns true.
func (f *RealFIFO) HasSyncedChecker() DoneChecker {
	return f
}

// Name returns the queue's name: the Identifier's name, else
// RealFIFOOptions.Name, else "RealFIFO".
func (f *RealFIFO) Name() string {
	return f.q.Name()
}

// Done returns a channel that is closed once HasSynced is true.
func (f *RealFIFO) Done() <-chan struct{} {
	return f.q.Done()
}

// Add queues an Added delta for obj. It returns a KeyError when obj has no
// key, or the transformer's error (wrapped); nothing is queued then.
func (f *RealFIFO) Add(obj interface{}) error {
	return f.q.Add(obj)
}

// Update queues an Updated delta for obj; errors as for Add.
func (f *RealFIFO) Update(obj interface{}) error {
	return f.q.Update(obj)
}

// Delete queues a Deleted delta for obj (always: RealFIFO does not check
// whether the object is known); errors as for Add.
func (f *RealFIFO) Delete(obj interface{}) error {
	return f.q.Delete(obj)
}

// Bookmark queues a Bookmark delta carrying resourceVersion when the queue was
// built with AtomicEvents and EmitDeltaTypeBookmark; otherwise it does
// nothing. It always returns nil. It implements ReflectorBookmarkStore.
func (f *RealFIFO) Bookmark(resourceVersion string) error {
	return f.q.Bookmark(resourceVersion)
}

// Resync asks for known objects to be re-delivered. With AtomicEvents it
// queues one SyncAll delta. Without it, it queues a Sync delta for every
// KnownObjects object whose key is not queued (a queued change is newer than
// the known state); it does nothing without KnownObjects. Lookup failures
// are logged and skipped; a known object without key is skipped and its
// KeyError itself returned after the others were queued. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (f *RealFIFO) Resync() error {
	return f.q.Resync()
}

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
// nothing is queued then, with or without AtomicEvents. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (f *RealFIFO) Replace(newItems []interface{}, resourceVersion string) error {
	return f.q.Replace(newItems, resourceVersion)
}

// beginList implements listTaker (see queue.Real.BeginList).
func (f *RealFIFO) beginList(source listSource) listSink {
	return listSinkOf(f.q.BeginList(source.engine()))
}

// relistsPageByPage implements listTaker.
func (f *RealFIFO) relistsPageByPage() bool {
	return f.q.RelistsPageByPage()
}

// Pop waits until a delta is queued or the queue is closed, removes the oldest
// delta and calls process with a fresh Deltas holding just that delta. It
// returns that Deltas and process's error (the delta is not requeued), or
// ErrFIFOClosed on a closed, empty queue. process runs with the queue locked
// unless UnlockWhileProcessing is in effect and fewer than two batches wait.
func (f *RealFIFO) Pop(process PopProcessFunc) (interface{}, error) {
	return f.q.Pop(process)
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
	return f.q.PopBatch(processBatch, processSingle)
}

// poppedKeys returns the keys the queue computed for deltas while the
// PopBatch call in progress processes them (see queue.Real.PoppedKeys), or
// nil.
func (f *RealFIFO) poppedKeys(deltas []Delta) []string {
	return f.q.PoppedKeys(deltas)
}
