package queue

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// realName is a Real's name when it is given none.
const realName = "RealFIFO"

// DefaultBatchSize bounds how many deltas PopBatch hands over at once.
const DefaultBatchSize = 1000

// RealConfig configures a Real.
type RealConfig struct {
	// Logger receives the queue's log output; its name is added.
	Logger klog.Logger
	// Name names the queue; "RealFIFO" when empty.
	Name string
	// KeyFunc computes an object's key; Ops.DefaultKey when nil.
	KeyFunc func(any) (string, error)
	// Known lists what the consumer holds (non-atomic queues only).
	Known KeyLister
	// Transform is applied to every object before it is queued, except to
	// tombstones and to the objects Resync takes from Known.
	Transform func(any) (any, error)
	// Atomic makes Replace queue one ReplacedAll delta and Resync one
	// SyncAll delta.
	Atomic bool
	// UnlockWhileProcessing releases the lock while a pop is processed,
	// unless two full batches wait (atomic queues only).
	UnlockWhileProcessing bool
	// Bookmarks makes Bookmark queue Bookmark deltas (atomic queues only).
	Bookmarks bool
	// ReusePopBuffers makes PopBatch hand out slices it reuses after the
	// process function returns.
	ReusePopBuffers bool
	// Queued and Latency, when not nil, receive the queue depth and the
	// processing latency.
	Queued  Gauge
	Latency Histogram
	// Resource names the queue's resource in slow-processing logs.
	Resource schema.GroupVersionResource
	// Lists says how an informer's own queue takes lists.
	Lists Lists
}

// Real is a queue that hands every change to the consumer in the order the
// producer queued it: nothing is coalesced per key (see the package
// documentation). The zero value is usable: no key function (Ops.DefaultKey),
// not atomic, nothing known.
type Real[D any, O Ops[D]] struct {
	base[D, O]

	// items holds every queued delta, oldest first, with its key and kind.
	items Ring[realEntry[D]]

	batchSize             int
	atomic                bool
	unlockWhileProcessing bool
	bookmarks             bool
	reusePopBuffers       bool

	metrics  bool
	queued   Gauge
	latency  Histogram
	resource schema.GroupVersionResource

	// processing counts the pops being processed.
	processing int

	// Consumer scratch space of a queue with ReusePopBuffers, reused
	// between pops while no other consumer is using it (consuming).
	// batchKeys holds the keys of the deltas in batch (or single) while
	// they are being processed; see PoppedKeys.
	consuming bool
	batch     []D
	batchKeys []string
	batchSeen map[string]struct{}
	single    []D
	singleBox any
}

// realEntry is one queued delta, its key ("" for the atomic kinds) and its
// kind.
type realEntry[D any] struct {
	delta D
	key   string
	kind  Kind
}

// Configure sets up a Real before its first use. Inconsistent settings are
// corrected, each logged once: with Atomic, Known is ignored; without it,
// UnlockWhileProcessing and Bookmarks are.
func (r *Real[D, O]) Configure(cfg RealConfig) {
	r.config(cfg.Logger, cfg.Name, realName, cfg.KeyFunc, cfg.Known, cfg.Transform)
	r.atomic = cfg.Atomic
	r.unlockWhileProcessing = cfg.UnlockWhileProcessing
	r.bookmarks = cfg.Bookmarks
	r.reusePopBuffers = cfg.ReusePopBuffers
	r.lists = cfg.Lists
	r.resource = cfg.Resource
	if cfg.Queued != nil && cfg.Latency != nil {
		r.metrics, r.queued, r.latency = true, cfg.Queued, cfg.Latency
	}
	if r.atomic {
		if r.known != nil {
			r.logger.Error(nil, "KnownObjects is ignored by a RealFIFO with AtomicEvents")
			r.known = nil
		}
	} else {
		if r.unlockWhileProcessing {
			r.logger.Error(nil, "UnlockWhileProcessing requires AtomicEvents; the queue stays locked while processing")
			r.unlockWhileProcessing = false
		}
		if r.bookmarks {
			r.logger.Error(nil, "EmitDeltaTypeBookmark requires AtomicEvents; bookmarks are not queued")
			r.bookmarks = false
		}
		if r.known == nil {
			r.logger.Error(nil, "RealFIFO without AtomicEvents has no KnownObjects; Replace only detects deletions of queued keys and Resync does nothing")
		}
	}
	r.lock.Lock()
	r.initLocked()
	r.lock.Unlock()
}

// initLocked makes a zero-value Real usable. Called with r.lock held.
func (r *Real[D, O]) initLocked() {
	if r.batchSize <= 0 {
		r.batchSize = DefaultBatchSize
	}
	r.base.initLocked(realName)
}

// Name returns the queue's name.
func (r *Real[D, O]) Name() string { return r.nameOr(realName) }

// Close marks the queue closed and wakes every waiting pop and producer.
// Deltas still queued remain poppable; writes are still accepted.
func (r *Real[D, O]) Close() { r.close(realName) }

// Done returns a channel closed once Synced is true.
func (r *Real[D, O]) Done() <-chan struct{} { return r.done(realName) }

