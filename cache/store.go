package cache

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache/internal/store"
)

// Store is a keyed collection of objects. It knows how to compute an object's
// key (with its KeyFunc), so most operations take the object itself.
//
// The implementations returned by NewStore and NewIndexer are safe for
// concurrent use and keep the last object given for each key. Other
// implementations (the delta FIFOs, ExpirationCache, UndeltaStore) attach
// more behaviour to the same operations. Objects handed out by Get and List
// are the stored objects themselves: callers must treat them as read-only.
type Store interface {
	// Add stores obj under its key, replacing any object already there.
	// It returns a KeyError when the key cannot be computed.
	Add(obj interface{}) error

	// Update stores obj under its key, replacing any object already there.
	// It returns a KeyError when the key cannot be computed.
	Update(obj interface{}) error

	// Delete removes the object with obj's key; obj may be a tombstone or an
	// ExplicitKey when the store's KeyFunc supports them. Deleting an absent
	// key is not an error. It returns a KeyError when the key cannot be
	// computed.
	Delete(obj interface{}) error

	// List returns all stored objects, in no particular order.
	List() []interface{}

	// ListKeys returns the keys of all stored objects, in no particular order.
	ListKeys() []string

	// LastStoreSyncResourceVersion returns the newest resource version the
	// store has seen, from the objects written to it, from Replace and from
	// Bookmark. It is empty while the client-go AtomicFIFO feature gate is
	// disabled.
	//
	// The cache of an informer built by this package keeps it as a
	// watermark instead: every change at or below it has been applied;
	// objects written do not move it, and it moves backwards only when a
	// complete list sets it to the list's version (see SharedInformer).
	// Differs from client-go v0.37.2; see COMPATIBILITY.md.
	LastStoreSyncResourceVersion() string

	// Bookmark records rv as the newest resource version seen, without
	// changing the stored objects.
	Bookmark(rv string)

	// Get returns the object stored under obj's key. It returns a KeyError
	// when the key cannot be computed.
	Get(obj interface{}) (item interface{}, exists bool, err error)

	// GetByKey returns the object stored under key.
	GetByKey(key string) (item interface{}, exists bool, err error)

	// Replace makes the given list the whole content of the store and records
	// resourceVersion as the newest version seen. The store takes ownership
	// of the list; the caller must not use it afterwards.
	Replace([]interface{}, string) error

	// Resync has no effect on plain stores; queues use it to re-deliver
	// their known objects.
	Resync() error
}

// TransactionType says what a Transaction does with its Object.
type TransactionType string

// The operations a Transaction can perform.
const (
	// TransactionTypeAdd adds the object, as Store.Add does.
	TransactionTypeAdd TransactionType = "Add"
	// TransactionTypeUpdate updates the object, as Store.Update does.
	TransactionTypeUpdate TransactionType = "Update"
	// TransactionTypeDelete deletes the object, as Store.Delete does.
	TransactionTypeDelete TransactionType = "Delete"
)

// Transaction is one operation of a batch applied with
// TransactionStore.Transaction: Type says whether Object is added, updated or
// deleted.
type Transaction struct {
	Object interface{}
	Type   TransactionType
}

// TransactionStore is implemented by stores that can apply a batch of
// operations under a single lock acquisition. The stores returned by NewStore
// and NewIndexer implement it.
type TransactionStore interface {
	// Transaction applies txns in order while holding the store's lock once,
	// so readers never see a partly applied batch and a busy writer cannot be
	// starved between operations. Operations that fail (bad key, unknown type,
	// failing transform) are reported in the returned *TransactionError; the
	// others are applied regardless. An add or update whose object an index
	// function fails on is applied, the object stored outside that index:
	// it is listed among the successful operations and its error is
	// reported as well. It returns nil when every operation succeeded.
	Transaction(txns ...Transaction) *TransactionError
}

var _ error = &TransactionError{}

