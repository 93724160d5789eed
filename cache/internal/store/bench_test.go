package store

import (
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	clientcache "k8s.io/client-go/tools/cache"
)

// benchPods returns n pods in 50 namespaces with 7 values of label app,
// and their keys.
func benchPods(n int) ([]string, []any) {
	keys := make([]string, n)
	objs := make([]any, n)
	for i := range objs {
		objs[i] = testPod("ns"+strconv.Itoa(i%50), "p"+strconv.Itoa(i), strconv.Itoa(i+1), "app", "a"+strconv.Itoa(i%7))
		keys[i] = testKey(objs[i])
	}
	return keys, objs
}

// benchMap returns the engine as an informer's indexer has it: the
// namespace index computed inline, and more when given.
func benchMap(more map[string]IndexFunc) *Map {
	indexers := map[string]IndexFunc{"namespace": testNamespaceIndex}
	for name, fn := range more {
		indexers[name] = fn
	}
	return newTestMap(indexers, false)
}

// benchMapOf returns keys and objs as the map a ThreadSafeStore replaces
// its content with.
func benchMapOf(keys []string, objs []any) map[string]any {
	out := make(map[string]any, len(keys))
	for i, k := range keys {
		out[k] = objs[i]
	}
	return out
}

// benchAppIndex indexes pods by their "app" label.
func benchAppIndex(obj any) ([]string, error) { return []string{obj.(*v1.Pod).Labels["app"]}, nil }

// BenchmarkMapUpdate measures updating existing objects in a store with a
// namespace index, the engine's Put against client-go's ThreadSafeStore
// Update (the key given to both).
func BenchmarkMapUpdate(b *testing.B) {
	keys, pods := benchPods(10000)
	b.Run("kinformer", func(b *testing.B) {
		m := benchMap(nil)
		_ = m.Replace(keys, pods, "1")
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			j := i % len(pods)
			_, _, _ = m.Put(keys[j], pods[j])
		}
	})
	b.Run("client-go", func(b *testing.B) {
		ts := clientcache.NewThreadSafeStore(clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc}, clientcache.Indices{})
		ts.Replace(benchMapOf(keys, pods), "1")
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			j := i % len(pods)
			ts.Update(keys[j], pods[j])
		}
	})
}

// BenchmarkMapReplace measures an initial sync of 10000 objects into a
// store with a namespace and a label index, from the map client-go's
// ThreadSafeStore takes.
func BenchmarkMapReplace(b *testing.B) {
	keys, pods := benchPods(10000)
	b.Run("kinformer", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			m := benchMap(map[string]IndexFunc{"app": benchAppIndex})
			_ = m.ReplaceMap(benchMapOf(keys, pods), "1")
		}
	})
	b.Run("client-go", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			ts := clientcache.NewThreadSafeStore(clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc, "app": benchAppIndex}, clientcache.Indices{})
			ts.Replace(benchMapOf(keys, pods), "1")
		}
	})
}

// BenchmarkMapTransaction measures applying batches of 32 updates.
func BenchmarkMapTransaction(b *testing.B) {
	keys, pods := benchPods(10000)
	b.Run("kinformer", func(b *testing.B) {
		m := benchMap(nil)
		_ = m.Replace(keys, pods, "1")
		writes := make([]Write, 32)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for j := range writes {
				k := (i*32 + j) % len(pods)
				writes[j] = Write{Op: OpUpdate, Key: keys[k], Object: pods[k]}
			}
			_ = m.Transaction(writes, nil)
		}
	})
	b.Run("client-go", func(b *testing.B) {
		ts := clientcache.NewThreadSafeStore(clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc}, clientcache.Indices{}).(clientcache.ThreadSafeStoreWithTransaction)
		ts.Replace(benchMapOf(keys, pods), "1")
		txns := make([]clientcache.ThreadSafeStoreTransaction, 32)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for j := range txns {
				k := (i*32 + j) % len(pods)
				txns[j] = clientcache.ThreadSafeStoreTransaction{Transaction: clientcache.Transaction{Object: pods[k], Type: clientcache.TransactionTypeUpdate}, Key: keys[k]}
			}
			ts.Transaction(txns...)
		}
	})
}
