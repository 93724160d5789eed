package queue

import (
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// keyedName is a Keyed's name when it is given none.
const keyedName = "DeltaFIFO"

// KeyedConfig configures a Keyed.
type KeyedConfig struct {
	// Logger receives the queue's log output; its name is added.
	Logger klog.Logger
	// Name names the queue; "DeltaFIFO" when empty.
	Name string
	// KeyFunc computes an object's key; Ops.DefaultKey when nil.
	KeyFunc func(any) (string, error)
	// Known lists what the consumer holds: Delete, lists and Resync
	// consult it.
	Known KeyLister
	// Replaced makes lists queue Replaced deltas; Sync deltas otherwise.
	Replaced bool
	// Transform is applied to every object before it is queued, except to
	// tombstones and to the objects Resync takes from Known.
	Transform func(any) (any, error)
	// Lists says how an informer's own queue takes lists.
	Lists Lists
	// Watermark makes the queue track the watermark of what it popped
	// (PoppedWatermark).
	Watermark bool
}

// Keyed is a queue whose accumulator per key is the list of changes to that
// object since it was last popped (see the package documentation). The zero
// value is usable: no key function (Ops.DefaultKey), nothing known, Sync
// deltas for lists.
type Keyed[D any, O Ops[D]] struct {
	base[D, O]

	// items maps every queued key to its non-empty list of deltas.
	items map[string][]D
	// queue holds each key of items exactly once, in pop order.
	queue Ring[string]

	replaced bool

	// wm, when not nil, tracks the watermark of what was popped.
	wm *watermark

	// pagesOpen is true from the first page of a relist applied page by
	// page until a complete list is queued (the relist's end, or a later
	// list): until then the consumer may have applied pages of a list whose
	// deletions and watermark never came. Guarded by lock.
	pagesOpen bool
}

// Configure sets up a Keyed before its first use.
func (k *Keyed[D, O]) Configure(cfg KeyedConfig) {
	k.config(cfg.Logger, cfg.Name, keyedName, cfg.KeyFunc, cfg.Known, cfg.Transform)
	k.replaced = cfg.Replaced
	k.lists = cfg.Lists
	if cfg.Watermark {
		k.wm = &watermark{before: make(map[string]wmMark)}
	}
	k.lock.Lock()
	k.initLocked()
	k.lock.Unlock()
}

// initLocked makes a zero-value Keyed usable. Called with k.lock held.
func (k *Keyed[D, O]) initLocked() {
	if k.items == nil {
		k.items = make(map[string][]D)
	}
	k.base.initLocked(keyedName)
}

// Name returns the queue's name.
func (k *Keyed[D, O]) Name() string { return k.nameOr(keyedName) }

// Close marks the queue closed and wakes every waiting pop and producer.
// Keys still queued remain poppable; writes are still accepted.
func (k *Keyed[D, O]) Close() { k.close(keyedName) }

// Done returns a channel closed once Synced is true.
func (k *Keyed[D, O]) Done() <-chan struct{} { return k.done(keyedName) }

// Len returns the number of queued keys.
func (k *Keyed[D, O]) Len() int {
	k.lock.Lock()
	defer k.lock.Unlock()
	return k.queue.Len()
}

// QueuedKeys returns the queued keys in pop order.
func (k *Keyed[D, O]) QueuedKeys() []string {
	k.lock.Lock()
	defer k.lock.Unlock()
	var keys []string
	for i := 0; i < k.queue.Len(); i++ {
		keys = append(keys, *k.queue.At(i))
	}
	return keys
}

// Change queues a delta of kind (Added or Updated) for obj. It returns a key
// error, or the transform's error (wrapped); nothing is queued then.
func (k *Keyed[D, O]) Change(kind Kind, obj any) error {
	key, err := k.KeyOf(obj)
	if err != nil {
		return err
	}
	if obj, err = k.transform(obj, key); err != nil {
		return err
	}
	var o O
	k.lock.Lock()
	defer k.lock.Unlock()
	k.initLocked()
	k.gate.MarkPopulated()
	k.appendLocked(key, o.Make(kind, obj))
	return nil
}

// Add queues an Added delta for obj (Change).
func (k *Keyed[D, O]) Add(obj any) error { return k.Change(Added, obj) }

// Update queues an Updated delta for obj (Change).
func (k *Keyed[D, O]) Update(obj any) error { return k.Change(Updated, obj) }

// Delete queues a Deleted delta for obj, unless the object is unknown:
// neither queued nor (when Known is set) present in Known; a Known lookup
// error counts as present. It returns a key error, or the transform's error
// (wrapped); a deletion whose object the transform refuses is queued with a
// tombstone.
func (k *Keyed[D, O]) Delete(obj any) error {
	key, err := k.KeyOf(obj)
	if err != nil {
		return err
	}
	var o O
	k.lock.Lock()
	defer k.lock.Unlock()
	k.initLocked()
	k.gate.MarkPopulated()
	if _, queued := k.items[key]; !queued {
		if k.known == nil {
			return nil
		}
		if _, exists, err := k.known.GetByKey(key); err == nil && !exists {
			return nil
		}
	}
	if obj, err = k.transform(obj, key); err != nil {
		if !o.Refused(err) {
			return err
		}
		// The deletion happened: queue it without the refused object.
		obj = o.Tombstone(key, nil)
	}
	k.appendLocked(key, o.Make(Deleted, obj))
	return nil
}

// appendLocked adds d to key's deltas, queueing the key if it was not queued,
// and collapses two trailing deletions into the more informative one.
func (k *Keyed[D, O]) appendLocked(key string, d D) {
	var o O
	old := k.items[key]
	if k.wm != nil {
		queuedMark(k.wm, o, key, d, len(old) == 0)
	}
	if n := len(old); n > 0 {
		if last := &old[n-1]; o.Kind(*last) == Deleted && o.Kind(d) == Deleted {
			// A watch deletion and a relist-inferred one describe the same
			// event: keep the real final state when there is one.
			if _, _, tomb := o.AsTombstone(o.Object(*last)); tomb {
				*last = d
			}
			return
		}
	} else {
		k.queue.Push(key)
		k.cond.Signal()
	}
	k.items[key] = append(old, d)
}

// Pop waits until a key is queued or the queue is closed, then removes the
// oldest key and calls process with its deltas (Ops.Box) while holding the
// queue's lock. It returns the deltas and process's error, or Ops.Closed on
// a closed, empty queue.
func (k *Keyed[D, O]) Pop(process func(any, bool) error) (any, error) {
	var o O
	k.lock.Lock()
	defer k.lock.Unlock()
	k.initLocked()
	var key string
	var deltas []D
	for len(deltas) == 0 {
		for k.queue.Len() == 0 {
			if k.closed.Load() {
				return nil, o.Closed()
			}
			k.cond.Wait()
		}
		key = k.queue.PopFront()
		k.drain.signalLocked()
		deltas = k.items[key]
		delete(k.items, key)
		if k.wm != nil {
			head := ""
			if k.queue.Len() > 0 {
				head = *k.queue.At(0)
			}
			k.wm.pop(key, head, k.queue.Len() == 0)
		}
		if len(deltas) == 0 {
			// Cannot happen: every queued key has deltas.
			utilruntime.HandleErrorWithLogger(k.logger, nil, "Queued key has no deltas, skipping it", "key", key)
			k.gate.Consumed(1)
		}
	}
	initial := !k.gate.IsDone()
	// The initial-batch accounting runs after processing, even on panic.
	defer k.gate.Consumed(1)
	if depth := k.queue.Len(); depth > 10 {
		defer k.logIfSlow(time.Now(), key, depth)
	}
	boxed := o.Box(deltas)
	return boxed, process(boxed, initial)
}

// logIfSlow reports a process function that kept a deep queue locked for long.
func (k *Keyed[D, O]) logIfSlow(start time.Time, key string, depth int) {
	if d := time.Since(start); d > 100*time.Millisecond {
		k.logger.Info("Slow event handlers blocking the queue", "key", key, "depth", depth, "duration", d)
	}
}

// Resync queues a Sync delta for every Known object whose key is not already
// queued. It does nothing without Known. Lookup failures are logged and
// skipped; a known object without key is skipped and its key error returned
// after the others were queued.
func (k *Keyed[D, O]) Resync() error {
	var o O
	k.lock.Lock()
	defer k.lock.Unlock()
	k.initLocked()
	if k.known == nil {
		return nil
	}
	var firstErr error
	for _, kk := range k.known.ListKeys() {
		obj, exists, err := k.known.GetByKey(kk)
		if err != nil {
			utilruntime.HandleErrorWithLogger(k.logger, err, "Known object lookup failed, not queueing it for sync", "key", kk)
			continue
		}
		if !exists {
			k.logger.Info("Key listed by known objects has no object, not queueing it for sync", "key", kk)
			continue
		}
		key, err := k.KeyOf(obj)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if len(k.items[key]) > 0 {
			continue
		}
		k.appendLocked(key, o.Make(Sync, obj))
	}
	return firstErr
}
