package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kinformer/kinformer/cache/internal/queue"
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
	queue queue.Ring[string]

	gate    queue.SyncGate
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
	f.gate.Init()
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
	return f.gate.IsDone()
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
	return f.gate.Done()
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
	f.gate.MarkPopulated()
	if _, queued := f.items[id]; !queued {
		f.queue.Push(id)
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
	f.gate.MarkPopulated()
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
		for f.queue.Len() == 0 {
			if f.closed.Load() {
				return nil, ErrFIFOClosed
			}
			f.cond.Wait()
		}
		initial := !f.gate.IsDone()
		id := f.queue.PopFront()
		obj, ok := f.items[id]
		if !ok {
			// Deleted while queued. It still counts towards the initial
			// batch; nothing remains to process for it.
			f.gate.Consumed(1)
			continue
		}
		delete(f.items, id)
		return obj, f.processPopped(obj, initial, process)
	}
}

// processPopped runs process for a popped object, then counts it towards the
// initial batch (also when process panics).
func (f *FIFO) processPopped(obj interface{}, initial bool, process PopProcessFunc) error {
	defer f.gate.Consumed(1)
	return process(obj, initial)
}

// Replace drops everything queued and queues the objects of list instead, in
// list order (a key listed twice keeps its first place and its last object).
// The first Replace before any Add, Update or Delete defines the initial batch
// that HasSynced waits for. resourceVersion is not used. On a KeyError nothing
// changes. Differs from client-go v0.37.2; see COMPATIBILITY.md.
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
	f.queue.Reset()
	for i, id := range keys {
		if _, dup := items[id]; !dup {
			f.queue.Push(id)
		}
		items[id] = list[i]
	}
	f.items = items
	f.gate.FirstReplace(len(items))
	if f.queue.Len() > 0 {
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
	queued := make(map[string]struct{}, f.queue.Len())
	for i := 0; i < f.queue.Len(); i++ {
		queued[*f.queue.At(i)] = struct{}{}
	}
	added := false
	for id := range f.items {
		if _, ok := queued[id]; !ok {
			f.queue.Push(id)
			added = true
		}
	}
	if added {
		f.cond.Broadcast()
	}
	return nil
}

// The list protocol (described in internal/queue's documentation): however
// a state reaches a Reflector's store, it arrives as one sequence of put and
// remove, pageEnd after each page, and end. The queues take it themselves
// (listTaker, on their engine's sinks); any other store gets the list
// gathered and handed to its Replace (newStoreReplaceSink).

// listSource says where a list comes from (see queue.Source).
type listSource struct {
	relist   bool
	streamed bool
	loaded   bool
	fresh    bool
}

func (s listSource) engine() queue.Source {
	return queue.Source{Relist: s.relist, Streamed: s.streamed, Loaded: s.loaded, Fresh: s.fresh}
}

// listSink takes one list; its methods are those of queue.Sink.
type listSink interface {
	put(obj interface{}) error
	remove(obj interface{}) error
	pageEnd(ctx context.Context) error
	end(ctx context.Context, resourceVersion string) (int, error)
}

// gatherSink and pageSink are the engine's sinks (queue.Gather, a list
// taken whole, and queue.Pages, a relist applied page by page) as
// listSinks. They are the engine's types under another name, so that a
// sink is handed out as the same pointer, with no wrapper to allocate.
type (
	gatherSink queue.Gather
	pageSink   queue.Pages
)

func (s *gatherSink) put(obj interface{}) error         { return (*queue.Gather)(s).Put(obj) }
func (s *gatherSink) remove(obj interface{}) error      { return (*queue.Gather)(s).Remove(obj) }
func (s *gatherSink) pageEnd(ctx context.Context) error { return (*queue.Gather)(s).PageEnd(ctx) }
func (s *gatherSink) end(ctx context.Context, rv string) (int, error) {
	return (*queue.Gather)(s).End(ctx, rv)
}

func (s *pageSink) put(obj interface{}) error         { return (*queue.Pages)(s).Put(obj) }
func (s *pageSink) remove(obj interface{}) error      { return (*queue.Pages)(s).Remove(obj) }
func (s *pageSink) pageEnd(ctx context.Context) error { return (*queue.Pages)(s).PageEnd(ctx) }
func (s *pageSink) end(ctx context.Context, rv string) (int, error) {
	return (*queue.Pages)(s).End(ctx, rv)
}

// queueSink is any other queue.Sink as a listSink.
type queueSink struct {
	sink queue.Sink
}