// Len returns the number of queued deltas.
func (r *Real[D, O]) Len() int {
	r.lock.Lock()
	defer r.lock.Unlock()
	return r.items.Len()
}

// QueuedKeys returns the keys of the queued deltas, oldest first ("" for the
// atomic kinds).
func (r *Real[D, O]) QueuedKeys() []string {
	r.lock.Lock()
	defer r.lock.Unlock()
	var keys []string
	for i := 0; i < r.items.Len(); i++ {
		keys = append(keys, r.items.At(i).key)
	}
	return keys
}

// Waiting returns the number of producers waiting for the consumer to catch
// up (a relist applied page by page).
func (r *Real[D, O]) Waiting() int {
	r.lock.Lock()
	defer r.lock.Unlock()
	return r.drain.waiters
}

// SetBatchSize bounds how many deltas PopBatch hands over at once (n <= 0:
// DefaultBatchSize).
func (r *Real[D, O]) SetBatchSize(n int) {
	r.lock.Lock()
	defer r.lock.Unlock()
	r.batchSize = n
	r.initLocked()
}

// UnlocksWhileProcessing reports whether the lock is released while a pop
// is processed (RealConfig.UnlockWhileProcessing, once corrected).
func (r *Real[D, O]) UnlocksWhileProcessing() bool {
	return r.unlockWhileProcessing
}

// KeyOf returns the key of obj, of a delta's or a list of deltas' newest
// object, or of a tombstone; failures are Ops.KeyError.
func (r *Real[D, O]) KeyOf(obj any) (string, error) {
	return r.keyOf(obj)
}

// keyOf returns the key of obj, of a delta's or a list of deltas' newest
// object, or of a tombstone.
func (r *Real[D, O]) keyOf(obj any) (string, error) {
	return keyOf[D, O](r.keyFunc, obj, true)
}

// pushLocked queues one entry and wakes a consumer.
func (r *Real[D, O]) pushLocked(kind Kind, obj any, key string) {
	var o O
	r.items.Push(realEntry[D]{delta: o.Make(kind, obj), key: key, kind: kind})
	r.cond.Signal()
	if r.metrics {
		r.queued.Set(float64(r.items.Len()))
	}
}

// Change queues a delta of kind (Added, Updated or Deleted) for obj. It
// returns a key error, or the transform's error (wrapped); nothing is queued
// then. A deletion whose object the transform refuses is queued with a
// tombstone.
func (r *Real[D, O]) Change(kind Kind, obj any) error {
	key, err := r.keyOf(obj)
	if err != nil {
		return err
	}
	if obj, err = r.transform(obj, key); err != nil {
		var o O
		if kind != Deleted || !o.Refused(err) {
			return err
		}
		// The deletion happened: queue it without the refused object.
		obj = o.Tombstone(key, nil)
	}
	r.lock.Lock()
	r.initLocked()
	r.gate.MarkPopulated()
	r.pushLocked(kind, obj, key)
	r.lock.Unlock()
	return nil
}

// Add queues an Added delta for obj (Change).
func (r *Real[D, O]) Add(obj any) error { return r.Change(Added, obj) }

// Update queues an Updated delta for obj (Change).
func (r *Real[D, O]) Update(obj any) error { return r.Change(Updated, obj) }

// Delete queues a Deleted delta for obj (Change).
func (r *Real[D, O]) Delete(obj any) error { return r.Change(Deleted, obj) }

// Bookmark queues a Bookmark delta at resourceVersion when the queue was
// configured with Atomic and Bookmarks; otherwise it does nothing. It
// always returns nil.
func (r *Real[D, O]) Bookmark(resourceVersion string) error {
	if !r.bookmarks {
		return nil
	}
	var o O
	r.lock.Lock()
	defer r.lock.Unlock()
	r.initLocked()
	r.pushLocked(Bookmark, o.Bookmark(resourceVersion, false), "")
	return nil
}

// Resync asks for known objects to be re-delivered: an atomic queue queues
// one SyncAll delta; another queues a Sync delta for every Known object
// whose key is not queued (nothing without Known). Lookup failures are
// logged and skipped; a known object without key is skipped and its key
// error returned after the others were queued.
func (r *Real[D, O]) Resync() error {
	var o O
	r.lock.Lock()
	defer r.lock.Unlock()
	r.initLocked()
	if r.atomic {
		r.pushLocked(SyncAll, o.SyncAll(), "")
		return nil
	}
	if r.known == nil {
		return nil
	}
	queued := make(map[string]struct{}, r.items.Len())
	for key := range r.queuedLocked() {
		queued[key] = struct{}{}
	}
	var firstErr error
	for _, k := range r.known.ListKeys() {
		if _, ok := queued[k]; ok {
			continue
		}
		obj, exists, err := r.known.GetByKey(k)
		if err != nil {
			utilruntime.HandleErrorWithLogger(r.logger, err, "Known object lookup failed, not queueing it for sync", "key", k)
			continue
		}
		if !exists {
			utilruntime.HandleErrorWithLogger(r.logger, nil, "Key listed by known objects has no object, not queueing it for sync", "key", k)
			continue
		}
		key, err := r.keyOf(obj)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		r.pushLocked(Sync, obj, key)
	}
	return firstErr
}
