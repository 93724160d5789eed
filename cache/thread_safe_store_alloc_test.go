//go:build !race

package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestThreadSafeStoreAllocations pins the allocation cost of the hot write
// path (an informer updating an existing object): nothing for the
// namespace index, one allocation for the key in front of it.
func TestThreadSafeStoreAllocations(t *testing.T) {
	pods := []interface{}{stPod("ns", "a", "1"), stPod("ns", "a", "2")}
	idx := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	require.NoError(t, idx.Add(pods[0]))
	ts := idx.(*cache).tsm
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		i++
		ts.Update("ns/a", pods[i%2])
	})
	assert.Zero(t, allocs, "ThreadSafeStore.Update of an existing key")
	allocs = testing.AllocsPerRun(200, func() {
		i++
		_ = idx.Update(pods[i%2])
	})
	assert.LessOrEqual(t, allocs, 1.0, "Indexer.Update of an existing key")
	allocs = testing.AllocsPerRun(200, func() {
		_, _, _ = idx.GetByKey("ns/a")
	})
	assert.Zero(t, allocs, "GetByKey")
}
