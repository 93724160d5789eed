package cache

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
