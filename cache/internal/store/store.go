package store

import (
	"errors"
	"sync"
)

// IndexFunc computes the values under which an index holds an object. It
// must be deterministic and must not keep or modify the object. An error
// leaves the object out of that index (see Map).
type IndexFunc func(obj any) ([]string, error)

// Config is what New builds a Map from. The zero value is a store without
// indices that records every resource version, as client-go's does.
type Config struct {
	// Indexers are the index functions by name. The map is not kept: the
	// store copies what it needs.
	Indexers map[string]IndexFunc
	// NamespaceIndexFunc, when not nil, is the index function whose value
	// is the object's namespace alone (client-go's MetaNamespaceIndexFunc).
	// An index using this very function (compared by code pointer) is
	// computed inline from the object's metadata, without calling the
	// function and without allocating, and its values are not remembered
	// per key.
	NamespaceIndexFunc IndexFunc
	// Watermark makes the recorded resource version a watermark (see the
	// package documentation): writes of objects leave it alone, Bookmark
	// and AdvanceResourceVersion only move it forward, and a complete
	// list sets it.
	Watermark bool
	// OnResourceVersion, when not nil, is called with every resource
	// version the store records, while the store's lock is held: it must
	// be quick and must not call the store.
	OnResourceVersion func(rv string)
}

// entry is what the store keeps for a key when it has indices other than
// the namespace ones (slotted indices): the object and the values each
// slotted index computed for it when it was written. Remembering the
// values means removing or moving a key in an index never has to call an
// index function again (which could fail, or see an object mutated by a
// careless caller). A store without slotted indices keeps the object
// itself, as client-go does: a value in items costs no more than
// client-go's, so writes grow the map and List walks it at client-go's
// cost. Entries are only read and written under the write lock (readers
// take the object out under the read lock), so a write updates one in
// place.
type entry struct {
	obj any
	// vals holds, at position index.slot, the values of every slotted
	// index.
	vals [][]string
}

// storedObject returns the object of a value of Map.items.
func storedObject(v any) any {
	if e, ok := v.(*entry); ok {
		return e.obj
	}
	return v
}

// storedVals returns the slotted index values of a value of Map.items (nil
// for a store without slotted indices).
func storedVals(v any) [][]string {
	if e, ok := v.(*entry); ok {
		return e.vals
	}
	return nil
}

// Map is a map from keys to objects with named indices, safe for
// concurrent use. Its contract is in the package documentation. All fields
// are guarded by lock, except those set by New.
type Map struct {
	lock sync.RWMutex
	// items maps each key to its object or, when slotted is not empty, to
	// its *entry.
	items map[string]any

	// byName holds every index; nsIdx those computed inline from the
	// stored object's namespace and slotted those whose values live in
	// entry.vals, in slot order.
	byName  map[string]*index
	nsIdx   []*index
	slotted []*index

	// layoutGen counts the changes to the set of indices (AddIndexers).
	layoutGen uint64
	// replaceBuilt, when set (by tests), runs between building a
	// replacement and taking the lock to install it.
	replaceBuilt func()

	rv string

	// Set by New.
	//
	// nsFuncPC is the code pointer of Config.NamespaceIndexFunc, 0 when
	// none.
	nsFuncPC  uintptr
	onRV      func(string)
	watermark bool
}

// New returns an empty Map maintaining the indices of cfg.Indexers.
func New(cfg Config) *Map {
	m := &Map{
		items:     map[string]any{},
		byName:    make(map[string]*index, len(cfg.Indexers)),
		onRV:      cfg.OnResourceVersion,
		watermark: cfg.Watermark,
	}
	if cfg.NamespaceIndexFunc != nil {
		m.nsFuncPC = funcPC(cfg.NamespaceIndexFunc)
	}
	for _, name := range sortedNames(cfg.Indexers) {
		m.addIndexLocked(name, cfg.Indexers[name])
	}
	return m
}

// namespaceOfStored returns the namespace of a stored object, the value
// under which the namespace indices hold its key (unless a caller mutated
// it: see index.removeSingle).
func namespaceOfStored(obj any) string {
	meta, err := ObjectMeta(obj)
	if err != nil {
		return ""
	}
	return meta.GetNamespace()
}