// TransactionError reports the operations of a Transaction call that failed.
// SuccessfulIndices lists, in ascending order, the positions (in the txns
// argument) of the operations that were applied, TotalTransactions is the
// number of operations given and Errors holds, in order of position, one
// error per failed operation and one per applied operation whose object was
// stored outside an index that failed on it.
type TransactionError struct {
	SuccessfulIndices []int
	TotalTransactions int
	Errors            []error
}

// Error summarises how many operations failed and why.
func (t *TransactionError) Error() string {
	return fmt.Sprintf("failed to execute (%d/%d) transactions failed due to: %v",
		t.TotalTransactions-len(t.SuccessfulIndices), t.TotalTransactions, t.Errors)
}

// Unwrap returns the individual errors, so that errors.Is and errors.As
// find, for example, a KeyError among them.
func (t *TransactionError) Unwrap() []error {
	return t.Errors
}

// MetaNamespaceKeyFunc is the default KeyFunc for API objects: it returns
// "namespace/name", or just "name" for objects without a namespace. An
// ExplicitKey is returned unchanged. Values that are nil, typed nil pointers
// or carry no object metadata yield an error.
func MetaNamespaceKeyFunc(obj interface{}) (string, error) {
	if key, ok := obj.(ExplicitKey); ok {
		return string(key), nil
	}
	m, err := storeMetaAccessor(obj)
	if err != nil {
		return "", err
	}
	if ns := m.GetNamespace(); ns != "" {
		return ns + "/" + m.GetName(), nil
	}
	return m.GetName(), nil
}

// ObjectToName returns the structured name of an API object. Values that are
// nil, typed nil pointers or carry no object metadata yield an error.
func ObjectToName(obj interface{}) (ObjectName, error) {
	m, err := storeMetaAccessor(obj)
	if err != nil {
		return ObjectName{}, err
	}
	return MetaObjectToName(m), nil
}

