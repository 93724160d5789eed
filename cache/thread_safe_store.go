package cache

import (
	"errors"
	"strconv"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgofeatures "k8s.io/client-go/features"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache/internal/store"
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
// Use an Indexer from NewIndexer to get such errors returned. Differs from
// client-go v0.37.2; see COMPATIBILITY.md.
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
	// is nil or a new index function fails on a stored object. Differs from
	// client-go v0.37.2; see COMPATIBILITY.md.
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
// ThreadSafeStoreWithTransaction) maintaining the given indices. The
// content of indices is ignored: the store starts empty and builds its
// indices itself. The indexers map is copied, so later changes by the caller
// do not affect the store. Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
func NewThreadSafeStore(indexers Indexers, indices Indices, opts ...ThreadSafeStoreOption) ThreadSafeStore {
	m := &threadSafeMap{}
	for _, opt := range opts {
		if opt != nil {
			opt(m)
		}
	}
	m.engine = store.New(newEngineConfig(indexers, m.metrics, false))
	return m
}

// newEngineConfig returns the configuration of the engine of a store of
// this package: its indices, MetaNamespaceIndexFunc computed inline, and
// metrics (nil publishes nothing) receiving every resource version
// recorded.
func newEngineConfig(indexers Indexers, metrics *storeMetrics, watermark bool) store.Config {
	cfg := store.Config{
		Indexers:           engineIndexers(indexers),
		NamespaceIndexFunc: store.IndexFunc(MetaNamespaceIndexFunc),
		Watermark:          watermark,
	}
	if metrics != nil && metrics.rvGauge != nil {
		cfg.OnResourceVersion = metrics.setResourceVersion
	}
	return cfg
}

// engineIndexers converts index functions to the engine's type (nil for
// none).
func engineIndexers(indexers Indexers) map[string]store.IndexFunc {
	if len(indexers) == 0 {
		return nil
	}
	out := make(map[string]store.IndexFunc, len(indexers))
	for name, fn := range indexers {
		out[name] = store.IndexFunc(fn)
	}
	return out
}

// threadSafeMap is the ThreadSafeStoreWithTransaction of NewThreadSafeStore:
// the store engine (cache/internal/store) behind client-go's interface,
// reporting through HandleError what the interface has no error to return
// for.
type threadSafeMap struct {
	engine *store.Map
	// metrics is set by the options, before the engine is built.
	metrics *storeMetrics
}

var _ ThreadSafeStoreWithTransaction = &threadSafeMap{}

// Add stores obj under key; see ThreadSafeStore.
func (m *threadSafeMap) Add(key string, obj interface{}) {
	m.Update(key, obj)
}

// Update stores obj under key; see ThreadSafeStore.
func (m *threadSafeMap) Update(key string, obj interface{}) {
	if _, _, err := m.engine.Put(key, obj); err != nil {
		utilruntime.HandleErrorWithLogger(klog.Background(), err, "Object stored outside the indices that failed on it", "key", key)
	}
}

// Delete removes key without recording a resource version.
func (m *threadSafeMap) Delete(key string) {
	m.engine.Delete(key, nil)
}

// DeleteWithObject removes key and records obj's resource version.
func (m *threadSafeMap) DeleteWithObject(key string, obj interface{}) {
	m.engine.Delete(key, obj)
}

// Get returns the object stored under key.
func (m *threadSafeMap) Get(key string) (item interface{}, exists bool) {
	return m.engine.Get(key)
}

// List returns all stored objects.
func (m *threadSafeMap) List() []interface{} {
	return m.engine.List()
}

// ListKeys returns all keys.
func (m *threadSafeMap) ListKeys() []string {
	return m.engine.ListKeys()
}

// Replace makes items the whole content of the store. Objects on which an
// index function fails are stored outside that index, and the failures are
// reported through HandleError.
func (m *threadSafeMap) Replace(items map[string]interface{}, resourceVersion string) {
	if err := m.engine.ReplaceMap(items, resourceVersion); err != nil {
		utilruntime.HandleErrorWithLogger(klog.Background(), err, "Objects stored outside the indices that failed on them")
	}
}

// Index returns the objects sharing an index value with obj.
func (m *threadSafeMap) Index(indexName string, obj interface{}) ([]interface{}, error) {
	return m.engine.Index(indexName, obj)
}

// IndexKeys returns, sorted, the keys whose values for the index include
// indexedValue.
func (m *threadSafeMap) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return m.engine.IndexKeys(indexName, indexedValue)
}

