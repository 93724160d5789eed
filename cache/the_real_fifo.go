package cache

import (
	"sync"
	"sync/atomic"

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

	// lists says how the queue takes lists, when an informer built it for
	// itself (see newInformerRealFIFO).
	lists informerLists
	// drain lets a relist applied page by page wait for the consumer;
	// processing counts the pops being processed.
	drain      drainWait
	processing int

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

// newInformerRealFIFO returns the RealFIFO an informer builds for itself:
// configured by opts, taking lists as lists says.
func newInformerRealFIFO(opts RealFIFOOptions, lists informerLists) *RealFIFO {
	f := NewRealFIFOWithOptions(opts)
	f.lists = lists
	return f
}

// initLocked makes a zero-value RealFIFO usable. Called with f.lock held.
func (f *RealFIFO) initLocked() {
	if f.inited {
		return
	}
	f.inited = true
	f.cond.L = &f.lock
	f.drain.cond.L = &f.lock
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
	f.drain.signalLocked()
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
		if t != Deleted || !isRefusedObject(err) {
			return err
		}
		// The deletion happened: queue it without the refused object.
		obj = DeletedFinalStateUnknown{Key: key}
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