// MetaObjectToName returns the structured name of the object with the given
// metadata. A nil obj (or typed nil pointer) yields the zero ObjectName.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
func MetaObjectToName(obj metav1.Object) ObjectName {
	if obj == nil || storeIsNilPointer(obj) {
		return ObjectName{}
	}
	return ObjectName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// cache is the Store and Indexer returned by NewStore and NewIndexer: a key
// function and an optional transform in front of the store engine
// (cache/internal/store), which holds the objects and indices.
type cache struct {
	engine      *store.Map
	keyFunc     KeyFunc
	transformer TransformFunc
	identifier  InformerNameAndResource
	metrics     InformerMetricsProvider
	// watermark and advanced: see withResourceVersionWatermark.
	watermark bool
	advanced  func()
}

var (
	_ Indexer          = &cache{}
	_ TransactionStore = &cache{}
)

// StoreOption configures the store built by NewStore or NewIndexer.
type StoreOption = func(*cache)

// WithTransformer makes the store pass every object given to Add, Update,
// Replace and the add/update operations of Transaction through transformer
// before keeping it; the key is computed from the object as given. A
// transform error fails that operation and leaves the store unchanged for
// that object. Transaction applies the transform as Add, Update and Replace
// do, so an object is stored in one form whatever the path it took.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
func WithTransformer(transformer TransformFunc) StoreOption {
	return func(c *cache) {
		c.transformer = transformer
	}
}

// WithStoreMetrics makes the store publish the newest resource version it
// has seen through metrics, under identifier. A nil metrics uses the provider
// set with SetInformerMetricsProvider. Nothing is published unless
// identifier.Reserved() is true.
func WithStoreMetrics(identifier InformerNameAndResource, metrics InformerMetricsProvider) StoreOption {
	return func(c *cache) {
		c.identifier = identifier
		if metrics == nil {
			metrics = currentInformerMetricsProvider()
		}
		c.metrics = metrics
	}
}

// NewStore returns a Store, safe for concurrent use, that keys objects with
// keyFunc and keeps the last object given for each key.
func NewStore(keyFunc KeyFunc, opts ...StoreOption) Store {
	return newCache(keyFunc, nil, opts)
}

// NewIndexer returns an Indexer, safe for concurrent use, that keys objects
// with keyFunc, keeps the last object given for each key and maintains the
// given indices.
func NewIndexer(keyFunc KeyFunc, indexers Indexers, opts ...StoreOption) Indexer {
	return newCache(keyFunc, indexers, opts)
}

func newCache(keyFunc KeyFunc, indexers Indexers, opts []StoreOption) *cache {
	c := &cache{keyFunc: keyFunc}
	for _, opt := range opts {
		if opt != nil {
			opt(c)
		}
	}
	var metrics *storeMetrics
	if c.metrics != nil {
		metrics = newStoreMetrics(c.identifier, c.metrics)
	}
	c.engine = store.New(newEngineConfig(indexers, metrics, c.watermark))
	return c
}

// withResourceVersionWatermark makes the store an informer's cache, whose
// resourceVersion is a watermark: every change at or below it has been
// applied. Writes of objects do not move it (the informer cannot tell from
// one object whether every earlier change is applied); Bookmark moves it
// forward only; the informer moves it forward with advanceResourceVersion
// once everything up to a version is applied. A complete list sets it to
// the list's version, even a lower one: Replace, or resetResourceVersion
// for a list applied in several steps. Every move then calls advanced (when
// not nil), outside the store's lock.
func withResourceVersionWatermark(advanced func()) StoreOption {
	return func(c *cache) {
		c.watermark = true
		c.advanced = advanced
	}
}

// advanceResourceVersion moves the watermark of an informer's cache forward
// to rv (see withResourceVersionWatermark); it does nothing for other
// stores, or when rv is not ahead.
func (c *cache) advanceResourceVersion(rv string) {
	if c.watermark && c.engine.AdvanceResourceVersion(rv) && c.advanced != nil {
		c.advanced()
	}
}

// resetResourceVersion sets the watermark of an informer's cache to rv, the
// version of a complete list whose every object is now applied, even when
// rv is lower (see withResourceVersionWatermark); it does nothing for
// other stores, or for an empty rv.
func (c *cache) resetResourceVersion(rv string) {
	if c.watermark && c.engine.ResetResourceVersion(rv) && c.advanced != nil {
		c.advanced()
	}
}

// syncing returns the function a Replace or a Bookmark calls once done: for
// an informer's cache with a callback (withResourceVersionWatermark), it
// calls the callback when the operation moved the watermark, as
// advanceResourceVersion does for every other move; else it does nothing.
func (c *cache) syncing() (done func()) {
	if !c.watermark || c.advanced == nil {
		return func() {}
	}
	before := c.LastStoreSyncResourceVersion()
	return func() {
		if c.LastStoreSyncResourceVersion() != before {
			c.advanced()
		}
	}
}

// key computes obj's key, wrapping failures in a KeyError.
func (c *cache) key(obj interface{}) (string, error) {
	if c.keyFunc == nil {
		return "", KeyError{Obj: obj, Err: errors.New("store has no key function")}
	}
	key, err := c.keyFunc(obj)
	if err != nil {
		return "", KeyError{Obj: obj, Err: err}
	}
	return key, nil
}

// keyAndTransform computes obj's key and then applies the transformer.
func (c *cache) keyAndTransform(obj interface{}) (string, interface{}, error) {
	key, err := c.key(obj)
	if err != nil {
		return "", nil, err
	}
	if c.transformer != nil {
		obj, err = c.transformer(obj)
		if err != nil {
			return "", nil, fmt.Errorf("transforming object with key %q: %w", key, err)
		}
	}
	return key, obj, nil
}

// Add stores obj under its key. It returns a KeyError when the key cannot be
// computed, the transformer's error, or an error naming the index functions
// that failed on obj (obj is then stored but absent from those indices).
func (c *cache) Add(obj interface{}) error {
	return c.Update(obj)
}

// Update stores obj under its key, with the same errors as Add.
func (c *cache) Update(obj interface{}) error {
	key, obj, err := c.keyAndTransform(obj)
	if err != nil {
		return err
	}
	_, _, err = c.engine.Put(key, obj)
	return err
}

// Delete removes the object with obj's key. It returns a KeyError when the
// key cannot be computed.
func (c *cache) Delete(obj interface{}) error {
	key, err := c.key(obj)
	if err != nil {
		return err
	}
	c.engine.Delete(key, obj)
	return nil
}

// Transaction applies txns under one lock acquisition; see TransactionStore.
// Key and transform failures and unknown operation types are reported per
// operation, and a failed operation changes nothing; an index function
// failure is reported too, its object stored outside that index.
// The newest resource version seen becomes that of the last applied
// operation whose object has metadata.
func (c *cache) Transaction(txns ...Transaction) *TransactionError {
	return c.transact(txns, nil, nil)
}

// transactionWithPrevious is Transaction for callers that must tell add
// from update and need the replaced objects, such as an informer notifying
// its handlers: it saves them a Get (and a second key computation) per
// operation. prev must be as long as txns. For every operation, prev[i]
// receives the object its key held just before it was applied (nil if
// none), and add and update operations get their Type rewritten in txns to
// TransactionTypeAdd when the key was absent and TransactionTypeUpdate when
// it was present. Errors are reported as by Transaction; prev[i] and
// txns[i] of failed operations are unspecified.
func (c *cache) transactionWithPrevious(txns []Transaction, prev []interface{}) *TransactionError {
	if len(prev) < len(txns) {
		return &TransactionError{
			TotalTransactions: len(txns),
			SuccessfulIndices: []int{},
			Errors:            []error{fmt.Errorf("need room for %d previous objects, got %d", len(txns), len(prev))},
		}
	}
	return c.transact(txns, prev, nil)
}

// transactionWithKeys is transactionWithPrevious for callers that already
// computed every operation's key with the store's key function (an
// informer reusing its queue's keys): keys[i] is the key of txns[i].Object,
// and the store does not compute it again. With keys nil (or of another
// length than txns) the keys are computed as usual.
func (c *cache) transactionWithKeys(txns []Transaction, keys []string, prev []interface{}) *TransactionError {
	if len(keys) != len(txns) {
		keys = nil
	}
	if len(prev) < len(txns) {
		return c.transactionWithPrevious(txns, prev)
	}
	return c.transact(txns, prev, keys)
}

// updateKeyedWithPrevious is updateWithPrevious for a caller that already
// computed obj's key with the store's key function.
func (c *cache) updateKeyedWithPrevious(key string, obj interface{}) (prev interface{}, existed bool, err error) {
	if c.transformer != nil {
		if obj, err = c.transformer(obj); err != nil {
			return nil, false, fmt.Errorf("transforming object with key %q: %w", key, err)
		}
	}
	return c.engine.Put(key, obj)
}

// replaceKeyed is Replace for a caller that already computed the keys of
// list with the store's key function: keys[i] is the key of list[i].
func (c *cache) replaceKeyed(keys []string, list []interface{}, resourceVersion string) error {
	if len(keys) != len(list) {
		return c.Replace(list, resourceVersion)
	}
	if c.transformer != nil {
		for i, obj := range list {
			out, err := c.transformer(obj)
			if err != nil {
				return fmt.Errorf("transforming object with key %q: %w", keys[i], err)
			}
			list[i] = out
		}
	}
	defer c.syncing()()
	return c.engine.Replace(keys, list, resourceVersion)
}

// deleteKeyed is Delete for a caller that already computed obj's key with
// the store's key function.
func (c *cache) deleteKeyed(key string, obj interface{}) {
	c.engine.Delete(key, obj)
}

// updateWithPrevious is Update that also returns the object obj's key held
// before (nil and false when none), for callers that must tell add from
// update; it saves them a Get and a second key computation.
func (c *cache) updateWithPrevious(obj interface{}) (prev interface{}, existed bool, err error) {
	key, obj, err := c.keyAndTransform(obj)
	if err != nil {
		return nil, false, err
	}
	return c.engine.Put(key, obj)
}

// transact implements Transaction and transactionWithPrevious (prev nil
// for the former), and transactionWithKeys (keys, when not nil, holds the
// precomputed key of every operation).
func (c *cache) transact(txns []Transaction, prev []interface{}, keys []string) *TransactionError {
	if len(txns) == 0 {
		return nil
	}
	keyed := make([]store.Write, 0, len(txns))
	pos := make([]int, 0, len(txns))
	var failed map[int]error
	fail := func(i int, err error) {
		if failed == nil {
			failed = make(map[int]error)
		}
		failed[i] = err
	}
	for i := range txns {
		t := txns[i]
		var key string
		var err error
		switch {
		case keys != nil && (t.Type == TransactionTypeAdd || t.Type == TransactionTypeUpdate):
			key = keys[i]
			if c.transformer != nil {
				if t.Object, err = c.transformer(t.Object); err != nil {
					err = fmt.Errorf("transforming object with key %q: %w", key, err)
				}
			}
		case keys != nil && t.Type == TransactionTypeDelete:
			key = keys[i]
		case t.Type == TransactionTypeAdd || t.Type == TransactionTypeUpdate:
			key, t.Object, err = c.keyAndTransform(t.Object)
		case t.Type == TransactionTypeDelete:
			key, err = c.key(t.Object)
		default:
			err = fmt.Errorf("transaction %d: unknown transaction type %q", i, t.Type)
		}
		if err != nil {
			fail(i, err)
			continue
		}
		keyed = append(keyed, store.Write{Op: string(t.Type), Key: key, Object: t.Object})
		pos = append(pos, i)
	}
	var observe func(j int, old interface{}, existed bool)
	if prev != nil {
		observe = func(j int, old interface{}, existed bool) {
			i := pos[j]
			prev[i] = old
			if t := &txns[i]; t.Type == TransactionTypeAdd || t.Type == TransactionTypeUpdate {
				if existed {
					t.Type = TransactionTypeUpdate
				} else {
					t.Type = TransactionTypeAdd
				}
			}
		}
	}
	var unindexed map[int]error
	for _, f := range c.engine.Transaction(keyed, observe) {
		if !f.Applied {
			fail(pos[f.Pos], f.Err)
			continue
		}
		if unindexed == nil {
			unindexed = make(map[int]error)
		}
		unindexed[pos[f.Pos]] = f.Err
	}
	if len(failed) == 0 && len(unindexed) == 0 {
		return nil
	}
	te := &TransactionError{
		TotalTransactions: len(txns),
		SuccessfulIndices: make([]int, 0, len(txns)-len(failed)),
		Errors:            make([]error, 0, len(failed)+len(unindexed)),
	}
	for i := range txns {
		if err, ok := failed[i]; ok {
			te.Errors = append(te.Errors, err)
			continue
		}
		te.SuccessfulIndices = append(te.SuccessfulIndices, i)
		if err, ok := unindexed[i]; ok {
			te.Errors = append(te.Errors, err)
		}
	}
	return te
}

// List returns all stored objects, in no particular order.
func (c *cache) List() []interface{} {
	return c.engine.List()
}

// ListKeys returns the keys of all stored objects, in no particular order.
func (c *cache) ListKeys() []string {
	return c.engine.ListKeys()
}

// LastStoreSyncResourceVersion returns the newest resource version seen; see
// Store.
func (c *cache) LastStoreSyncResourceVersion() string {
	return storeLastSyncResourceVersion(c.engine)
}

// Bookmark records rv as the newest resource version seen.
func (c *cache) Bookmark(rv string) {
	defer c.syncing()()
	c.engine.Bookmark(rv)
}

// GetIndexers returns a copy of the store's index functions by name.
func (c *cache) GetIndexers() Indexers {
	return store.IndexersAs[Indexers](c.engine)
}

// Index returns the stored objects that share at least one value of the
// named index with obj. It fails for an unknown index name or when the index
// function fails on obj.
func (c *cache) Index(indexName string, obj interface{}) ([]interface{}, error) {
	return c.engine.Index(indexName, obj)
}

// IndexKeys returns, sorted, the keys of the stored objects whose values for
// the named index include indexedValue. It fails for an unknown index name.
func (c *cache) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return c.engine.IndexKeys(indexName, indexedValue)
}

