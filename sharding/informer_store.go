package sharding

import (
	"errors"
	"maps"

	"github.com/kinformer/kinformer/cache"
)

// errReadOnly is what the writing methods of a sharded informer's store
// return.
var errReadOnly = errors.New("the store of a sharded informer is read only")

// unionIndexer is the read-only union of the held ranges' indexers.
type unionIndexer struct{ s *Informer }

// Add returns errReadOnly: the union is read only.
func (u unionIndexer) Add(interface{}) error { return errReadOnly }

// Update returns errReadOnly.
func (u unionIndexer) Update(interface{}) error { return errReadOnly }

// Delete returns errReadOnly.
func (u unionIndexer) Delete(interface{}) error { return errReadOnly }

// Replace returns errReadOnly.
func (u unionIndexer) Replace([]interface{}, string) error { return errReadOnly }

// Resync does nothing: each range informer resyncs its own handlers.
func (u unionIndexer) Resync() error { return nil }

// Bookmark does nothing: each range store keeps its own resourceVersion.
func (u unionIndexer) Bookmark(string) {}

// GetIndexers returns the indexers every range store has.
func (u unionIndexer) GetIndexers() cache.Indexers { return u.indexers() }

// AddIndexers is Informer.AddIndexers.
func (u unionIndexer) AddIndexers(idx cache.Indexers) error { return u.s.AddIndexers(idx) }

// LastStoreSyncResourceVersion returns the lowest watermark of the synced
// ranges' stores, "" while none is synced.
func (u unionIndexer) LastStoreSyncResourceVersion() string {
	return lowest(u.s.held(), func(ri *rangeInformer) string {
		return ri.informer.GetStore().LastStoreSyncResourceVersion()
	})
}

func (u unionIndexer) indexers() cache.Indexers {
	u.s.mu.RLock()
	defer u.s.mu.RUnlock()
	return maps.Clone(u.s.indexers)
}

// List returns the objects of every held range.
func (u unionIndexer) List() []interface{} {
	var out []interface{}
	for _, ri := range u.s.held() {
		out = append(out, ri.informer.GetIndexer().List()...)
	}
	return out
}

// ListKeys returns the keys of every held range.
func (u unionIndexer) ListKeys() []string {
	var out []string
	for _, ri := range u.s.held() {
		out = append(out, ri.informer.GetIndexer().ListKeys()...)
	}
	return out
}

// Get returns obj's cached object from the held range that has it.
func (u unionIndexer) Get(obj interface{}) (interface{}, bool, error) {
	for _, ri := range u.s.held() {
		if item, ok, err := ri.informer.GetIndexer().Get(obj); ok || err != nil {
			return item, ok, err
		}
	}
	return nil, false, nil
}

// GetByKey returns key's object from the held range that has it.
func (u unionIndexer) GetByKey(key string) (interface{}, bool, error) {
	for _, ri := range u.s.held() {
		if item, ok, err := ri.informer.GetIndexer().GetByKey(key); ok || err != nil {
			return item, ok, err
		}
	}
	return nil, false, nil
}

// Index concatenates the held ranges' answers.
func (u unionIndexer) Index(indexName string, obj interface{}) ([]interface{}, error) {
	return gather(u.s.held(), func(idx cache.Indexer) ([]interface{}, error) { return idx.Index(indexName, obj) })
}

// ByIndex concatenates the held ranges' answers.
func (u unionIndexer) ByIndex(indexName, indexedValue string) ([]interface{}, error) {
	return gather(u.s.held(), func(idx cache.Indexer) ([]interface{}, error) { return idx.ByIndex(indexName, indexedValue) })
}

// IndexKeys concatenates the held ranges' answers.
func (u unionIndexer) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return gather(u.s.held(), func(idx cache.Indexer) ([]string, error) { return idx.IndexKeys(indexName, indexedValue) })
}

// ListIndexFuncValues returns the indexed values of every held range, each
// once.
func (u unionIndexer) ListIndexFuncValues(indexName string) []string {
	seen := map[string]bool{}
	var out []string
	for _, ri := range u.s.held() {
		for _, v := range ri.informer.GetIndexer().ListIndexFuncValues(indexName) {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// gather concatenates what read returns for every held range's indexer,
// and fails with the first error.
func gather[T any](held []*rangeInformer, read func(cache.Indexer) ([]T, error)) ([]T, error) {
	var out []T
	for _, ri := range held {
		items, err := read(ri.informer.GetIndexer())
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}
