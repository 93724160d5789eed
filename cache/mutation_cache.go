package cache

import (
	"errors"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilcache "k8s.io/apimachinery/pkg/util/cache"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// MutationCache overlays the results of a controller's own writes on an
// informer's store: after writing an object to the API server, the
// controller passes the server's response to Mutation, and reads through
// the MutationCache return that object until the informer's store has caught
// up (has the same or a newer resource version). This hides the delay
// between a write and its watch event. Entries expire after a TTL and the
// least recently used are evicted beyond a size limit, so a read may also
// return an older object; it never returns one older than the store's.
//
// Call OnAddOrUpdate and OnDelete from the informer's event handlers to drop
// entries as soon as the store has caught up. Implementations are safe for
// concurrent use. The interface cannot be implemented outside this package.
type MutationCache interface {
	// GetByKey returns the newer of the store's object and the cached
	// mutation for key.
	GetByKey(key string) (interface{}, bool, error)
	// ByIndex returns the objects of the indexer's named index, each
	// replaced by a newer cached mutation where there is one.
	ByIndex(indexName, indexKey string) ([]interface{}, error)
	// Mutation records obj, the result of a write, unless a newer version
	// or a deletion of it is already known.
	Mutation(interface{})
	// OnAddOrUpdate tells the cache the store now holds obj.
	OnAddOrUpdate(obj runtime.Object)
	// OnDelete tells the cache obj was deleted from the store.
	OnDelete(obj runtime.Object)

	internal()
}

// ResourceVersionComparator orders two versions of an object. It returns a
// negative number when lhs is older than rhs, zero when they are the same
// version and a positive number when lhs is newer.
type ResourceVersionComparator interface {
	CompareResourceVersion(lhs, rhs runtime.Object) int
}

// MutationCacheOptions configures
// NewIntegerResourceVersionMutationCacheWithOptions.
type MutationCacheOptions struct {
	// Indexer serves ByIndex. With a nil Indexer, ByIndex returns an error.
	Indexer Indexer

	// TTL is how long a mutation is kept. Zero or negative means five
	// minutes.
	TTL time.Duration

	// IncludeAdds makes GetByKey and ByIndex return cached mutations of
	// objects the store does not (yet) hold, such as objects just created.
	// Such an entry may outlive the object by up to TTL when a delete
	// follows the create quickly, so the caller must cope with stale
	// created objects.
	IncludeAdds bool

	// MaxCacheSize is how many mutations are kept, evicting the least
	// recently used beyond it. Zero or negative means 100.
	MaxCacheSize int
}

// NewIntegerResourceVersionMutationCacheWithOptions returns a MutationCache
// over backingCache (normally an informer's store) for objects whose
// resource versions are decimal integers that grow with every write to the
// resource, as with etcd-backed API servers. Versions that are not
// integers cannot be ordered; the store's object is then preferred and a
// cached mutation is dropped rather than risk returning an older object.
// logger receives the cache's diagnostics.
//
// A MaxCacheSize or TTL of zero or less means the default (100 entries, 5
// minutes). With IncludeAdds, a mutation the store does not hold is returned
// on every read until it expires or the store catches up. Differs from
// client-go v0.37.2; see COMPATIBILITY.md.
func NewIntegerResourceVersionMutationCacheWithOptions(logger klog.Logger, backingCache Store, options MutationCacheOptions) MutationCache {
	return newMutationCache(logger, backingCache, options, nil)
}

// NewIntegerResourceVersionMutationCache is
// NewIntegerResourceVersionMutationCacheWithOptions with the given indexer,
// ttl and includeAdds, keeping at most 100 mutations.
func NewIntegerResourceVersionMutationCache(logger klog.Logger, backingCache Store, indexer Indexer, ttl time.Duration, includeAdds bool) MutationCache {
	return newMutationCache(logger, backingCache, MutationCacheOptions{
		Indexer:      indexer,
		TTL:          ttl,
		IncludeAdds:  includeAdds,
		MaxCacheSize: 100,
	}, nil)
}

// newMutationCache builds the cache; clk (nil for the real clock) drives
// the expiry of entries.
func newMutationCache(logger klog.Logger, backingCache Store, options MutationCacheOptions, clk utilcache.Clock) *mutationCache {
	size, ttl := options.MaxCacheSize, options.TTL
	if size <= 0 {
		size = 100
	}
	if ttl <= 0 {
		ttl = 5 * time.Minute
	}
	var lru *utilcache.LRUExpireCache
	if clk == nil {
		lru = utilcache.NewLRUExpireCache(size)
	} else {
		lru = utilcache.NewLRUExpireCacheWithClock(size, clk)
	}
	return &mutationCache{
		logger:      logger,
		backing:     backingCache,
		indexer:     options.Indexer,
		mutations:   lru,
		ttl:         ttl,
		includeAdds: options.IncludeAdds,
	}
}

// mutationCache implements MutationCache. The LRU holds, by key, either
// the newest mutated object or a *mutationTombstone for a deletion seen by
// OnDelete (which stops older mutations from being recorded).
type mutationCache struct {
	logger      klog.Logger
	lock        sync.Mutex
	backing     Store
	indexer     Indexer
	mutations   *utilcache.LRUExpireCache
	ttl         time.Duration
	includeAdds bool
}

func (c *mutationCache) internal() {}

// mutationCompare orders the resource versions of a and b as
// ResourceVersionComparator does; ok is false when either has no metadata
// or a version that is not a decimal integer. An empty version counts as 0.
func mutationCompare(a, b interface{}) (cmp int, ok bool) {
	va, okA := mutationIntegerRV(a)
	vb, okB := mutationIntegerRV(b)
	if !okA || !okB {
		return 0, false
	}
	switch {
	case va < vb:
		return -1, true
	case va > vb:
		return 1, true
	}
	return 0, true
}

func mutationIntegerRV(obj interface{}) (uint64, bool) {
	rv, ok := storeResourceVersionOf(obj)
	if !ok {
		return 0, false
	}
	if rv == "" {
		return 0, true
	}
	v, err := strconv.ParseUint(rv, 10, 64)
	return v, err == nil
}

// newerLocked returns the cached mutation for key when it is newer than
// the store's object, and otherwise drops the mutation and returns the
// store's object.
func (c *mutationCache) newerLocked(key string, stored interface{}) interface{} {
	m, ok := c.mutations.Get(key)
	if !ok {
		return stored
	}
	if _, dead := m.(*mutationTombstone); dead {
		// The store holds the object again: the deletion is history.
		c.mutations.Remove(key)
		return stored
	}
	if cmp, ok := mutationCompare(stored, m); ok && cmp < 0 {
		return m
	}
	c.mutations.Remove(key)
	return stored
}

// GetByKey returns the newer of the store's object and the cached mutation
// for key. Without IncludeAdds a key the store lacks is reported missing.
// It returns the store's error, if any.
func (c *mutationCache) GetByKey(key string) (interface{}, bool, error) {
	c.lock.Lock()
	defer c.lock.Unlock()
	obj, exists, err := c.backing.GetByKey(key)
	if err != nil {
		return nil, false, err
	}
	if exists {
		return c.newerLocked(key, obj), true, nil
	}
	if !c.includeAdds {
		return nil, false, nil
	}
	m, ok := c.mutations.Get(key)
	if !ok {
		return nil, false, nil
	}
	if _, dead := m.(*mutationTombstone); dead {
		return nil, false, nil
	}
	return m, true, nil
}

// ByIndex returns the indexer's objects for the named index value, each
// replaced by a newer cached mutation where there is one; with IncludeAdds
// it adds the cached mutations, of objects the indexer lacks or holds in an
// older version under other values, whose index values include indexKey. It fails without an Indexer, for an unknown index
// and on the indexer's errors.
func (c *mutationCache) ByIndex(name string, indexKey string) ([]interface{}, error) {
	c.lock.Lock()
	defer c.lock.Unlock()
	if c.indexer == nil {
		return nil, errors.New("mutation cache has no indexer")
	}
	keys, err := c.indexer.IndexKeys(name, indexKey)
	if err != nil {
		return nil, err
	}
	items := make([]interface{}, 0, len(keys))
	seen := make(map[string]struct{}, len(keys))
	for _, key := range keys {
		seen[key] = struct{}{}
		obj, exists, err := c.indexer.GetByKey(key)
		if err != nil {
			return nil, err
		}
		if exists {
			items = append(items, c.newerLocked(key, obj))
		}
	}
	if !c.includeAdds {
		return items, nil
	}
	fn := c.indexer.GetIndexers()[name]
	if fn == nil {
		return items, nil
	}
	// Keys come oldest first, so walking them keeps the LRU order.
	for _, k := range c.mutations.Keys() {
		key, _ := k.(string)
		if _, dup := seen[key]; dup {
			continue
		}
		m, ok := c.mutations.Get(k)
		if !ok {
			continue
		}
		if _, dead := m.(*mutationTombstone); dead {
			continue
		}
		if stored, inStore, _ := c.indexer.GetByKey(key); inStore {
			// The store holds the object under other index values; the
			// mutation only counts if it is newer.
			if cmp, ok := mutationCompare(stored, m); !ok || cmp >= 0 {
				continue
			}
		}
		values, err := fn(m)
		if err != nil {
			c.logger.V(4).Info("Cannot index cached mutation", "key", key, "index", name, "err", err)
			continue
		}
		for _, v := range values {
			if v == indexKey {
				items = append(items, m)
				break
			}
		}
	}
	return items, nil
}

// Mutation records obj unless the cache already holds a newer version of
// it, or a deletion of the same or a newer version or of the same object
// (UID). Objects that cannot be keyed are reported through HandleError and
// ignored.
func (c *mutationCache) Mutation(obj interface{}) {
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(c.logger, err, "Ignoring mutation that cannot be keyed")
		return
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	if prev, ok := c.mutations.Get(key); ok {
		cmp, comparable := mutationCompare(obj, prev)
		if comparable && cmp < 0 {
			return
		}
		if t, dead := prev.(*mutationTombstone); dead {
			if comparable && cmp == 0 {
				return
			}
			if m, err := storeMetaAccessor(obj); err == nil && m.GetUID() != "" && m.GetUID() == t.GetUID() {
				return
			}
		}
	}
	c.mutations.Add(key, obj, c.ttl)
}

// OnAddOrUpdate drops the cached mutation for obj's key once the store's
// obj is as new as it (or cannot be ordered against it).
func (c *mutationCache) OnAddOrUpdate(obj runtime.Object) {
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(c.logger, err, "Ignoring added or updated object that cannot be keyed")
		return
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	prev, ok := c.mutations.Get(key)
	if !ok {
		return
	}
	if cmp, comparable := mutationCompare(obj, prev); !comparable || cmp >= 0 {
		c.mutations.Remove(key)
	}
}

// OnDelete records that obj was deleted: a cached mutation of the same
// object (UID), or one not newer than obj, is replaced by a tombstone that
// keeps older mutations from being recorded later. A cached mutation that
// is newer and of another object (a re-creation) is kept.
func (c *mutationCache) OnDelete(obj runtime.Object) {
	m, err := storeMetaAccessor(obj)
	if err != nil {
		return
	}
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleErrorWithLogger(c.logger, err, "Ignoring deleted object that cannot be keyed")
		return
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	if prev, ok := c.mutations.Get(key); ok {
		cmp, comparable := mutationCompare(obj, prev)
		sameObject := false
		if pm, err := storeMetaAccessor(prev); err == nil {
			sameObject = pm.GetUID() == m.GetUID()
		}
		if comparable && cmp < 0 && !sameObject {
			return
		}
	}
	t := &mutationTombstone{}
	t.Namespace, t.Name, t.UID, t.ResourceVersion = m.GetNamespace(), m.GetName(), m.GetUID(), m.GetResourceVersion()
	c.mutations.Add(key, t, c.ttl)
}

// mutationTombstone stands for a deleted object in the mutation cache: it
// carries the deleted object's identity and resource version, and is never
// returned to callers.
type mutationTombstone struct {
	metav1.ObjectMeta
}

var _ runtime.Object = &mutationTombstone{}

// GetObjectKind returns an empty kind.
func (t *mutationTombstone) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject copies the tombstone.
func (t *mutationTombstone) DeepCopyObject() runtime.Object {
	return &mutationTombstone{ObjectMeta: *t.ObjectMeta.DeepCopy()}
}
