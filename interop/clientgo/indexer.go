package clientgo

import (
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
)

// indexer is the client-go Indexer over a kinformer informer's Indexer.
// Every method calls kinformer's: reads return the objects the cache holds
// (no copies), and errors are kinformer's. A client-go
// DeletedFinalStateUnknown given to Delete or Get is turned into
// kinformer's, so that it finds its key as in client-go.
type indexer struct {
	k cache.Indexer
}

// Add adds obj to the cache.
func (i *indexer) Add(obj any) error { return i.k.Add(obj) }

// Update updates obj in the cache.
func (i *indexer) Update(obj any) error { return i.k.Update(obj) }

// Delete removes obj (or the object of a tombstone's key) from the cache.
func (i *indexer) Delete(obj any) error { return i.k.Delete(toKinformerObject(obj)) }

// List returns the cached objects.
func (i *indexer) List() []any { return i.k.List() }

// ListKeys returns the keys of the cached objects.
func (i *indexer) ListKeys() []string { return i.k.ListKeys() }

// LastStoreSyncResourceVersion returns the cache's resourceVersion, a
// watermark (see cache.Store).
func (i *indexer) LastStoreSyncResourceVersion() string { return i.k.LastStoreSyncResourceVersion() }

// Bookmark passes a bookmark's resourceVersion to the cache.
func (i *indexer) Bookmark(rv string) { i.k.Bookmark(rv) }

// Get returns the cached object with obj's key.
func (i *indexer) Get(obj any) (item any, exists bool, err error) {
	return i.k.Get(toKinformerObject(obj))
}

// GetByKey returns the cached object under key.
func (i *indexer) GetByKey(key string) (item any, exists bool, err error) {
	return i.k.GetByKey(key)
}

// Replace replaces the cache's content with list at resourceVersion.
func (i *indexer) Replace(list []any, resourceVersion string) error {
	return i.k.Replace(list, resourceVersion)
}

// Resync is kinformer's Resync (no effect on a cache).
func (i *indexer) Resync() error { return i.k.Resync() }

// Index returns the cached objects that share an indexed value of
// indexName with obj.
func (i *indexer) Index(indexName string, obj any) ([]any, error) { return i.k.Index(indexName, obj) }

// IndexKeys returns the keys of the cached objects indexed under
// indexedValue in indexName.
func (i *indexer) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return i.k.IndexKeys(indexName, indexedValue)
}

// ListIndexFuncValues returns the indexed values of indexName.
func (i *indexer) ListIndexFuncValues(indexName string) []string {
	return i.k.ListIndexFuncValues(indexName)
}

// ByIndex returns the cached objects indexed under indexedValue in
// indexName.
func (i *indexer) ByIndex(indexName, indexedValue string) ([]any, error) {
	return i.k.ByIndex(indexName, indexedValue)
}

// GetIndexers returns the cache's index functions in client-go's types (a
// new map; the functions are the ones the cache calls).
func (i *indexer) GetIndexers() toolscache.Indexers { return toClientGoIndexers(i.k.GetIndexers()) }

// AddIndexers adds indices to the cache; it fails, changing nothing, for a
// name that exists already or a nil function (kinformer's errors).
func (i *indexer) AddIndexers(newIndexers toolscache.Indexers) error {
	return i.k.AddIndexers(toKinformerIndexers(newIndexers))
}

// toKinformerIndexers returns indexers in kinformer's types (nil for nil).
func toKinformerIndexers(indexers toolscache.Indexers) cache.Indexers {
	if indexers == nil {
		return nil
	}
	out := make(cache.Indexers, len(indexers))
	for name, f := range indexers {
		out[name] = cache.IndexFunc(f)
	}
	return out
}

// toClientGoIndexers returns indexers in client-go's types (nil for nil).
func toClientGoIndexers(indexers cache.Indexers) toolscache.Indexers {
	if indexers == nil {
		return nil
	}
	out := make(toolscache.Indexers, len(indexers))
	for name, f := range indexers {
		out[name] = toolscache.IndexFunc(f)
	}
	return out
}