// putLocked stores obj under key and updates every index, returning the
// object key held before. An index function that fails on obj leaves it out
// of that index only: obj is stored anyway and listed by every other index,
// and err names each index that failed (an *IndexError, or several
// joined).
func (m *Map) putLocked(key string, obj any) (prev any, existed bool, err error) {
	oldV, existed := m.items[key]
	prev = storedObject(oldV)
	var ns, prevNS string
	nsIndexed, prevNSKnown := true, false
	if len(m.nsIdx) > 0 {
		if ns, err = m.namespaceOf(key, obj); err != nil {
			nsIndexed = false
		}
		if existed {
			if meta, merr := ObjectMeta(prev); merr == nil {
				prevNS, prevNSKnown = meta.GetNamespace(), true
			}
		}
	}
	if n := len(m.slotted); n > 0 {
		// Compute every value before changing anything.
		var buf [4][]string
		var vals [][]string
		if n <= len(buf) {
			vals = buf[:n]
		} else {
			vals = make([][]string, n)
		}
		for i, ix := range m.slotted {
			v, verr := ix.values(key, obj)
			if verr != nil {
				err = joinIndexErrors(err, verr)
				v = nil
			}
			vals[i] = v
		}
		if e, ok := oldV.(*entry); ok {
			for i, ix := range m.slotted {
				ix.move(key, e.vals[i], vals[i])
			}
			// Only writers, under the lock, read entries: update in place.
			e.obj = obj
			copy(e.vals, vals)
		} else {
			for i, ix := range m.slotted {
				for _, v := range vals[i] {
					ix.insert(v, key)
				}
			}
			e := &entry{obj: obj, vals: make([][]string, n)}
			copy(e.vals, vals)
			m.items[key] = e
		}
	} else {
		m.items[key] = obj
	}
	for _, ix := range m.nsIdx {
		if existed {
			if nsIndexed && prevNSKnown && prevNS == ns {
				// Held under ns already. As client-go does, the store
				// takes the cached object's namespace at its word: no
				// lookup in a set that may hold a million keys.
				continue
			}
			// Under the previous object's namespace (found wherever it
			// is when a caller changed that namespace in place), or
			// nowhere when it could not be read.
			ix.removeSingle(prevNS, key)
		}
		if nsIndexed {
			ix.insert(ns, key)
		}
	}
	return prev, existed, err
}

// joinIndexErrors adds err to errs (either may be nil).
func joinIndexErrors(errs, err error) error {
	if errs == nil {
		return err
	}
	return errors.Join(errs, err)
}

// deleteLocked removes key and its index entries; it cannot fail.
func (m *Map) deleteLocked(key string) {
	oldV, exists := m.items[key]
	if !exists {
		return
	}
	if len(m.nsIdx) > 0 {
		ns := namespaceOfStored(storedObject(oldV))
		for _, ix := range m.nsIdx {
			ix.removeSingle(ns, key)
		}
	}
	for i, vals := range storedVals(oldV) {
		for _, v := range vals {
			m.slotted[i].remove(v, key)
		}
	}
	delete(m.items, key)
}

// Put stores obj under key, replacing any object there, and returns the
// object key held before (nil and false when none). obj is always stored:
// err is not nil only when index functions failed on obj, and then names
// each of them (IsIndexError reports true for it); obj is left out of
// those indices and listed by every other. The resource version of obj
// (when it has metadata) becomes the recorded one, unless the store keeps
// a watermark.
func (m *Map) Put(key string, obj any) (prev any, existed bool, err error) {
	rv, hasRV := resourceVersionOf(obj)
	m.lock.Lock()
	defer m.lock.Unlock()
	prev, existed, err = m.putLocked(key, obj)
	if hasRV {
		m.writtenRVLocked(rv)
	}
	return prev, existed, err
}

// Delete removes the object under key, if any, and its index entries; it
// never calls an index function. The resource version of obj (when obj is
// not nil and has metadata) becomes the recorded one, unless the store
// keeps a watermark.
func (m *Map) Delete(key string, obj any) {
	var rv string
	var hasRV bool
	if obj != nil {
		rv, hasRV = resourceVersionOf(obj)
	}
	m.lock.Lock()
	defer m.lock.Unlock()
	m.deleteLocked(key)
	if hasRV {
		m.writtenRVLocked(rv)
	}
}

// Get returns the object stored under key.
func (m *Map) Get(key string) (item any, exists bool) {
	m.lock.RLock()
	v, exists := m.items[key]
	// An *entry is updated in place by writers: read it under the lock.
	item = storedObject(v)
	m.lock.RUnlock()
	return item, exists
}

// List returns all stored objects, in no particular order, in a new slice.
func (m *Map) List() []any {
	m.lock.RLock()
	defer m.lock.RUnlock()
	list := make([]any, 0, len(m.items))
	if len(m.slotted) == 0 {
		// items holds the objects themselves.
		for _, v := range m.items {
			list = append(list, v)
		}
		return list
	}
	for _, v := range m.items {
		list = append(list, storedObject(v))
	}
	return list
}

// ListKeys returns all keys, in no particular order, in a new slice.
func (m *Map) ListKeys() []string {
	m.lock.RLock()
	defer m.lock.RUnlock()
	keys := make([]string, 0, len(m.items))
	for key := range m.items {
		keys = append(keys, key)
	}
	return keys
}

// Len returns the number of stored objects.
func (m *Map) Len() int {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return len(m.items)
}
