package cache

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/util/resourceversion"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	clientgofeatures "k8s.io/client-go/features"
	"k8s.io/klog/v2"
)

// ThreadSafeStore is a map from keys to objects, with indices, that is safe
// for concurrent use. Unlike Indexer it does not compute keys: every write
// names the key explicitly.
//
// Objects handed out by Get, List, Index and ByIndex are the stored objects
// themselves. Callers must treat them as read-only: mutating one races with
// other readers. (This implementation remembers each object's index values
// when it is written, so a mutated object cannot corrupt the indices, but it
// is not re-indexed either.)
//
// Writes whose index functions fail leave the store unchanged; since the
// write methods here return no error, the failure is reported through
// k8s.io/apimachinery/pkg/util/runtime.HandleError. Use an Indexer from
// NewIndexer to get such errors returned.
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
	// whose index functions fail or whose type is unknown are skipped and
	// reported through HandleError. The newest resource version seen becomes
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

// tsEntry is what the store keeps for a key: the object and the values each
// index computed for it when it was written. Remembering the values means
// removing or moving a key in an index never has to call an index function
// again (which could fail, or see an object mutated by a careless caller).
type tsEntry struct {
	obj interface{}
	// ns is the object's namespace, when the store has an index using
	// MetaNamespaceIndexFunc.
	ns string
	// vals holds, at position tsIndex.slot, the values of every other index.
	vals [][]string
}

// tsIndex is one named index.
type tsIndex struct {
	name string
	fn   IndexFunc
	// slot is the position of this index's values in tsEntry.vals, or -1
	// for an index using MetaNamespaceIndexFunc, whose value is tsEntry.ns
	// and is computed without calling the function (and without allocating).
	slot int
	// byValue maps each index value to the keys of the objects having it.
	byValue index
}

func (ix *tsIndex) insert(value, key string) {
	set := ix.byValue[value]
	if set == nil {
		set = sets.Set[string]{}
		ix.byValue[value] = set
	}
	set[key] = sets.Empty{}
}

func (ix *tsIndex) remove(value, key string) {
	set := ix.byValue[value]
	if set == nil {
		return
	}
	delete(set, key)
	if len(set) == 0 {
		// Drop empty sets, or churn through many distinct values would
		// grow the index forever.
		delete(ix.byValue, value)
	}
}

// move updates the index for key whose values change from oldVals to
// newVals, touching only the values that differ.
func (ix *tsIndex) move(key string, oldVals, newVals []string) {
	if slices.Equal(oldVals, newVals) {
		return
	}
	for _, v := range oldVals {
		if !slices.Contains(newVals, v) {
			ix.remove(v, key)
		}
	}
	for _, v := range newVals {
		if !slices.Contains(oldVals, v) {
			ix.insert(v, key)
		}
	}
}

// storeIndexError reports an index function failing on an object.
type storeIndexError struct {
	index string
	key   string
	err   error
}

// Error names the index, the key and the cause.
func (e *storeIndexError) Error() string {
	return fmt.Sprintf("index %q failed on object with key %q: %v", e.index, e.key, e.err)
}

// Unwrap returns the index function's error.
func (e *storeIndexError) Unwrap() error { return e.err }

// storeMetaNamespaceIndexFuncPC identifies MetaNamespaceIndexFunc, whose
// values the store computes inline.
var storeMetaNamespaceIndexFuncPC = reflect.ValueOf(MetaNamespaceIndexFunc).Pointer()