// Bookmark records rv as the newest resource version seen.
func (m *threadSafeMap) Bookmark(rv string) {
	m.engine.Bookmark(rv)
}

// LastStoreSyncResourceVersion returns the newest resource version seen, or
// "" while the AtomicFIFO feature gate is disabled.
func (m *threadSafeMap) LastStoreSyncResourceVersion() string {
	return storeLastSyncResourceVersion(m.engine)
}

// ListIndexFuncValues returns the values present in the named index.
func (m *threadSafeMap) ListIndexFuncValues(indexName string) []string {
	return m.engine.ListIndexFuncValues(indexName)
}

// ByIndex returns the objects whose values for the index include
// indexedValue.
func (m *threadSafeMap) ByIndex(indexName, indexedValue string) ([]interface{}, error) {
	return m.engine.ByIndex(indexName, indexedValue)
}

// GetIndexers returns a copy of the index functions by name, taken under the
// lock, so it does not race with AddIndexers. Differs from client-go
// v0.37.2; see COMPATIBILITY.md.
func (m *threadSafeMap) GetIndexers() Indexers {
	return store.IndexersAs[Indexers](m.engine)
}

// AddIndexers adds index functions and indexes the stored objects with
// them. It fails, changing nothing, when a name is already used, a function
// is nil or a new function fails on a stored object.
func (m *threadSafeMap) AddIndexers(newIndexers Indexers) error {
	return m.engine.AddIndexers(engineIndexers(newIndexers))
}

// Resync does nothing.
func (m *threadSafeMap) Resync() error {
	return nil
}

// Transaction applies the writes under one lock; see
// ThreadSafeStoreWithTransaction.
func (m *threadSafeMap) Transaction(txns ...ThreadSafeStoreTransaction) {
	for _, f := range store.TransactionOf(m.engine, txns, engineWrite, nil) {
		msg := "Transaction write not applied"
		if f.Applied {
			msg = "Object stored outside the indices that failed on it"
		}
		utilruntime.HandleErrorWithLogger(klog.Background(), f.Err, msg, "key", txns[f.Pos].Key)
	}
}

// engineWrite is the engine's write for a ThreadSafeStoreTransaction.
func engineWrite(t *ThreadSafeStoreTransaction) store.Write {
	return store.Write{Op: string(t.Type), Key: t.Key, Object: t.Object}
}

// storeLastSyncResourceVersion returns the resource version engine
// recorded, or "" while the AtomicFIFO feature gate is disabled.
func storeLastSyncResourceVersion(engine *store.Map) string {
	if !clientgofeatures.FeatureGates().Enabled(clientgofeatures.AtomicFIFO) {
		return ""
	}
	return engine.ResourceVersion()
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

// storeIsIndexError reports whether err, from a write to a store of this
// package, is an index function's failure: the object is then stored all
// the same, outside that index.
func storeIsIndexError(err error) bool {
	return store.IsIndexError(err)
}

// storeUnindexedObjects reports, for an error of a Replace of a store of
// this package, how many objects it stored outside an index whose function
// failed on them; ok is false when err is not such a report.
func storeUnindexedObjects(err error) (n int, ok bool) {
	var failures *store.IndexFailures
	if !errors.As(err, &failures) {
		return 0, false
	}
	return failures.Total(), true
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