// ListIndexFuncValues returns the values currently present in the named
// index; it is empty for an unknown index name.
func (c *cache) ListIndexFuncValues(indexName string) []string {
	return c.engine.ListIndexFuncValues(indexName)
}

// ByIndex returns the stored objects whose values for the named index include
// indexedValue. It fails for an unknown index name.
func (c *cache) ByIndex(indexName, indexedValue string) ([]interface{}, error) {
	return c.engine.ByIndex(indexName, indexedValue)
}

// AddIndexers adds index functions and indexes the stored objects with them;
// see Indexer.
func (c *cache) AddIndexers(newIndexers Indexers) error {
	return c.engine.AddIndexers(engineIndexers(newIndexers))
}

// Get returns the object stored under obj's key. It returns a KeyError when
// the key cannot be computed.
func (c *cache) Get(obj interface{}) (item interface{}, exists bool, err error) {
	key, err := c.key(obj)
	if err != nil {
		return nil, false, err
	}
	item, exists = c.engine.Get(key)
	return item, exists, nil
}

// GetByKey returns the object stored under key; it never fails.
func (c *cache) GetByKey(key string) (item interface{}, exists bool, err error) {
	item, exists = c.engine.Get(key)
	return item, exists, nil
}

// Replace makes list the whole content of the store and records
// resourceVersion. If an object cannot be keyed or transformed, Replace
// returns that error and the store is left unchanged. Objects on which an
// index function fails are stored but left out of that index, and Replace
// returns an error naming them.
func (c *cache) Replace(list []interface{}, resourceVersion string) error {
	keys := make([]string, len(list))
	for i, obj := range list {
		key, obj, err := c.keyAndTransform(obj)
		if err != nil {
			return err
		}
		keys[i] = key
		list[i] = obj
	}
	defer c.syncing()()
	return c.engine.Replace(keys, list, resourceVersion)
}

