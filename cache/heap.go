package cache

import (
	"container/heap"
	"errors"
	"fmt"
	"sync"
)

// LessFunc orders two objects: it reports whether the first must come out of
// a Heap before the second.
type LessFunc func(interface{}, interface{}) bool

// errHeapClosed is returned by operations on a closed Heap.
var errHeapClosed = errors.New("heap is closed")

// heapEntry is one object in a Heap with its key and its position in the
// queue slice.
type heapEntry struct {
	key string
	obj interface{}
	pos int
}

// heapQueue is the array form of the binary heap; it implements
// heap.Interface ordered by less.
type heapQueue struct {
	entries []*heapEntry
	less    LessFunc
}

// Len, Less, Swap, Push and Pop implement heap.Interface.
func (q *heapQueue) Len() int { return len(q.entries) }

func (q *heapQueue) Less(i, j int) bool { return q.less(q.entries[i].obj, q.entries[j].obj) }

func (q *heapQueue) Swap(i, j int) {
	q.entries[i], q.entries[j] = q.entries[j], q.entries[i]
	q.entries[i].pos = i
	q.entries[j].pos = j
}

func (q *heapQueue) Push(x interface{}) {
	e := x.(*heapEntry)
	e.pos = len(q.entries)
	q.entries = append(q.entries, e)
}

func (q *heapQueue) Pop() interface{} {
	last := len(q.entries) - 1
	e := q.entries[last]
	q.entries[last] = nil
	q.entries = q.entries[:last]
	e.pos = -1
	return e
}

// Heap is a thread-safe priority queue of objects keyed by a KeyFunc: Pop
// returns the object that LessFunc orders first, and each key is held at
// most once. It implements the read and write methods of Store. Pop blocks
// until an object is available or the heap is closed.
//
// Use NewHeap to create one; the zero value is not usable.
type Heap struct {
	lock    sync.RWMutex
	cond    sync.Cond
	keyFunc KeyFunc
	byKey   map[string]*heapEntry
	queue   heapQueue
	closed  bool
}

// NewHeap returns an empty Heap that keys objects with keyFn and orders
// them with lessFn. With a nil lessFn the heap treats all objects as equal
// and Pop returns them in no particular order. Differs from client-go
// v0.37.2; see COMPATIBILITY.md.
func NewHeap(keyFn KeyFunc, lessFn LessFunc) *Heap {
	if lessFn == nil {
		lessFn = func(interface{}, interface{}) bool { return false }
	}
	h := &Heap{
		keyFunc: keyFn,
		byKey:   map[string]*heapEntry{},
		queue:   heapQueue{less: lessFn},
	}
	h.cond.L = &h.lock
	return h
}

// key computes obj's key, wrapping failures in a KeyError.
func (h *Heap) key(obj interface{}) (string, error) {
	if h.keyFunc == nil {
		return "", KeyError{Obj: obj, Err: errors.New("heap has no key function")}
	}
	key, err := h.keyFunc(obj)
	if err != nil {
		return "", KeyError{Obj: obj, Err: err}
	}
	return key, nil
}

// Close closes the heap: Pop calls waiting on an empty heap return an error,
// and writes fail. Objects still queued remain readable through Get and
// List, and Pop keeps returning them until the heap is empty.
func (h *Heap) Close() {
	h.lock.Lock()
	defer h.lock.Unlock()
	h.closed = true
	h.cond.Broadcast()
}

// IsClosed reports whether Close has been called.
func (h *Heap) IsClosed() bool {
	h.lock.RLock()
	defer h.lock.RUnlock()
	return h.closed
}

// setLocked stores obj under key, replacing and re-ordering an existing
// entry.
func (h *Heap) setLocked(key string, obj interface{}) {
	if e, ok := h.byKey[key]; ok {
		e.obj = obj
		heap.Fix(&h.queue, e.pos)
		return
	}
	e := &heapEntry{key: key, obj: obj}
	h.byKey[key] = e
	heap.Push(&h.queue, e)
}

