package cache

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// DeltaType names the kind of change a Delta records.
type DeltaType string

// The kinds of change queued by DeltaFIFO and RealFIFO.
const (
	// Added: the object was created (watch ADDED event).
	Added DeltaType = "Added"
	// Updated: the object changed (watch MODIFIED event).
	Updated DeltaType = "Updated"
	// Deleted: the object is gone. Object holds its last known state, or a
	// DeletedFinalStateUnknown when the deletion was inferred by a relist.
	Deleted DeltaType = "Deleted"
	// Replaced: the object was part of a relist (or the initial list); it may
	// or may not have changed. DeltaFIFO emits it only with
	// EmitDeltaTypeReplaced (Sync otherwise).
	Replaced DeltaType = "Replaced"
	// ReplacedAll: a whole relist queued atomically by a RealFIFO with
	// AtomicEvents. Object is a ReplacedAllInfo holding the full list.
	ReplacedAll DeltaType = "ReplacedAll"
	// Sync: a synthetic re-delivery of a known object by a periodic resync.
	Sync DeltaType = "Sync"
	// SyncAll: a periodic resync queued atomically by a RealFIFO with
	// AtomicEvents; the consumer re-delivers every object it knows. Object is
	// a SyncAllInfo.
	SyncAll DeltaType = "SyncAll"
	// Bookmark: the watch reached a resource version without object changes.
	// Object is a BookmarkInfo.
	Bookmark DeltaType = "Bookmark"
)

// deltaTypeBatchable reports whether deltas of type t concern one object and
// may be processed together with deltas of other objects.
func deltaTypeBatchable(t DeltaType) bool {
	switch t {
	case Added, Updated, Deleted, Replaced, Sync:
		return true
	}
	return false
}

// Delta is one change: its Type, and the object's state after the change (for
// Deleted, the last state known before the deletion).
type Delta struct {
	Type   DeltaType
	Object interface{}
}

// Deltas is a list of changes to one object, oldest first.
type Deltas []Delta

// Oldest returns a pointer to the first (oldest) Delta, or nil when d is empty.
func (d Deltas) Oldest() *Delta {
	if len(d) == 0 {
		return nil
	}
	return &d[0]
}

// Newest returns a pointer to the last (newest) Delta, or nil when d is empty.
func (d Deltas) Newest() *Delta {
	if len(d) == 0 {
		return nil
	}
	return &d[len(d)-1]
}

// ErrZeroLengthDeltasObject is the Err of the KeyError returned when asked for
// the key of an empty Deltas.
var ErrZeroLengthDeltasObject = errors.New("0 length Deltas object; can't get key")

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
}

// deltaFIFOWatermark tracks, for an informer's DeltaFIFO, the resourceVersion
// up to which every change the queue received has been popped: the
// informer's cache records it as its watermark once the pop is applied.
// Keys pop in the order in which they were first queued, not in watch
// order (a@10, b@11, a@12 pop as a@10+a@12, then b@11), so the version of the
// newest change popped is not a watermark: with b@11 still queued, the
// watermark after popping a is 10. All fields are guarded by the queue's
// lock.
type deltaFIFOWatermark struct {
	// received is the resourceVersion of the newest change queued: a watch
	// event's object, or the version of a complete list.
	received string
	// before holds, for every queued key, received as it was when the key
	// was queued: every change older than the key's oldest queued delta.
	before map[string]string
	// popped is the watermark once the pop in progress is applied.
	popped string
}

// queued records that d is appended to key's deltas (first is true when
// key was not queued).
func (w *deltaFIFOWatermark) queued(key string, d Delta, first bool) {
	if first {
		w.before[key] = w.received
	}
	switch d.Type {
	case Added, Updated, Deleted:
		if _, tomb := d.Object.(DeletedFinalStateUnknown); tomb {
			return
		}
		if rv, ok := storeResourceVersionOf(d.Object); ok && rv != "" {
			w.received = rv
		}
	}
}

// listed records that a list current at rv was queued.
func (w *deltaFIFOWatermark) listed(rv string) {
	if rv != "" {
		w.received = rv
	}
}

// pop records that key was popped; head is the key now first in the queue
// ("" when it is empty).
func (w *deltaFIFOWatermark) pop(key, head string, empty bool) {
	delete(w.before, key)
	if empty {
		w.popped = w.received
		return
	}
	w.popped = w.before[head]
}

// listedLocked records, for the watermark, that a list current at
// resourceVersion was queued. When that left nothing queued (the list
// brought nothing to apply), nothing is being processed either (Pop holds
// the lock while it processes), so the informer's cache has caught up with
// the list: its watermark moves now, as no pop will move it.
func (f *DeltaFIFO) listedLocked(resourceVersion string) {
	if f.wm == nil {
		return
	}
	f.wm.listed(resourceVersion)
	if f.queue.len() > 0 {
		return
	}
	if c, ok := f.lists.cached.(*cache); ok {
		c.advanceResourceVersion(resourceVersion)
	}
}

// poppedWatermark returns the resourceVersion up to which every change the
// queue received is applied once the pop in progress is: it is only
// meaningful inside Pop's process function, and only for a queue built by
// newInformerDeltaFIFO.
func (f *DeltaFIFO) poppedWatermark() string {
	if f.wm == nil {
		return ""
	}
	return f.wm.popped
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
	f.wm = &deltaFIFOWatermark{before: make(map[string]string)}
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
		return err
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