// Resync does nothing and returns nil.
func (c *cache) Resync() error {
	return nil
}

// ownStore is the Store and Indexer of NewStore and NewIndexer as the rest
// of this package sees it: with the paths an informer takes past the public
// methods, to skip a Get or a second key computation per object and to move
// the watermark of its cache. A value of another type (a store of the
// caller's) goes through the public methods only. The methods are
// documented on *cache, the one implementation.
type ownStore interface {
	Indexer
	TransactionStore
	// key computes obj's key with the store's key function, as a KeyError
	// on failure.
	key(obj interface{}) (string, error)
	// keepsWatermark reports whether the store is an informer's cache
	// (withResourceVersionWatermark).
	keepsWatermark() bool
	advanceResourceVersion(rv string)
	resetResourceVersion(rv string)
	// resourceVersion returns the recorded resource version, whatever the
	// AtomicFIFO feature gate says.
	resourceVersion() string
	// size returns the number of stored objects.
	size() int
	updateWithPrevious(obj interface{}) (prev interface{}, existed bool, err error)
	updateKeyedWithPrevious(key string, obj interface{}) (prev interface{}, existed bool, err error)
	deleteKeyed(key string, obj interface{})
	replaceKeyed(keys []string, list []interface{}, resourceVersion string) error
	transactionWithKeys(txns []Transaction, keys []string, prev []interface{}) *TransactionError
}

var _ ownStore = &cache{}

// keepsWatermark reports whether the store is an informer's cache; see
// withResourceVersionWatermark.
func (c *cache) keepsWatermark() bool {
	return c.watermark
}

// resourceVersion returns the recorded resource version, whatever the
// AtomicFIFO feature gate says.
func (c *cache) resourceVersion() string {
	return c.engine.ResourceVersion()
}

// size returns the number of stored objects.
func (c *cache) size() int {
	return c.engine.Len()
}
