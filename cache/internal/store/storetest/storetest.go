// Package storetest checks the indices of an indexed store against the indices computed from
// scratch from its contents. It serves the tests of the store engine (cache/internal/store)
// and of package cache's Indexer over it, and is imported by tests only.
package storetest

import (
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// Indexed is the part of an indexed store the checks read: client-go's Indexer methods for
// indices.
type Indexed interface {
	ListIndexFuncValues(indexName string) []string
	IndexKeys(indexName, indexedValue string) ([]string, error)
	ByIndex(indexName, indexedValue string) ([]any, error)
}

// IndexView is everything a store exposes about its indices, in a comparable form: index
// name → indexed value → sorted keys.
type IndexView map[string]map[string][]string

// ViewOf reads the indices names of idx through its methods, requiring that they agree with
// one another: IndexKeys sorted, ByIndex holding the objects of exactly those keys (keyOf
// gives an object's key), and no value listed without keys.
func ViewOf(t testing.TB, idx Indexed, keyOf func(any) string, names []string) IndexView {
	t.Helper()
	view := IndexView{}
	for _, name := range names {
		byValue := map[string][]string{}
		for _, v := range idx.ListIndexFuncValues(name) {
			keys, err := idx.IndexKeys(name, v)
			require.NoError(t, err)
			require.True(t, slices.IsSorted(keys), "IndexKeys sorted")
			objs, err := idx.ByIndex(name, v)
			require.NoError(t, err)
			objKeys := make([]string, 0, len(objs))
			for _, o := range objs {
				objKeys = append(objKeys, keyOf(o))
			}
			sort.Strings(objKeys)
			require.Equal(t, keys, objKeys, "ByIndex and IndexKeys agree for %s=%s", name, v)
			require.NotEmpty(t, keys, "no empty value sets are kept (%s=%s)", name, v)
			byValue[v] = keys
		}
		view[name] = byValue
	}
	return view
}

// ExpectedView computes the indices of items (key → object) from scratch with indexers; an
// object on which an index function fails is left out of that index only.
func ExpectedView[F ~func(any) ([]string, error)](items map[string]any, indexers map[string]F) IndexView {
	view := IndexView{}
	for name, fn := range indexers {
		byValue := map[string][]string{}
		for key, obj := range items {
			vals, err := fn(obj)
			if err != nil {
				continue
			}
			for _, v := range vals {
				if !slices.Contains(byValue[v], key) {
					byValue[v] = append(byValue[v], key)
				}
			}
		}
		for _, keys := range byValue {
			sort.Strings(keys)
		}
		view[name] = byValue
	}
	return view
}

// CheckIndices requires that the indices of idx, whose contents are items, are exactly those
// indexers compute from scratch.
func CheckIndices[F ~func(any) ([]string, error)](t testing.TB, idx Indexed, keyOf func(any) string, items map[string]any, indexers map[string]F) {
	t.Helper()
	names := make([]string, 0, len(indexers))
	for n := range indexers {
		names = append(names, n)
	}
	require.Equal(t, ExpectedView(items, indexers), ViewOf(t, idx, keyOf, names))
}
