package cache

import (
	"errors"
	"sync"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// ThreadSafeStore is a map from keys to objects, with indices, that is safe
// for concurrent use. Unlike Indexer it does not compute keys: every write
// names the key explicitly.
//
// Objects handed out by Get, List, Index and ByIndex are the stored objects
// themselves. Callers must treat them as read-only: mutating one races with
// other readers. (This implementation remembers the values of every index
// but the namespace index when an object is written, so a mutated object
// cannot corrupt them, but it is not re-indexed either. The namespace index
// takes the cached object's namespace at its word, as client-go's does: an
// update that keeps a namespace a caller changed in place leaves the key
// under the old one, until the key is deleted or moves to another
// namespace.)
//
// An object on which an index function fails is stored all the same and
// left out of that index only (every other index lists it); a Replace
// applies the whole list. Since the write methods here return no error, the
// failure is reported through k8s.io/apimachinery/pkg/util/runtime.HandleError.
// Use an Indexer from NewIndexer to get such errors returned. (client-go
// panics instead.)
type ThreadSafeStore interface {
	// Add stores obj under key, replacing any object already there.
	Add(key string, obj interface{})
	// Update stores obj under key, replacing any object already there.
	Update(key string, obj interface{})
	// Delete removes the object under key, if any. It is DeleteWithObject
	// without an object, so it does not update the newest resource version
	// seen; prefer DeleteWithObject.
	Delete(key string)
	// DeleteWithObject removes the object under key, if any, and records
	// obj's resource version (when obj has metadata) as the newest seen.
	DeleteWithObject(key string, obj interface{})
	// Get returns the object stored under key.
	Get(key string) (item interface{}, exists bool)
	// List returns all stored objects, in no particular order.
	List() []interface{}
	// ListKeys returns all keys, in no particular order.
	ListKeys() []string
	// Replace makes the given map, from key to object, the whole content of
	// the store, rebuilds the indices and records the resource version.
	// The store takes ownership of the map.
	Replace(map[string]interface{}, string)
	// Index returns the stored objects sharing at least one value of the
	// named index with obj. It fails for an unknown index name or when the
	// index function fails on obj.
	Index(indexName string, obj interface{}) ([]interface{}, error)
	// IndexKeys returns, sorted, the keys of the stored objects whose values
	// for the named index include indexedValue. It fails for an unknown
	// index name.
	IndexKeys(indexName, indexedValue string) ([]string, error)
	// Bookmark records rv as the newest resource version seen.
	Bookmark(rv string)
	// LastStoreSyncResourceVersion returns the newest resource version seen,
	// or "" while the client-go AtomicFIFO feature gate is disabled.
	LastStoreSyncResourceVersion() string
	// ListIndexFuncValues returns the values present in the named index; it
	// is empty for an unknown index name.
	ListIndexFuncValues(name string) []string
	// ByIndex returns the stored objects whose values for the named index
	// include indexedValue. It fails for an unknown index name.
	ByIndex(indexName, indexedValue string) ([]interface{}, error)
	// GetIndexers returns the index functions by name.
	GetIndexers() Indexers

	// AddIndexers adds index functions, indexing the objects already stored.
	// It fails, changing nothing, when a name is already in use, a function
	// is nil or a new index function fails on a stored object.
	AddIndexers(newIndexers Indexers) error
	// Resync does nothing and returns nil. Deprecated: it has no meaning
	// for this store.
	Resync() error
}

// ThreadSafeStoreWithTransaction is a ThreadSafeStore that can apply a batch
// of writes under a single lock acquisition. NewThreadSafeStore's stores
// implement it.
type ThreadSafeStoreWithTransaction interface {
	ThreadSafeStore
	// Transaction applies the writes in order while holding the lock once,
	// so readers never observe part of the batch. Each write behaves as the
	// corresponding single method (Add, Update, DeleteWithObject); writes
	// whose type is unknown are skipped, and both they and objects stored
	// outside an index whose function failed on them are reported through
	// HandleError. The newest resource version seen becomes
	// that of the last applied write whose object has metadata.
	Transaction(fns ...ThreadSafeStoreTransaction)
}

// ThreadSafeStoreTransaction is one write of a
// ThreadSafeStoreWithTransaction.Transaction batch: the Transaction and the
// key of the object it affects.
type ThreadSafeStoreTransaction struct {
	Transaction
	Key string
}

// ThreadSafeStoreOption configures the store built by NewThreadSafeStore.
type ThreadSafeStoreOption = func(*threadSafeMap)

// WithThreadSafeStoreMetrics makes the store publish the newest resource
// version it has seen through metricsProvider (the provider set with
// SetInformerMetricsProvider when nil), under identifier. Nothing is
// published unless identifier.Reserved() is true.
func WithThreadSafeStoreMetrics(identifier InformerNameAndResource, metricsProvider InformerMetricsProvider) ThreadSafeStoreOption {
	return func(m *threadSafeMap) {
		m.metrics = newStoreMetrics(identifier, metricsProvider)
	}
}

// NewThreadSafeStore returns an empty ThreadSafeStore (also a
// ThreadSafeStoreWithTransaction) maintaining the given indices.
//
// Difference from client-go: indices is accepted for compatibility but its
// contents are ignored, since the store starts empty and builds its indices
// itself (client-go would adopt pre-filled entries that name keys the store
// does not hold). The indexers map is copied, so later changes by the caller
// do not affect the store.
func NewThreadSafeStore(indexers Indexers, indices Indices, opts ...ThreadSafeStoreOption) ThreadSafeStore {
	return newThreadSafeMap(indexers, opts)
}

// tsEntry is what the store keeps for a key when it has indices other than
// those using MetaNamespaceIndexFunc (slotted indices): the object and the
// values each slotted index computed for it when it was written.
// Remembering the values means removing or moving a key in an index never
// has to call an index function again (which could fail, or see an object
// mutated by a careless caller). A store without slotted indices keeps the
// object itself, as client-go does: a value in items costs no more than
// client-go's, so writes grow the map and List walks it at client-go's cost.
// Entries are only read and written under the write lock (readers take the
// object out under the read lock), so a write updates one in place.
type tsEntry struct {
	obj interface{}
	// vals holds, at position tsIndex.slot, the values of every slotted
	// index.
	vals [][]string
}

// storedObject returns the object of a value of threadSafeMap.items.
func storedObject(v interface{}) interface{} {
	if e, ok := v.(*tsEntry); ok {
		return e.obj
	}
	return v
}

// storedVals returns the slotted index values of a value of
// threadSafeMap.items (nil for a store without slotted indices).
func storedVals(v interface{}) [][]string {
	if e, ok := v.(*tsEntry); ok {
		return e.vals
	}
	return nil
}

// storedNamespace returns the namespace of a stored object, the value under
// which the namespace indices hold its key (unless a caller mutated it: see
// tsIndex.removeSingle).
func storedNamespace(obj interface{}) string {
	meta, err := storeMetaAccessor(obj)
	if err != nil {
		return ""
	}
	return meta.GetNamespace()
}

// threadSafeMap implements ThreadSafeStoreWithTransaction. All fields are
// guarded by lock, except metrics, which is set at construction.
type threadSafeMap struct {
	lock sync.RWMutex
	// items maps each key to its object or, when slotted is not empty, to
	// its *tsEntry.
	items map[string]interface{}

	// byName holds every index; nsIdx those computed inline from the
	// stored object's namespace and slotted those whose values live in
	// tsEntry.vals, in slot order.
	byName  map[string]*tsIndex
	nsIdx   []*tsIndex
	slotted []*tsIndex

	// layoutGen counts the changes to the set of indices (AddIndexers).
	layoutGen uint64
	// replaceBuilt, when set (by tests), runs between building a
	// replacement and taking the lock to install it.
	replaceBuilt func()

	rv      string
	metrics *storeMetrics
	// watermark, set at construction for an informer's cache (see
	// withResourceVersionWatermark), makes rv a watermark: writes of
	// objects leave it alone, and Replace and Bookmark only move it
	// forward. The informer moves it with advanceRV once every change up
	// to a version has been applied.
	watermark bool
}

var _ ThreadSafeStoreWithTransaction = &threadSafeMap{}

func newThreadSafeMap(indexers Indexers, opts []ThreadSafeStoreOption) *threadSafeMap {
	m := &threadSafeMap{
		items:  map[string]interface{}{},
		byName: make(map[string]*tsIndex, len(indexers)),
	}
	for _, name := range storeSortedNames(indexers) {
		m.addIndexLocked(name, indexers[name])
	}
	for _, opt := range opts {
		if opt != nil {
			opt(m)
		}
	}
	if m.metrics == nil {
		m.metrics = newStoreMetrics(InformerNameAndResource{}, noopInformerMetricsProvider{})
	}
	return m
}

// putLocked stores obj under key and updates every index, returning the
// object key held before. An index function that fails on obj leaves it out
// of that index only: obj is stored anyway and listed by every other index,
// and err names each index that failed (a *storeIndexError, or several
// joined).
func (m *threadSafeMap) putLocked(key string, obj interface{}) (prev interface{}, existed bool, err error) {
	oldV, existed := m.items[key]
	prev = storedObject(oldV)
	var ns, prevNS string
	nsIndexed, prevNSKnown := true, false
	if len(m.nsIdx) > 0 {
		if ns, err = m.namespaceOf(key, obj); err != nil {
			nsIndexed = false
		}
		if existed {
			if meta, merr := storeMetaAccessor(prev); merr == nil {
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
				err = storeJoinIndexErrors(err, verr)
				v = nil
			}
			vals[i] = v
		}
		if e, ok := oldV.(*tsEntry); ok {
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
			e := &tsEntry{obj: obj, vals: make([][]string, n)}
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

// storeJoinIndexErrors adds err to errs (either may be nil).
func storeJoinIndexErrors(errs, err error) error {
	if errs == nil {
		return err
	}
	return errors.Join(errs, err)
}

// deleteLocked removes key and its index entries; it cannot fail.
func (m *threadSafeMap) deleteLocked(key string) {
	oldV, exists := m.items[key]
	if !exists {
		return
	}
	if len(m.nsIdx) > 0 {
		ns := storedNamespace(storedObject(oldV))
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

// update is Add/Update returning the index error instead of reporting it;
// obj is stored either way.
func (m *threadSafeMap) update(key string, obj interface{}) error {
	_, _, err := m.swap(key, obj)
	return err
}

// swap is update that also returns the object key held before. obj is
// always stored; err names the indices left without it.
func (m *threadSafeMap) swap(key string, obj interface{}) (prev interface{}, existed bool, err error) {
	rv, hasRV := storeResourceVersionOf(obj)
	m.lock.Lock()
	defer m.lock.Unlock()
	prev, existed, err = m.putLocked(key, obj)
	if hasRV {
		m.writtenRVLocked(rv)
	}
	return prev, existed, err
}

// Add stores obj under key; see ThreadSafeStore.
func (m *threadSafeMap) Add(key string, obj interface{}) {
	m.Update(key, obj)
}

// Update stores obj under key; see ThreadSafeStore.
func (m *threadSafeMap) Update(key string, obj interface{}) {
	if err := m.update(key, obj); err != nil {
		utilruntime.HandleErrorWithLogger(klog.Background(), err, "Object stored outside the indices that failed on it", "key", key)
	}
}

// Delete removes key without recording a resource version.
func (m *threadSafeMap) Delete(key string) {
	m.DeleteWithObject(key, nil)
}

// DeleteWithObject removes key and records obj's resource version.
func (m *threadSafeMap) DeleteWithObject(key string, obj interface{}) {
	var rv string
	var hasRV bool
	if obj != nil {
		rv, hasRV = storeResourceVersionOf(obj)
	}
	m.lock.Lock()
	defer m.lock.Unlock()
	m.deleteLocked(key)
	if hasRV {
		m.writtenRVLocked(rv)
	}
}

// Get returns the object stored under key.
func (m *threadSafeMap) Get(key string) (item interface{}, exists bool) {
	m.lock.RLock()
	v, exists := m.items[key]
	// A *tsEntry is updated in place by writers: read it under the lock.
	item = storedObject(v)
	m.lock.RUnlock()
	return item, exists
}

// List returns all stored objects.
func (m *threadSafeMap) List() []interface{} {
	m.lock.RLock()
	defer m.lock.RUnlock()
	list := make([]interface{}, 0, len(m.items))
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

// ListKeys returns all keys.
func (m *threadSafeMap) ListKeys() []string {
	m.lock.RLock()
	defer m.lock.RUnlock()
	keys := make([]string, 0, len(m.items))
	for key := range m.items {
		keys = append(keys, key)
	}
	return keys
}

// Resync does nothing.
func (m *threadSafeMap) Resync() error {
	return nil
}

// size returns the number of stored objects.
func (m *threadSafeMap) size() int {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return len(m.items)
}
