package cache

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// PopProcessFunc processes one accumulator popped from a Queue. obj is what the
// queue accumulated for one key (a Deltas for DeltaFIFO and RealFIFO, the
// latest object for FIFO). isInInitialList is true when the accumulator
// belongs to the first batch handed to the queue by Replace, i.e. when the
// queue had not yet synced at the moment the item was popped.
//
// The error returned by the function is returned unchanged by Pop; the popped
// item is not put back into the queue.
type PopProcessFunc func(obj interface{}, isInInitialList bool) error

// ProcessBatchFunc processes a run of consecutive deltas popped together by
// QueueWithBatch.PopBatch. The deltas are in queue order and no two of them
// belong to the same key. isInInitialList has the same meaning as for
// PopProcessFunc and is the same for every delta of the batch.
type ProcessBatchFunc func(deltas []Delta, isInInitialList bool) error

// ErrFIFOClosed is returned by Pop and PopBatch once the queue has been closed
// and holds nothing more to pop. Compare with errors.Is.
var ErrFIFOClosed = errors.New("DeltaFIFO: manipulating with closed queue")

// Queue is a ReflectorStore whose writes accumulate per key and are handed,
// one key at a time, to a consumer calling Pop. How writes accumulate is up to
// the implementation (FIFO keeps the latest object, DeltaFIFO the list of
// changes since the last pop, RealFIFO every change in arrival order).
//
// All methods may be called concurrently. Pop is meant for a single consumer
// goroutine; with several, accumulators may be processed concurrently and out
// of order.
type Queue interface {
	ReflectorStore

	// Pop blocks until something is queued or the queue is closed. On a
	// closed, empty queue it returns ErrFIFOClosed. Otherwise it removes the
	// oldest accumulator, calls the process function with it, and returns
	// the accumulator together with the function's error. Items are not
	// requeued when the function fails.
	Pop(PopProcessFunc) (interface{}, error)

	// HasSynced reports whether the first batch of items has been popped and
	// processed. The first batch is what the first Replace queued when that
	// Replace came before any Add, Update or Delete; otherwise it is empty
	// and HasSynced turns true with the first such call.
	HasSynced() bool

	// HasSyncedChecker returns a DoneChecker whose Done channel is closed
	// when HasSynced turns true.
	HasSyncedChecker() DoneChecker

	// Close marks the queue closed and wakes every blocked Pop. Items still
	// queued can be popped; after that Pop returns ErrFIFOClosed. Writes are
	// still accepted after Close.
	Close()
}

// QueueWithBatch is a Queue that can also hand several queued items to the
// consumer in one call.
type QueueWithBatch interface {
	Queue

	// PopBatch blocks like Pop, then removes a run of queued items chosen by
	// the implementation and passes them to processBatch, or, when the run
	// holds exactly one item, to processSingle (with the same argument Pop
	// would pass). Both functions must apply the same processing. It returns
	// ErrFIFOClosed on a closed, empty queue, else the function's error. It
	// is meant for a single consumer goroutine.
	PopBatch(processBatch ProcessBatchFunc, processSingle PopProcessFunc) error
}

// FIFO is a Queue that keeps, per key, only the most recent object, and pops
// keys in the order they were first queued. Deleting an object drops it from
// the queue (the consumer never sees deletions); Resync queues nothing new.
//
// Use it when every object must be processed at least once in its latest
// state and deletions and periodic reprocessing do not matter; see DeltaFIFO
// otherwise.
//
// Create it with NewFIFO. The zero value is also usable and keys objects with
// MetaNamespaceKeyFunc. All methods are safe for concurrent use. The process
// function given to Pop runs with the queue locked, so it may update state
// that must stay consistent with the queue, but must not call back into it.
type FIFO struct {
	lock   sync.Mutex
	cond   sync.Cond
	inited bool

	// items holds the latest object per key; every key of items is in queue.
	items map[string]interface{}
	// queue holds keys in pop order. A key whose object was deleted stays in
	// queue and is skipped by Pop.
	queue queueRing[string]

	gate    fifoSyncGate
	keyFunc KeyFunc
	closed  atomic.Bool
}

var (
	_ Queue       = &FIFO{}
	_ DoneChecker = &FIFO{}
)

// NewFIFO returns an empty FIFO that keys objects with keyFunc (nil means
// MetaNamespaceKeyFunc).
func NewFIFO(keyFunc KeyFunc) *FIFO {
	f := &FIFO{keyFunc: keyFunc}
	f.lock.Lock()
	f.initLocked()
	f.lock.Unlock()
	return f
}

// initLocked makes a zero-value FIFO usable. Called with f.lock held.
func (f *FIFO) initLocked() {
	if f.inited {
		return
	}
	f.inited = true
	f.cond.L = &f.lock
	if f.items == nil {
		f.items = make(map[string]interface{})
	}
	if f.keyFunc == nil {
		f.keyFunc = MetaNamespaceKeyFunc
	}
	f.gate.init()
}