func (s queueSink) put(obj interface{}) error                       { return s.sink.Put(obj) }
func (s queueSink) remove(obj interface{}) error                    { return s.sink.Remove(obj) }
func (s queueSink) pageEnd(ctx context.Context) error               { return s.sink.PageEnd(ctx) }
func (s queueSink) end(ctx context.Context, rv string) (int, error) { return s.sink.End(ctx, rv) }

// listSinkOf returns an engine's sink as a listSink.
func listSinkOf(s queue.Sink) listSink {
	switch s := s.(type) {
	case *queue.Gather:
		return (*gatherSink)(s)
	case *queue.Pages:
		return (*pageSink)(s)
	}
	return queueSink{s}
}

// listTaker is implemented by the stores that take lists through the
// protocol themselves (RealFIFO, DeltaFIFO). For any other store, the
// Reflector gathers the list and hands it to Replace at its end.
type listTaker interface {
	// beginList starts a list from source.
	beginList(source listSource) listSink
	// relistsPageByPage reports whether relists are applied page by page;
	// the Reflector then pages relists even where the server could answer
	// them in one piece.
	relistsPageByPage() bool
}

// informerLists is how a queue an informer builds for itself takes lists.
type informerLists struct {
	// cached is the informer's cache: the page-by-page relist looks there
	// for what the list no longer has.
	cached KeyListerGetter
	// pageByPage: relists are applied page by page.
	pageByPage bool
}

// engine returns lists as the engine's queue.Lists. The watermark of the
// cache is moved when it is this package's own store.
func (l informerLists) engine() queue.Lists {
	out := queue.Lists{Cached: l.cached, PageByPage: l.pageByPage}
	if c, ok := l.cached.(ownStore); ok {
		out.SetWatermark = func(rv string, reset bool) {
			if reset {
				c.resetResourceVersion(rv)
			} else {
				c.advanceResourceVersion(rv)
			}
		}
	}
	return out
}

// newStoreReplaceSink returns the sink of a store that does not take lists
// through the protocol: the list is gathered and handed to store.Replace
// at its end. A streamed list into a TransformingStore is held transformed
// by the store's transformer, whose Replace then transforms it again, as in
// client-go.
func newStoreReplaceSink(store ReflectorStore, source listSource) listSink {
	g := &queue.Gather{
		Streamed: source.streamed,
		Prepare:  func(_ string, obj interface{}) (interface{}, error) { return obj, nil },
		Refused:  isRefusedObject,
		Finish: func(objs []interface{}, _ []string, rv string) error {
			return store.Replace(objs, rv)
		},
	}
	if source.streamed {
		g.KeyOf = streamKey
		g.StrictKeys = true
		if ts, ok := store.(TransformingStore); ok && ts.Transformer() != nil && !source.loaded {
			transform := ts.Transformer()
			g.Prepare = func(_ string, obj interface{}) (interface{}, error) { return transform(obj) }
		}
	}
	return (*gatherSink)(g)
}

// streamKey computes the namespace/name key of a streamed object for a
// store that does not key objects itself.
func streamKey(obj interface{}) (string, error) {
	objMeta, err := meta.Accessor(obj)
	if err != nil {
		return "", fmt.Errorf("object of type %T has no object metadata: %w", obj, err)
	}
	if ns := objMeta.GetNamespace(); ns != "" {
		return ns + "/" + objMeta.GetName(), nil
	}
	return objMeta.GetName(), nil
}

// streamedList is the reflectorEventStore of a streaming list: it hands the
// streamed objects to the list's sink as they arrive, and ends a page every
// pageSize objects, so that a store applying relists page by page applies a
// stream as it arrives. Once the sink failed, every later call returns that
// error, and so does finish.
type streamedList struct {
	ctx  context.Context
	sink listSink
	// pageSize is the number of objects after which a page ends.
	pageSize int
	inPage   int
	failed   error
}

func (s *streamedList) put(obj interface{}) error {
	if s.failed != nil {
		return s.failed
	}
	if err := s.sink.put(obj); err != nil {
		s.failed = err
		return err
	}
	s.inPage++
	if s.inPage < s.pageSize {
		return nil
	}
	s.inPage = 0
	s.failed = s.sink.pageEnd(s.ctx)
	return s.failed
}

// Add implements reflectorEventStore.
func (s *streamedList) Add(obj interface{}) error { return s.put(obj) }

// Update implements reflectorEventStore.
func (s *streamedList) Update(obj interface{}) error { return s.put(obj) }

// Delete implements reflectorEventStore.
func (s *streamedList) Delete(obj interface{}) error {
	if s.failed != nil {
		return s.failed
	}
	return s.sink.remove(obj)
}

// finish completes the list at rv.
func (s *streamedList) finish(rv string) (int, error) {
	if s.failed != nil {
		return 0, s.failed
	}
	return s.sink.end(s.ctx, rv)
}