// threadSafeMap implements ThreadSafeStoreWithTransaction. All fields are
// guarded by lock, except metrics, which is set at construction.
type threadSafeMap struct {
	lock  sync.RWMutex
	items map[string]tsEntry

	// byName holds every index; nsIndices those computed inline from the
	// namespace and slotted those whose values live in tsEntry.vals, in
	// slot order.
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
		items:  map[string]tsEntry{},
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

func storeSortedNames(indexers Indexers) []string {
	names := make([]string, 0, len(indexers))
	for name := range indexers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// addIndexLocked registers an empty index; the caller fills it.
func (m *threadSafeMap) addIndexLocked(name string, fn IndexFunc) *tsIndex {
	ix := &tsIndex{name: name, fn: fn, byValue: index{}}
	if fn != nil && reflect.ValueOf(fn).Pointer() == storeMetaNamespaceIndexFuncPC {
		ix.slot = -1
		m.nsIdx = append(m.nsIdx, ix)
	} else {
		ix.slot = len(m.slotted)
		m.slotted = append(m.slotted, ix)
	}
	m.byName[name] = ix
	return ix
}

// indexValues computes the values of index ix for obj stored under key.
func (ix *tsIndex) values(key string, obj interface{}) ([]string, error) {
	if ix.fn == nil {
		return nil, &storeIndexError{index: ix.name, key: key, err: errors.New("index function is nil")}
	}
	vals, err := ix.fn(obj)
	if err != nil {
		return nil, &storeIndexError{index: ix.name, key: key, err: err}
	}
	return vals, nil
}

// namespaceOf computes the value of the inline namespace indices for obj.
func (m *threadSafeMap) namespaceOf(key string, obj interface{}) (string, error) {
	meta, err := storeMetaAccessor(obj)
	if err != nil {
		return "", &storeIndexError{index: m.nsIdx[0].name, key: key, err: err}
	}
	return meta.GetNamespace(), nil
}

// putLocked stores obj under key and updates every index, or changes nothing
// and returns an error when an index function fails.
func (m *threadSafeMap) putLocked(key string, obj interface{}) error {
	old, exists := m.items[key]
	e := tsEntry{obj: obj}
	if len(m.nsIdx) > 0 {
		ns, err := m.namespaceOf(key, obj)
		if err != nil {
			return err
		}
		e.ns = ns
	}
	if n := len(m.slotted); n > 0 {
		// Compute into a stack buffer first so a failure changes nothing.
		var buf [4][]string
		var vals [][]string
		if n <= len(buf) {
			vals = buf[:n]
		} else {
			vals = make([][]string, n)
		}
		for i, ix := range m.slotted {
			v, err := ix.values(key, obj)
			if err != nil {
				return err
			}
			vals[i] = v
		}
		if exists {
			for i, ix := range m.slotted {
				ix.move(key, old.vals[i], vals[i])
			}
			// Only writers, under the lock, read vals: reuse the slice.
			e.vals = old.vals
		} else {
			for i, ix := range m.slotted {
				for _, v := range vals[i] {
					ix.insert(v, key)
				}
			}
			e.vals = make([][]string, n)
		}
		copy(e.vals, vals)
	}
	for _, ix := range m.nsIdx {
		if !exists {
			ix.insert(e.ns, key)
		} else if old.ns != e.ns {
			ix.remove(old.ns, key)
			ix.insert(e.ns, key)
		}
	}
	m.items[key] = e
	return nil
}

// deleteLocked removes key and its index entries; it cannot fail.
func (m *threadSafeMap) deleteLocked(key string) {
	old, exists := m.items[key]
	if !exists {
		return
	}
	for _, ix := range m.nsIdx {
		ix.remove(old.ns, key)
	}
	for i, ix := range m.slotted {
		for _, v := range old.vals[i] {
			ix.remove(v, key)
		}
	}
	delete(m.items, key)
}

// storeResourceVersionOf returns obj's resource version and whether obj has
// metadata to read it from.
func storeResourceVersionOf(obj interface{}) (string, bool) {
	meta, err := storeMetaAccessor(obj)
	if err != nil {
		return "", false
	}
	return meta.GetResourceVersion(), true
}

// setRVLocked records rv as the newest resource version seen.
func (m *threadSafeMap) setRVLocked(rv string) {
	m.rv = rv
	m.metrics.setResourceVersion(rv)
}

// writtenRVLocked records the resource version of a written object, unless
// the store keeps a watermark.
func (m *threadSafeMap) writtenRVLocked(rv string) {
	if !m.watermark {
		m.setRVLocked(rv)
	}
}

// syncedRVLocked records the resource version of a Replace or Bookmark: as
// the newest seen, or, for a store that keeps a watermark, only when it is
// ahead of the current one.
func (m *threadSafeMap) syncedRVLocked(rv string) {
	if m.watermark {
		m.advanceRVLocked(rv)
		return
	}
	m.setRVLocked(rv)
}

// advanceRVLocked records rv when it is ahead of the recorded version: an
// empty rv never is; anything is ahead of an empty version; versions that
// cannot be compared as the API defines (decimal integers) are taken as
// ahead, since they come in the server's order.
func (m *threadSafeMap) advanceRVLocked(rv string) {
	if rv == "" || rv == m.rv {
		return
	}
	if m.rv != "" {
		if cmp, err := resourceversion.CompareResourceVersion(rv, m.rv); err == nil && cmp <= 0 {
			return
		}
	}
	m.setRVLocked(rv)
}

// advanceRV moves the recorded resource version forward to rv (see
// advanceRVLocked); it reports whether it moved.
func (m *threadSafeMap) advanceRV(rv string) bool {
	if rv == "" {
		return false
	}
	m.lock.Lock()
	defer m.lock.Unlock()
	before := m.rv
	m.advanceRVLocked(rv)
	return m.rv != before
}

// update is Add/Update returning the index error instead of reporting it.
func (m *threadSafeMap) update(key string, obj interface{}) error {
	_, _, err := m.swap(key, obj)
	return err
}

// swap is update that also returns the object key held before (when the
// write fails, the store is unchanged and prev is still reported).
func (m *threadSafeMap) swap(key string, obj interface{}) (prev interface{}, existed bool, err error) {
	rv, hasRV := storeResourceVersionOf(obj)
	m.lock.Lock()
	defer m.lock.Unlock()
	old, existed := m.items[key]
	if err := m.putLocked(key, obj); err != nil {
		return old.obj, existed, err
	}
	if hasRV {
		m.writtenRVLocked(rv)
	}
	return old.obj, existed, nil
}

// Add stores obj under key; see ThreadSafeStore.
func (m *threadSafeMap) Add(key string, obj interface{}) {
	m.Update(key, obj)
}

// Update stores obj under key; see ThreadSafeStore.
func (m *threadSafeMap) Update(key string, obj interface{}) {
	if err := m.update(key, obj); err != nil {
		utilruntime.HandleErrorWithLogger(klog.Background(), err, "Object not stored", "key", key)
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

// storeTxnFailure is the error of the write at position pos of a batch.
type storeTxnFailure struct {
	pos int
	err error
}

// transaction applies txns under one lock acquisition and returns the
// failed writes. The newest resource version becomes that of the last
// applied write whose object has metadata. When observe is not nil it is
// called, under the lock, before each write with the write's position and
// the object its key held until then.
func (m *threadSafeMap) transaction(txns []ThreadSafeStoreTransaction, observe func(i int, prev interface{}, existed bool)) []storeTxnFailure {
	if len(txns) == 0 {
		return nil
	}
	var failures []storeTxnFailure
	m.lock.Lock()
	defer m.lock.Unlock()
	lastApplied := -1
	for i := range txns {
		t := &txns[i]
		if observe != nil {
			prev, existed := m.items[t.Key]
			observe(i, prev.obj, existed)
		}
		var err error
		switch t.Type {
		case TransactionTypeAdd, TransactionTypeUpdate:
			err = m.putLocked(t.Key, t.Object)
		case TransactionTypeDelete:
			m.deleteLocked(t.Key)
		default:
			err = fmt.Errorf("unknown transaction type %q for key %q", t.Type, t.Key)
		}
		if err != nil {
			failures = append(failures, storeTxnFailure{pos: i, err: err})
			continue
		}
		lastApplied = i
	}
	for i := lastApplied; i >= 0 && !m.watermark; i-- {
		if len(failures) > 0 && storeTxnFailed(failures, i) {
			continue
		}
		if rv, ok := storeResourceVersionOf(txns[i].Object); ok {
			m.setRVLocked(rv)
			break
		}
	}
	return failures
}

func storeTxnFailed(failures []storeTxnFailure, pos int) bool {
	for _, f := range failures {
		if f.pos == pos {
			return true
		}
	}
	return false
}

// Transaction applies the writes under one lock; see
// ThreadSafeStoreWithTransaction.
func (m *threadSafeMap) Transaction(txns ...ThreadSafeStoreTransaction) {
	for _, f := range m.transaction(txns, nil) {
		utilruntime.HandleErrorWithLogger(klog.Background(), f.err, "Transaction write not applied", "key", txns[f.pos].Key)
	}
}

// Get returns the object stored under key.
func (m *threadSafeMap) Get(key string) (item interface{}, exists bool) {
	m.lock.RLock()
	e, exists := m.items[key]
	m.lock.RUnlock()
	return e.obj, exists
}

// List returns all stored objects.
func (m *threadSafeMap) List() []interface{} {
	m.lock.RLock()
	defer m.lock.RUnlock()
	list := make([]interface{}, 0, len(m.items))
	for _, e := range m.items {
		list = append(list, e.obj)
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

// Replace makes items the whole content of the store. Should an index
// function fail on one of them, the store is left unchanged and the error is
// reported through HandleError.
func (m *threadSafeMap) Replace(items map[string]interface{}, resourceVersion string) {
	keys := make([]string, 0, len(items))
	objs := make([]interface{}, 0, len(items))
	for k, obj := range items {
		keys = append(keys, k)
		objs = append(objs, obj)
	}
	if err := m.replaceLists(keys, objs, resourceVersion); err != nil {
		utilruntime.HandleErrorWithLogger(klog.Background(), err, "Store not replaced")
	}
}

// replaceLists makes objs (stored under the parallel keys; a later duplicate
// key wins) the whole content of the store and records resourceVersion. When
// an index function fails on an object, nothing changes and the error is
// returned.
func (m *threadSafeMap) replaceLists(keys []string, objs []interface{}, resourceVersion string) error {
	// Build the new content without the lock, so readers are not blocked
	// for the whole of a large relist; if AddIndexers changed the set of
	// indices meanwhile, build again under the lock.
	m.lock.RLock()
	gen, nsIdx, slotted := m.layoutGen, m.nsIdx, m.slotted
	m.lock.RUnlock()
	r, err := storeBuildReplacement(keys, objs, nsIdx, slotted)
	if err != nil {
		return err
	}
	if m.replaceBuilt != nil {
		m.replaceBuilt()
	}
	m.lock.Lock()
	defer m.lock.Unlock()
	if m.layoutGen != gen {
		if r, err = storeBuildReplacement(keys, objs, m.nsIdx, m.slotted); err != nil {
			return err
		}
	}
	m.items = r.items
	for i, ix := range m.nsIdx {
		if i == 0 {
			ix.byValue = r.nsByValue
		} else {
			ix.byValue = storeCloneIndex(r.nsByValue)
		}
	}
	for i, ix := range m.slotted {
		ix.byValue = r.slotByValue[i]
	}
	m.syncedRVLocked(resourceVersion)
	return nil
}

// storeReplacement is the content and indices built for a Replace.
type storeReplacement struct {
	items       map[string]tsEntry
	nsByValue   index   // for the namespace indices, when there are any
	slotByValue []index // for the slotted indices, by slot
}

// storeBuildReplacement computes the entries for objs (stored under the
// parallel keys; a later duplicate key wins) and the indices over them,
// reading only the immutable functions of the given indices. It fails when
// an index function fails.
func storeBuildReplacement(keys []string, objs []interface{}, nsIdx, slotted []*tsIndex) (storeReplacement, error) {
	items := make(map[string]tsEntry, len(keys))
	nSlots := len(slotted)
	// The entries' vals slices are cut from one allocation.
	var chunk [][]string
	for i, key := range keys {
		obj := objs[i]
		e := tsEntry{obj: obj}
		if len(nsIdx) > 0 {
			meta, err := storeMetaAccessor(obj)
			if err != nil {
				return storeReplacement{}, &storeIndexError{index: nsIdx[0].name, key: key, err: err}
			}
			e.ns = meta.GetNamespace()
		}
		if nSlots > 0 {
			if len(chunk) < nSlots {
				chunk = make([][]string, nSlots*(len(keys)-i))
			}
			e.vals, chunk = chunk[:nSlots:nSlots], chunk[nSlots:]
			for s, ix := range slotted {
				v, err := ix.values(key, obj)
				if err != nil {
					return storeReplacement{}, err
				}
				e.vals[s] = v
			}
		}
		items[key] = e
	}

	// Count the keys of each value first so that every key set is
	// allocated at its final size: on a large list this avoids growing
	// (and rehashing) the sets again and again.
	r := storeReplacement{items: items, slotByValue: make([]index, nSlots)}
	var nsCounts map[string]int
	if len(nsIdx) > 0 {
		nsCounts = map[string]int{}
	}
	slotCounts := make([]map[string]int, nSlots)
	for i := range slotCounts {
		slotCounts[i] = map[string]int{}
	}
	for _, e := range items {
		if nsCounts != nil {
			nsCounts[e.ns]++
		}
		for i, vals := range e.vals {
			for _, v := range vals {
				slotCounts[i][v]++
			}
		}
	}
	presized := func(counts map[string]int) index {
		idx := make(index, len(counts))
		for v, n := range counts {
			idx[v] = make(sets.Set[string], n)
		}
		return idx
	}
	if nsCounts != nil {
		r.nsByValue = presized(nsCounts)
	}
	for i := range slotted {
		r.slotByValue[i] = presized(slotCounts[i])
	}
	for key, e := range items {
		if r.nsByValue != nil {
			r.nsByValue[e.ns][key] = sets.Empty{}
		}
		for i, vals := range e.vals {
			for _, v := range vals {
				r.slotByValue[i][v][key] = sets.Empty{}
			}
		}
	}
	return r, nil
}

// storeCloneIndex returns a deep copy of idx.
func storeCloneIndex(idx index) index {
	out := make(index, len(idx))
	for v, keys := range idx {
		out[v] = keys.Clone()
	}
	return out
}

// indexLocked returns the named index or an error naming it.
func (m *threadSafeMap) indexLocked(name string) (*tsIndex, error) {
	ix := m.byName[name]
	if ix == nil {
		return nil, fmt.Errorf("index with name %q does not exist", name)
	}
	return ix, nil
}

// Index returns the objects sharing an index value with obj.
func (m *threadSafeMap) Index(indexName string, obj interface{}) ([]interface{}, error) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	ix, err := m.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	var vals []string
	if ix.slot < 0 {
		ns, err := m.namespaceOf("", obj)
		if err != nil {
			return nil, err
		}
		return m.objectsLocked(ix.byValue[ns]), nil
	}
	vals, err = ix.values("", obj)
	if err != nil {
		return nil, err
	}
	switch len(vals) {
	case 0:
		return []interface{}{}, nil
	case 1:
		return m.objectsLocked(ix.byValue[vals[0]]), nil
	}
	union := sets.Set[string]{}
	for _, v := range vals {
		for key := range ix.byValue[v] {
			union[key] = sets.Empty{}
		}
	}
	return m.objectsLocked(union), nil
}

// objectsLocked returns the objects stored under the given keys.
func (m *threadSafeMap) objectsLocked(keys sets.Set[string]) []interface{} {
	list := make([]interface{}, 0, len(keys))
	for key := range keys {
		list = append(list, m.items[key].obj)
	}
	return list
}

// ByIndex returns the objects whose values for the index include
// indexedValue.
func (m *threadSafeMap) ByIndex(indexName, indexedValue string) ([]interface{}, error) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	ix, err := m.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	return m.objectsLocked(ix.byValue[indexedValue]), nil
}

// IndexKeys returns, sorted, the keys whose values for the index include
// indexedValue.
func (m *threadSafeMap) IndexKeys(indexName, indexedValue string) ([]string, error) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	ix, err := m.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	return sets.List(ix.byValue[indexedValue]), nil
}

// ListIndexFuncValues returns the values present in the named index.
func (m *threadSafeMap) ListIndexFuncValues(indexName string) []string {
	m.lock.RLock()
	defer m.lock.RUnlock()
	ix := m.byName[indexName]
	if ix == nil {
		return []string{}
	}
	values := make([]string, 0, len(ix.byValue))
	for v := range ix.byValue {
		values = append(values, v)
	}
	return values
}

// GetIndexers returns a copy of the index functions by name.
//
// Difference from client-go: the result is a copy taken under the lock, so
// it does not race with AddIndexers.
func (m *threadSafeMap) GetIndexers() Indexers {
	m.lock.RLock()
	defer m.lock.RUnlock()
	out := make(Indexers, len(m.byName))
	for name, ix := range m.byName {
		out[name] = ix.fn
	}
	return out
}

// AddIndexers adds index functions and indexes the stored objects with
// them. It fails, changing nothing, when a name is already used (or
// repeated), a function is nil or a new function fails on a stored object.
func (m *threadSafeMap) AddIndexers(newIndexers Indexers) error {
	if len(newIndexers) == 0 {
		return nil
	}
	m.lock.Lock()
	defer m.lock.Unlock()
	names := storeSortedNames(newIndexers)
	var conflicts []string
	for _, name := range names {
		if newIndexers[name] == nil {
			return fmt.Errorf("index %q has a nil index function", name)
		}
		if m.byName[name] != nil {
			conflicts = append(conflicts, name)
		}
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("indexer conflict: indices %q already exist", conflicts)
	}

	// Compute every new value before changing anything.
	type pending struct {
		ns   bool
		fn   IndexFunc
		name string
		vals map[string][]string
		nss  map[string]string
	}
	work := make([]pending, 0, len(names))
	for _, name := range names {
		probe := &tsIndex{name: name, fn: newIndexers[name]}
		p := pending{name: name, fn: newIndexers[name]}
		p.ns = p.fn != nil && reflect.ValueOf(p.fn).Pointer() == storeMetaNamespaceIndexFuncPC
		if p.ns {
			p.nss = make(map[string]string, len(m.items))
		} else {
			p.vals = make(map[string][]string, len(m.items))
		}
		for key, e := range m.items {
			if p.ns {
				meta, err := storeMetaAccessor(e.obj)
				if err != nil {
					return &storeIndexError{index: name, key: key, err: err}
				}
				p.nss[key] = meta.GetNamespace()
				continue
			}
			v, err := probe.values(key, e.obj)
			if err != nil {
				return err
			}
			p.vals[key] = v
		}
		work = append(work, p)
	}

	hadNS := len(m.nsIdx) > 0
	m.layoutGen++
	for _, p := range work {
		ix := m.addIndexLocked(p.name, p.fn)
		if p.ns {
			for key, ns := range p.nss {
				ix.insert(ns, key)
			}
			continue
		}
		for key, vals := range p.vals {
			for _, v := range vals {
				ix.insert(v, key)
			}
		}
	}
	// Give every entry its new namespace and slots.
	for key, e := range m.items {
		changed := false
		if !hadNS && len(m.nsIdx) > 0 {
			for _, p := range work {
				if p.ns {
					e.ns = p.nss[key]
					changed = true
					break
				}
			}
		}
		if len(e.vals) < len(m.slotted) {
			vals := make([][]string, len(m.slotted))
			copy(vals, e.vals)
			for _, p := range work {
				if !p.ns {
					vals[m.byName[p.name].slot] = p.vals[key]
				}
			}
			e.vals = vals
			changed = true
		}
		if changed {
			m.items[key] = e
		}
	}
	return nil
}

// Resync does nothing.
func (m *threadSafeMap) Resync() error {
	return nil
}

// Bookmark records rv as the newest resource version seen.
func (m *threadSafeMap) Bookmark(rv string) {
	m.lock.Lock()
	defer m.lock.Unlock()
	m.syncedRVLocked(rv)
}

// LastStoreSyncResourceVersion returns the newest resource version seen, or
// "" while the AtomicFIFO feature gate is disabled.
func (m *threadSafeMap) LastStoreSyncResourceVersion() string {
	if !clientgofeatures.FeatureGates().Enabled(clientgofeatures.AtomicFIFO) {
		return ""
	}
	m.lock.RLock()
	defer m.lock.RUnlock()
	return m.rv
}

// storeRVForMetrics converts a resource version to a gauge value, keeping
// at most its last 15 digits so the float64 stays exact. It returns false
// for versions that are not decimal integers.
func storeRVForMetrics(rv string) (float64, bool) {
	if rv == "" {
		return 0, true
	}
	if len(rv) > 15 {
		rv = rv[len(rv)-15:]
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return 0, false
	}
	return float64(n), true
}

// size returns the number of stored objects.
func (m *threadSafeMap) size() int {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return len(m.items)
}