// key computes obj's key, reporting failures as KeyError.
func (f *FIFO) key(obj interface{}) (string, error) {
	kf := f.keyFunc
	if kf == nil {
		kf = MetaNamespaceKeyFunc
	}
	id, err := kf(obj)
	if err != nil {
		return "", KeyError{Obj: obj, Err: err}
	}
	return id, nil
}

// Close marks the queue closed and unblocks every waiting Pop. Objects still
// queued remain poppable.
func (f *FIFO) Close() {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.closed.Store(true)
	f.cond.Broadcast()
}

// IsClosed reports whether Close has been called.
func (f *FIFO) IsClosed() bool {
	return f.closed.Load()
}

// HasSynced reports whether Add, Update or Delete was called before any
// Replace, or whether every object queued by the first Replace has been popped
// and processed. It never blocks.
func (f *FIFO) HasSynced() bool {
	return f.gate.isDone()
}

// HasSyncedChecker returns f itself: its Done channel closes when HasSynced
// turns true.
func (f *FIFO) HasSyncedChecker() DoneChecker {
	return f
}

// Name returns "FIFO"; it names the queue in DoneChecker reports.
func (f *FIFO) Name() string {
	return "FIFO"
}

// Done returns a channel that is closed once HasSynced is true.
func (f *FIFO) Done() <-chan struct{} {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	return f.gate.done
}

// Add queues obj under its key. If the key is already queued, obj replaces
// the older object and keeps the key's place in line. It returns a KeyError
// when the key cannot be computed.
func (f *FIFO) Add(obj interface{}) error {
	id, err := f.key(obj)
	if err != nil {
		return err
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.gate.markPopulated()
	if _, queued := f.items[id]; !queued {
		f.queue.push(id)
		f.cond.Signal()
	}
	f.items[id] = obj
	return nil
}

// Update is the same as Add.
func (f *FIFO) Update(obj interface{}) error {
	return f.Add(obj)
}

// Delete drops the object with obj's key from the queue, if it is there; the
// consumer is not told. It returns a KeyError when the key cannot be computed.
func (f *FIFO) Delete(obj interface{}) error {
	id, err := f.key(obj)
	if err != nil {
		return err
	}
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.gate.markPopulated()
	delete(f.items, id)
	return nil
}

// Pop waits until an object is queued or the queue is closed, then removes the
// oldest queued object and calls process with it while holding the queue's
// lock. It returns the object and process's error, or ErrFIFOClosed on a
// closed, empty queue. A failed object is not requeued; use Add to retry it.
func (f *FIFO) Pop(process PopProcessFunc) (interface{}, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	for {
		for f.queue.len() == 0 {
			if f.closed.Load() {
				return nil, ErrFIFOClosed
			}
			f.cond.Wait()
		}
		initial := !f.gate.isDone()
		id := f.queue.popFront()
		obj, ok := f.items[id]
		if !ok {
			// Deleted while queued. It still counts towards the initial
			// batch; nothing remains to process for it.
			f.gate.consumed(1)
			continue
		}
		delete(f.items, id)
		return obj, f.processPopped(obj, initial, process)
	}
}

// processPopped runs process for a popped object, then counts it towards the
// initial batch (also when process panics).
func (f *FIFO) processPopped(obj interface{}, initial bool, process PopProcessFunc) error {
	defer f.gate.consumed(1)
	return process(obj, initial)
}

// Replace drops everything queued and queues the objects of list instead, in
// list order (a key listed twice keeps its first place and its last object).
// The first Replace before any Add, Update or Delete defines the initial batch
// that HasSynced waits for. resourceVersion is not used. On a KeyError nothing
// changes.
//
// Difference from client-go: the new queue order is list order rather than
// random map order (see COMPATIBILITY.md).
func (f *FIFO) Replace(list []interface{}, resourceVersion string) error {
	keys := make([]string, len(list))
	for i, obj := range list {
		id, err := f.key(obj)
		if err != nil {
			return err
		}
		keys[i] = id
	}
	items := make(map[string]interface{}, len(list))

	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	f.queue.reset()
	for i, id := range keys {
		if _, dup := items[id]; !dup {
			f.queue.push(id)
		}
		items[id] = list[i]
	}
	f.items = items
	f.gate.firstReplace(len(items))
	if f.queue.len() > 0 {
		f.cond.Broadcast()
	}
	return nil
}

// Resync makes sure every object held is queued. FIFO keeps that true at all
// times, so this is a no-op kept for the ReflectorStore contract; it always
// returns nil.
func (f *FIFO) Resync() error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	if len(f.items) == 0 {
		return nil
	}
	queued := make(map[string]struct{}, f.queue.len())
	for i := 0; i < f.queue.len(); i++ {
		queued[*f.queue.at(i)] = struct{}{}
	}
	added := false
	for id := range f.items {
		if _, ok := queued[id]; !ok {
			f.queue.push(id)
			added = true
		}
	}
	if added {
		f.cond.Broadcast()
	}
	return nil
}