// Add inserts obj, or replaces the object with the same key and moves it to
// its new place in the order. It returns a KeyError when the key cannot be
// computed and an error when the heap is closed.
func (h *Heap) Add(obj interface{}) error {
	key, err := h.key(obj)
	if err != nil {
		return err
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	if h.closed {
		return errHeapClosed
	}
	h.setLocked(key, obj)
	h.cond.Broadcast()
	return nil
}

// BulkAdd adds every object of list as Add does, under one lock. The keys
// are computed first: when one object cannot be keyed, BulkAdd returns its
// KeyError and adds nothing. Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
func (h *Heap) BulkAdd(list []interface{}) error {
	keys := make([]string, len(list))
	for i, obj := range list {
		key, err := h.key(obj)
		if err != nil {
			return err
		}
		keys[i] = key
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	if h.closed {
		return errHeapClosed
	}
	for i, obj := range list {
		h.setLocked(keys[i], obj)
	}
	if len(list) > 0 {
		h.cond.Broadcast()
	}
	return nil
}

// AddIfNotPresent inserts obj unless an object with the same key is already
// queued, in which case the queued object is kept. It returns a KeyError
// when the key cannot be computed and an error when the heap is closed.
func (h *Heap) AddIfNotPresent(obj interface{}) error {
	key, err := h.key(obj)
	if err != nil {
		return err
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	if h.closed {
		return errHeapClosed
	}
	if _, ok := h.byKey[key]; !ok {
		h.setLocked(key, obj)
		h.cond.Broadcast()
	}
	return nil
}

// Update is Add.
func (h *Heap) Update(obj interface{}) error {
	return h.Add(obj)
}

// Delete removes the object with obj's key. It returns a KeyError when the
// key cannot be computed and an error when no object has that key.
func (h *Heap) Delete(obj interface{}) error {
	key, err := h.key(obj)
	if err != nil {
		return err
	}
	h.lock.Lock()
	defer h.lock.Unlock()
	e, ok := h.byKey[key]
	if !ok {
		return fmt.Errorf("object with key %q not found", key)
	}
	heap.Remove(&h.queue, e.pos)
	delete(h.byKey, key)
	return nil
}

// Pop removes and returns the first object in the order, waiting while the
// heap is empty. It returns an error once the heap is closed and empty.
func (h *Heap) Pop() (interface{}, error) {
	h.lock.Lock()
	defer h.lock.Unlock()
	for len(h.queue.entries) == 0 {
		if h.closed {
			return nil, errHeapClosed
		}
		h.cond.Wait()
	}
	e := heap.Pop(&h.queue).(*heapEntry)
	delete(h.byKey, e.key)
	return e.obj, nil
}

// List returns the queued objects, in no particular order.
func (h *Heap) List() []interface{} {
	h.lock.RLock()
	defer h.lock.RUnlock()
	out := make([]interface{}, 0, len(h.queue.entries))
	for _, e := range h.queue.entries {
		out = append(out, e.obj)
	}
	return out
}

// ListKeys returns the keys of the queued objects, in no particular order.
func (h *Heap) ListKeys() []string {
	h.lock.RLock()
	defer h.lock.RUnlock()
	out := make([]string, 0, len(h.queue.entries))
	for _, e := range h.queue.entries {
		out = append(out, e.key)
	}
	return out
}

// Get returns the queued object with obj's key. It returns a KeyError when
// the key cannot be computed.
func (h *Heap) Get(obj interface{}) (interface{}, bool, error) {
	key, err := h.key(obj)
	if err != nil {
		return nil, false, err
	}
	return h.GetByKey(key)
}

// GetByKey returns the queued object with the given key.
func (h *Heap) GetByKey(key string) (interface{}, bool, error) {
	h.lock.RLock()
	defer h.lock.RUnlock()
	e, ok := h.byKey[key]
	if !ok {
		return nil, false, nil
	}
	return e.obj, true, nil
}
