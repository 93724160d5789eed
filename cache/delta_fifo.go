package cache

import (
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache/internal/queue"
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
	q queue.Keyed[Delta, deltaOps]

	// wm is the queue's PoppedWatermark when it tracks the watermark of
	// what it popped for an informer's cache (newInformerDeltaFIFO), else
	// nil.
	wm func() (rv string, reset bool)
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
	return newDeltaFIFO(opts, informerLists{}, false)
}

// newInformerDeltaFIFO returns the DeltaFIFO an informer builds for itself:
// configured by opts, taking lists as lists says, and keeping the watermark
// of what it popped for the informer's cache.
func newInformerDeltaFIFO(opts DeltaFIFOOptions, lists informerLists) *DeltaFIFO {
	return newDeltaFIFO(opts, lists, true)
}

func newDeltaFIFO(opts DeltaFIFOOptions, lists informerLists, watermark bool) *DeltaFIFO {
	logger := klog.Background()
	if opts.Logger != nil {
		logger = *opts.Logger
	}
	f := &DeltaFIFO{}
	f.q.Configure(queue.KeyedConfig{
		Logger:    logger,
		Name:      opts.Name,
		KeyFunc:   opts.KeyFunction,
		Known:     opts.KnownObjects,
		Replaced:  opts.EmitDeltaTypeReplaced,
		Transform: opts.Transformer,
		Lists:     lists.engine(),
		Watermark: watermark,
	})
	if watermark {
		f.wm = f.q.PoppedWatermark
	}
	return f
}

// Close marks the queue closed and unblocks every waiting Pop. Items still
// queued remain poppable; writes are still accepted.
func (f *DeltaFIFO) Close() {
	f.q.Close()
}

// IsClosed reports whether Close has been called.
func (f *DeltaFIFO) IsClosed() bool {
	return f.q.IsClosed()
}

// KeyOf returns obj's key: for a Deltas the key of its newest object, for a
// DeletedFinalStateUnknown its Key, otherwise the key function's result. It
// returns a KeyError (wrapping ErrZeroLengthDeltasObject for an empty Deltas)
// when no key can be computed. Safe for concurrent use.
func (f *DeltaFIFO) KeyOf(obj interface{}) (string, error) {
	return f.q.KeyOf(obj)
}

// Transformer returns the transform function the queue applies to incoming
// objects (nil when none); it implements TransformingStore.
func (f *DeltaFIFO) Transformer() TransformFunc {
	return f.q.Transformer()
}

// HasSynced reports whether Add, Update or Delete was called before any
// Replace, or whether every key queued by the first Replace has been popped
// and processed. It never blocks, not even while Pop is processing.
func (f *DeltaFIFO) HasSynced() bool {
	return f.q.Synced()
}

// HasSyncedChecker returns f itself: its Done channel closes when HasSynced
// turns true.
func (f *DeltaFIFO) HasSyncedChecker() DoneChecker {
	return f
}

// Name returns the queue's name (DeltaFIFOOptions.Name, or "DeltaFIFO").
func (f *DeltaFIFO) Name() string {
	return f.q.Name()
}

// Done returns a channel that is closed once HasSynced is true: after the
// process function of the last initial item has returned. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (f *DeltaFIFO) Done() <-chan struct{} {
	return f.q.Done()
}

// Add queues an Added delta for obj. It returns a KeyError when obj has no
// key, or the transformer's error (wrapped); nothing is queued then.
func (f *DeltaFIFO) Add(obj interface{}) error {
	return f.q.Add(obj)
}

// Update queues an Updated delta for obj; errors as for Add.
func (f *DeltaFIFO) Update(obj interface{}) error {
	return f.q.Update(obj)
}

// Delete queues a Deleted delta for obj, unless the object is unknown: neither
// queued nor (when KnownObjects is set) present in KnownObjects; then it does
// nothing, as the deletion was already reported (for example by a relist). A
// KnownObjects lookup error counts as "present". It returns a KeyError when
// obj has no key, or the transformer's error (wrapped).
func (f *DeltaFIFO) Delete(obj interface{}) error {
	return f.q.Delete(obj)
}

// Pop waits until a key is queued or the queue is closed, then removes the
// oldest key and calls process with its Deltas while holding the queue's lock
// (so process should be quick, and must not call back into the queue). It
// returns the Deltas and process's error; the Deltas is not requeued on
// error. On a closed, empty queue it returns ErrFIFOClosed.
func (f *DeltaFIFO) Pop(process PopProcessFunc) (interface{}, error) {
	return f.q.Pop(process)
}

// Resync queues a Sync delta for every KnownObjects object whose key is not
// already queued (a queued change is newer than the known state). It does
// nothing without KnownObjects. Lookup failures are logged and skipped; a
// known object without key is skipped and its KeyError returned after the
// others were queued: a KeyError does not stop the resync of the remaining
// objects. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (f *DeltaFIFO) Resync() error {
	return f.q.Resync()
}

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
// nothing is queued. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (f *DeltaFIFO) Replace(list []interface{}, resourceVersion string) error {
	return f.q.Replace(list, resourceVersion)
}

// beginList implements listTaker (see queue.Keyed.BeginList).
func (f *DeltaFIFO) beginList(source listSource) listSink {
	return listSinkOf(f.q.BeginList(source.engine()))
}

// relistsPageByPage implements listTaker.
func (f *DeltaFIFO) relistsPageByPage() bool {
	return f.q.RelistsPageByPage()
}

// settled reports whether everything queued has been popped and processed
// and no relist applied page by page is unfinished (see queue.Keyed.Settled).
func (f *DeltaFIFO) settled() bool {
	return f.q.Settled()
}

// poppedWatermark returns the watermark of the pop in progress and whether
// the cache must take it even when lower (see queue.Keyed.PoppedWatermark);
// it is only meaningful inside Pop's process function, and only for a queue
// built by newInformerDeltaFIFO.
func (f *DeltaFIFO) poppedWatermark() (rv string, reset bool) {
	return f.q.PoppedWatermark()
}