// fifoSyncGate tracks the "initial batch popped" condition shared by FIFO,
// DeltaFIFO and RealFIFO. All methods except isDone need the owner's lock.
type fifoSyncGate struct {
	done chan struct{}
	// synced mirrors "done is closed" for lock-free readers.
	synced atomic.Bool
	// populated is set by the first Replace or the first Add/Update/Delete.
	populated bool
	// pending counts initial items not yet popped and processed.
	pending int
}

func (g *fifoSyncGate) init() {
	if g.done == nil {
		g.done = make(chan struct{})
	}
}

// markPopulated records an Add/Update/Delete: if no Replace came first, the
// initial batch is empty and the queue is synced now.
func (g *fifoSyncGate) markPopulated() {
	if !g.populated {
		g.populated = true
		g.check()
	}
}

// firstReplace records a Replace; only the first one (before any
// Add/Update/Delete) sets the size of the initial batch.
func (g *fifoSyncGate) firstReplace(n int) {
	if !g.populated {
		g.populated = true
		g.pending = n
		g.check()
	}
}

// consumed records that n initial items were popped and processed.
func (g *fifoSyncGate) consumed(n int) {
	if g.pending > 0 {
		g.pending -= min(n, g.pending)
		g.check()
	}
}

func (g *fifoSyncGate) check() {
	if g.populated && g.pending == 0 && !g.synced.Load() {
		g.synced.Store(true)
		close(g.done)
	}
}

func (g *fifoSyncGate) isDone() bool {
	return g.synced.Load()
}

// queueRing is a growable ring buffer used as the FIFOs' queue: push and
// popFront are O(1) amortized and reuse the same storage between pops, and
// the storage shrinks again once a burst has drained.
type queueRing[T any] struct {
	buf  []T // len(buf) is zero or a power of two
	head int
	n    int
}

const (
	queueRingMinSize = 16
	// queueRingShrinkAbove is the capacity above which a mostly empty ring
	// gives memory back; below it, repeated bursts reuse the same storage.
	queueRingShrinkAbove = 1024
)

func (r *queueRing[T]) len() int { return r.n }

func (r *queueRing[T]) push(v T) {
	if r.n == len(r.buf) {
		r.resize(max(queueRingMinSize, 2*len(r.buf)))
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

// at returns a pointer to the i-th element from the front; 0 <= i < len().
func (r *queueRing[T]) at(i int) *T {
	return &r.buf[(r.head+i)&(len(r.buf)-1)]
}

// popFront removes and returns the front element; the ring must not be empty.
func (r *queueRing[T]) popFront() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	if len(r.buf) > queueRingShrinkAbove && r.n <= len(r.buf)/4 {
		r.resize(len(r.buf) / 2)
	}
	return v
}

// reset empties the ring, dropping references to its elements.
func (r *queueRing[T]) reset() {
	clear(r.buf)
	r.head, r.n = 0, 0
	if len(r.buf) > queueRingShrinkAbove {
		r.buf = nil
	}
}

func (r *queueRing[T]) resize(size int) {
	nb := make([]T, size)
	if r.n > 0 {
		if end := r.head + r.n; end <= len(r.buf) {
			copy(nb, r.buf[r.head:end])
		} else {
			k := copy(nb, r.buf[r.head:])
			copy(nb[k:], r.buf[:r.n-k])
		}
	}
	r.buf, r.head = nb, 0
}

// queueKeyOf computes the key of an object entering or leaving a delta queue:
// the newest object of a Deltas, the recorded key of a
// DeletedFinalStateUnknown, else keyFunc's (MetaNamespaceKeyFunc when nil).
// Failures are KeyErrors.
func queueKeyOf(keyFunc KeyFunc, obj interface{}) (string, error) {
	if d, ok := obj.(Deltas); ok {
		if len(d) == 0 {
			return "", KeyError{Obj: obj, Err: ErrZeroLengthDeltasObject}
		}
		obj = d[len(d)-1].Object
	}
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	if keyFunc == nil {
		keyFunc = MetaNamespaceKeyFunc
	}
	key, err := keyFunc(obj)
	if err != nil {
		return "", KeyError{Obj: obj, Err: err}
	}
	return key, nil
}

// queueTransform applies a queue's transformer (if any) to obj. Tombstones
// pass untouched; a failure is wrapped with the queue's name and the
// object's key.
func queueTransform(transformer TransformFunc, queue, key string, obj interface{}) (interface{}, error) {
	if transformer == nil {
		return obj, nil
	}
	if _, tomb := obj.(DeletedFinalStateUnknown); tomb {
		return obj, nil
	}
	out, err := transformer(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: transforming object %q: %w", queue, key, err)
	}
	return out, nil
}
