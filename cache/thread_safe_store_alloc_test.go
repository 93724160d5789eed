//go:build !race

package cache

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientcache "k8s.io/client-go/tools/cache"
)

// TestThreadSafeStoreAllocations pins the allocation cost of the hot write
// path (an informer updating an existing object): nothing for the
// namespace index, one allocation for the key in front of it.
func TestThreadSafeStoreAllocations(t *testing.T) {
	pods := []interface{}{newPodIn("ns", "a", "1"), newPodIn("ns", "a", "2")}
	idx := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	require.NoError(t, idx.Add(pods[0]))
	ts := NewThreadSafeStore(Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, Indices{})
	ts.Add("ns/a", pods[0])
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		i++
		ts.Update("ns/a", pods[i%2])
	})
	assert.Zero(t, allocs, "ThreadSafeStore.Update of an existing key")
	txns := make([]ThreadSafeStoreTransaction, 4)
	allocs = testing.AllocsPerRun(200, func() {
		i++
		for j := range txns {
			txns[j] = ThreadSafeStoreTransaction{Transaction{pods[(i+j)%2], TransactionTypeUpdate}, "ns/a"}
		}
		ts.(ThreadSafeStoreWithTransaction).Transaction(txns...)
	})
	assert.Zero(t, allocs, "ThreadSafeStore.Transaction of updates of an existing key")
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

// bytesAllocated returns the bytes the heap allocated while fn ran.
func bytesAllocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestStoreAddBytesAgainstClientGo bounds what filling a store costs the
// heap: adding 100,000 objects under new keys into NewStore allocates at
// most 5 % more bytes than client-go's NewStore does (client-go's own
// TestListAll fills a store with a million), and adding them into
// NewIndexer with the namespace index at most 5 % more than client-go's
// indexer. What a store keeps per key beyond the object is paid on every
// write (the map grows by it) and on every List (the map is walked).
func TestStoreAddBytesAgainstClientGo(t *testing.T) {
	objs := namedObjects(100000)
	fill := func(add func(obj interface{}) error) func() {
		return func() {
			for _, o := range objs {
				if err := add(o); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	ks := NewStore(nameKey)
	cs := clientcache.NewStore(nameKey)
	k := bytesAllocated(fill(ks.Add))
	c := bytesAllocated(fill(cs.Add))
	assert.LessOrEqual(t, float64(k), 1.05*float64(c), "bytes allocated by 100,000 Adds into NewStore: kinformer %d, client-go %d", k, c)

	ki := NewIndexer(nameKey, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	ci := clientcache.NewIndexer(nameKey, clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc})
	k = bytesAllocated(fill(ki.Add))
	c = bytesAllocated(fill(ci.Add))
	assert.LessOrEqual(t, float64(k), 1.05*float64(c), "bytes allocated by 100,000 Adds into NewIndexer: kinformer %d, client-go %d", k, c)
}

// TestStoreWriteAllocationsAgainstClientGo pins the heap allocations per
// write of NewStore and NewIndexer (namespace index) at or below
// client-go's: an Update of an existing key, and a Delete followed by an
// Add of the same key.
func TestStoreWriteAllocationsAgainstClientGo(t *testing.T) {
	objs := namedObjects(2)
	type store interface {
		Add(interface{}) error
		Update(interface{}) error
		Delete(interface{}) error
	}
	for _, tc := range []struct {
		name string
		k, c store
	}{
		{"NewStore", NewStore(nameKey), clientcache.NewStore(nameKey)},
		{"NewIndexer", NewIndexer(nameKey, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}),
			clientcache.NewIndexer(nameKey, clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			perWrite := func(s store) (update, deleteAdd float64) {
				for _, o := range objs {
					require.NoError(t, s.Add(o))
				}
				update = testing.AllocsPerRun(200, func() { _ = s.Update(objs[0]) })
				deleteAdd = testing.AllocsPerRun(200, func() {
					_ = s.Delete(objs[1])
					_ = s.Add(objs[1])
				})
				return update, deleteAdd
			}
			kUpdate, kDeleteAdd := perWrite(tc.k)
			cUpdate, cDeleteAdd := perWrite(tc.c)
			assert.LessOrEqual(t, kUpdate, cUpdate, "allocations per Update")
			assert.LessOrEqual(t, kDeleteAdd, cDeleteAdd, "allocations per Delete and Add")
		})
	}
}
