package cache

import (
	"sync"
	"sync/atomic"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// DeltaFIFOOptions configures NewDeltaFIFOWithOptions. Every field is optional.
type DeltaFIFOOptions struct {
	// Logger receives the queue's log output; klog.Background() when nil.
	// The queue's name is added to it.
	Logger *klog.Logger

	// Name names the queue in logs and DoneChecker reports; "DeltaFIFO"
	// when empty.
	Name string

	// KeyFunction computes an object's key; MetaNamespaceKeyFunc when nil.
	KeyFunction KeyFunc

	// KnownObjects lists the keys (and objects) the consumer already holds,
	// typically the informer's indexer. Delete, Replace and Resync consult
	// it: Replace emits deletions for known keys missing from the new list,
	// Resync re-queues known objects. When nil, Replace can only detect
	// deletions of keys still queued, and Resync does nothing.
	KnownObjects KeyListerGetter

	// EmitDeltaTypeReplaced makes Replace queue Replaced deltas. When false
	// (the default, for consumers predating Replaced) it queues Sync deltas.
	EmitDeltaTypeReplaced bool

	// Transformer, when set, is applied to every object before it is queued,
	// except to DeletedFinalStateUnknown tombstones and to the objects Resync
	// takes from KnownObjects (those were transformed when first queued).
	Transformer TransformFunc
}

// DeltaFIFO is a Queue whose accumulator per key is a Deltas: the list of
// changes to that object since it was last popped. Keys pop in the order in
// which they were first queued; a key queued again while waiting keeps its
// place and its Deltas grow. Two consecutive deletions of the same object
// collapse into one: the older one is kept, unless it is a
// DeletedFinalStateUnknown and the newer one is not.
//
// Besides Add, Update and Delete, Replace queues Replaced (or Sync) deltas for
// a relisted set of objects plus Deleted deltas, carrying
// DeletedFinalStateUnknown, for keys that disappeared; Resync queues Sync
// deltas for known objects. See DeltaFIFOOptions.KnownObjects.
//
// Pop always hands over a Deltas (never empty). Create a DeltaFIFO with
// NewDeltaFIFOWithOptions; the zero value also works (MetaNamespaceKeyFunc, no
// known objects). All methods are safe for concurrent use; Pop runs its
// process function with the queue locked, so the consumer may update
// KnownObjects there without racing Replace, Delete or Resync. Pop is meant
// for one consumer goroutine; with several, each still gets whole keys, but
// the order in which the consumers finish their keys is unspecified.
type DeltaFIFO struct {
	// logger is the queue's logger with its name attached.
	logger klog.Logger
	name   string

	lock   sync.Mutex
	cond   sync.Cond
	inited bool

	// items maps every queued key to its non-empty Deltas.
	items map[string]Deltas
	// queue holds each key of items exactly once, in pop order.
	queue queueRing[string]

	gate   fifoSyncGate
	closed atomic.Bool

	keyFunc               KeyFunc
	knownObjects          KeyListerGetter
	emitDeltaTypeReplaced bool
	transformer           TransformFunc

	// lists says how the queue takes lists, when an informer built it for
	// itself (see newInformerDeltaFIFO); drain lets a relist applied page
	// by page wait for the consumer.
	lists informerLists
	drain drainWait

	// wm, when not nil, tracks the watermark of what was popped.
	wm *deltaFIFOWatermark

	// pagesOpen is true from the first page of a relist applied page by
	// page until a complete list is queued (the relist's end, or a later
	// list): until then the consumer may have applied pages of a list whose
	// deletions and watermark never came. Guarded by lock.
	pagesOpen bool
}

var (
	_ Queue             = &DeltaFIFO{}
	_ DoneChecker       = &DeltaFIFO{}
	_ TransformingStore = &DeltaFIFO{}
	_ listTaker         = &DeltaFIFO{}
)

// NewDeltaFIFO returns a DeltaFIFO keyed by keyFunc that consults
// knownObjects (may be nil); it queues Sync, not Replaced, deltas on Replace.
//
// Deprecated: use NewDeltaFIFOWithOptions(DeltaFIFOOptions{KeyFunction:
// keyFunc, KnownObjects: knownObjects}); set EmitDeltaTypeReplaced there to
// tell relists from resyncs.
func NewDeltaFIFO(keyFunc KeyFunc, knownObjects KeyListerGetter) *DeltaFIFO {
	return NewDeltaFIFOWithOptions(DeltaFIFOOptions{KeyFunction: keyFunc, KnownObjects: knownObjects})
}

// NewDeltaFIFOWithOptions returns an empty DeltaFIFO configured by opts.
func NewDeltaFIFOWithOptions(opts DeltaFIFOOptions) *DeltaFIFO {
	f := &DeltaFIFO{
		name:                  opts.Name,
		keyFunc:               opts.KeyFunction,
		knownObjects:          opts.KnownObjects,
		emitDeltaTypeReplaced: opts.EmitDeltaTypeReplaced,
		transformer:           opts.Transformer,
	}
	if f.name == "" {
		f.name = "DeltaFIFO"
	}
	logger := klog.Background()
	if opts.Logger != nil {
		logger = *opts.Logger
	}
	f.logger = klog.LoggerWithName(logger, f.name)
	f.lock.Lock()
	f.initLocked()
	f.lock.Unlock()
	return f
}

// newInformerDeltaFIFO returns the DeltaFIFO an informer builds for itself:
// configured by opts, taking lists as lists says, and keeping the watermark
// of what it popped for the informer's cache.
func newInformerDeltaFIFO(opts DeltaFIFOOptions, lists informerLists) *DeltaFIFO {
	f := NewDeltaFIFOWithOptions(opts)
	f.lists = lists
	f.wm = &deltaFIFOWatermark{before: make(map[string]wmMark)}
	return f
}

// initLocked makes a zero-value DeltaFIFO usable. Called with f.lock held.
func (f *DeltaFIFO) initLocked() {
	if f.inited {
		return
	}
	f.inited = true
	f.cond.L = &f.lock
	f.drain.cond.L = &f.lock
	if f.items == nil {
		f.items = make(map[string]Deltas)
	}
	if f.keyFunc == nil {
		f.keyFunc = MetaNamespaceKeyFunc
	}
	if f.name == "" {
		f.name = "DeltaFIFO"
		f.logger = klog.LoggerWithName(klog.Background(), f.name)
	}
	f.gate.init()
}

// Close marks the queue closed and unblocks every waiting Pop. Items still
// queued remain poppable; writes are still accepted.
func (f *DeltaFIFO) Close() {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.closed.Store(true)
	f.cond.Broadcast()
	f.drain.signalLocked()
}

// IsClosed reports whether Close has been called.
func (f *DeltaFIFO) IsClosed() bool {
	return f.closed.Load()
}

// KeyOf returns obj's key: for a Deltas the key of its newest object, for a
// DeletedFinalStateUnknown its Key, otherwise the key function's result. It
// returns a KeyError (wrapping ErrZeroLengthDeltasObject for an empty Deltas)
// when no key can be computed. Safe for concurrent use.
func (f *DeltaFIFO) KeyOf(obj interface{}) (string, error) {
	return queueKeyOf(f.keyFunc, obj)
}

// Transformer returns the transform function the queue applies to incoming
// objects (nil when none); it implements TransformingStore.
func (f *DeltaFIFO) Transformer() TransformFunc {
	return f.transformer
}

// HasSynced reports whether Add, Update or Delete was called before any
// Replace, or whether every key queued by the first Replace has been popped
// and processed. It never blocks, not even while Pop is processing.
func (f *DeltaFIFO) HasSynced() bool {
	return f.gate.isDone()
}

// HasSyncedChecker returns f itself: its Done channel closes when HasSynced
// turns true.
func (f *DeltaFIFO) HasSyncedChecker() DoneChecker {
	return f
}

// Name returns the queue's name (DeltaFIFOOptions.Name, or "DeltaFIFO").
func (f *DeltaFIFO) Name() string {
	if f.name == "" {
		return "DeltaFIFO"
	}
	return f.name
}

// Done returns a channel that is closed once HasSynced is true.
//
// Difference from client-go: the channel closes only after the process
// function of the last initial item has returned, not just before it runs.
func (f *DeltaFIFO) Done() <-chan struct{} {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	return f.gate.done
}

// transform applies the transformer, if any (see queueTransform).
func (f *DeltaFIFO) transform(obj interface{}, key string) (interface{}, error) {
	return queueTransform(f.transformer, f.Name(), key, obj)
}

// Add queues an Added delta for obj. It returns a KeyError when obj has no
// key, or the transformer's error (wrapped); nothing is queued then.
func (f *DeltaFIFO) Add(obj interface{}) error {
	return f.addOrUpdate(Added, obj)
}

// Update queues an Updated delta for obj; errors as for Add.
func (f *DeltaFIFO) Update(obj interface{}) error {
	return f.addOrUpdate(Updated, obj)
}

func (f *DeltaFIFO) addOrUpdate(t DeltaType, obj interface{}) error {
	key, err := f.KeyOf(obj)
	if err != nil {
		return err
	}
	if obj, err = f.transform(obj, key); err != nil {
		return err
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.gate.markPopulated()
	f.appendLocked(key, Delta{Type: t, Object: obj})
	return nil
}

// Delete queues a Deleted delta for obj, unless the object is unknown: neither
// queued nor (when KnownObjects is set) present in KnownObjects; then it does
// nothing, as the deletion was already reported (for example by a relist). A
// KnownObjects lookup error counts as "present". It returns a KeyError when
// obj has no key, or the transformer's error (wrapped).
func (f *DeltaFIFO) Delete(obj interface{}) error {
	key, err := f.KeyOf(obj)
	if err != nil {
		return err
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.gate.markPopulated()
	if _, queued := f.items[key]; !queued {
		if f.knownObjects == nil {
			return nil
		}
		if _, exists, err := f.knownObjects.GetByKey(key); err == nil && !exists {
			return nil
		}
	}
	if obj, err = f.transform(obj, key); err != nil {
		if !isRefusedObject(err) {
			return err
		}
		// The deletion happened: queue it without the refused object.
		obj = DeletedFinalStateUnknown{Key: key}
	}
	f.appendLocked(key, Delta{Type: Deleted, Object: obj})
	return nil
}

// appendLocked adds d to key's Deltas, queueing the key if it was not queued,
// and collapses two trailing deletions into the more informative one.
func (f *DeltaFIFO) appendLocked(key string, d Delta) {
	old := f.items[key]
	if f.wm != nil {
		f.wm.queued(key, d, len(old) == 0)
	}
	if n := len(old); n > 0 {
		if last := &old[n-1]; last.Type == Deleted && d.Type == Deleted {
			// A watch deletion and a relist-inferred one describe the same
			// event: keep the real final state when there is one.
			if _, tomb := last.Object.(DeletedFinalStateUnknown); tomb {
				*last = d
			}
			return
		}
	} else {
		f.queue.push(key)
		f.cond.Signal()
	}
	f.items[key] = append(old, d)
}

// Pop waits until a key is queued or the queue is closed, then removes the
// oldest key and calls process with its Deltas while holding the queue's lock
// (so process should be quick, and must not call back into the queue). It
// returns the Deltas and process's error; the Deltas is not requeued on
// error. On a closed, empty queue it returns ErrFIFOClosed.
func (f *DeltaFIFO) Pop(process PopProcessFunc) (interface{}, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	var key string
	var deltas Deltas
	for len(deltas) == 0 {
		for f.queue.len() == 0 {
			if f.closed.Load() {
				return nil, ErrFIFOClosed
			}
			f.cond.Wait()
		}
		key = f.queue.popFront()
		f.drain.signalLocked()
		deltas = f.items[key]
		delete(f.items, key)
		if f.wm != nil {
			head := ""
			if f.queue.len() > 0 {
				head = *f.queue.at(0)
			}
			f.wm.pop(key, head, f.queue.len() == 0)
		}
		if len(deltas) == 0 {
			// Cannot happen: every queued key has deltas.
			utilruntime.HandleErrorWithLogger(f.logger, nil, "Queued key has no deltas, skipping it", "key", key)
			f.gate.consumed(1)
		}
	}
	initial := !f.gate.isDone()
	// The initial-batch accounting runs after processing, even on panic.
	defer f.gate.consumed(1)
	if depth := f.queue.len(); depth > 10 {
		defer f.logIfSlow(time.Now(), key, depth)
	}
	var boxed interface{} = deltas
	return boxed, process(boxed, initial)
}

// logIfSlow reports a process function that kept a deep queue locked for long.
func (f *DeltaFIFO) logIfSlow(start time.Time, key string, depth int) {
	if d := time.Since(start); d > 100*time.Millisecond {
		f.logger.Info("Slow event handlers blocking the queue", "key", key, "depth", depth, "duration", d)
	}
}

// Resync queues a Sync delta for every KnownObjects object whose key is not
// already queued (a queued change is newer than the known state). It does
// nothing without KnownObjects. Lookup failures are logged and skipped; a
// known object without key is skipped and its KeyError returned after the
// others were queued.
//
// Difference from client-go: a KeyError does not stop the resync of the
// remaining objects.
func (f *DeltaFIFO) Resync() error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	if f.knownObjects == nil {
		return nil
	}
	var firstErr error
	for _, k := range f.knownObjects.ListKeys() {
		obj, exists, err := f.knownObjects.GetByKey(k)
		if err != nil {
			utilruntime.HandleErrorWithLogger(f.logger, err, "Known object lookup failed, not queueing it for sync", "key", k)
			continue
		}
		if !exists {
			f.logger.Info("Key listed by known objects has no object, not queueing it for sync", "key", k)
			continue
		}
		key, err := f.KeyOf(obj)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if len(f.items[key]) > 0 {
			continue
		}
		f.appendLocked(key, Delta{Type: Sync, Object: obj})
	}
	return firstErr
}
