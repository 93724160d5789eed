package cache

import (
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	clientcache "k8s.io/client-go/tools/cache"
)

func stBenchPods(n int) []interface{} {
	out := make([]interface{}, n)
	for i := range out {
		out[i] = stPod("ns"+strconv.Itoa(i%50), "p"+strconv.Itoa(i), strconv.Itoa(i+1), "app", "a"+strconv.Itoa(i%7))
	}
	return out
}

// BenchmarkStoreUpdate measures updating existing objects in an indexer with
// a namespace index, ours against client-go's.
func BenchmarkStoreUpdate(b *testing.B) {
	pods := stBenchPods(10000)
	b.Run("kinformer", func(b *testing.B) {
		idx := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
		_ = idx.Replace(append([]interface{}(nil), pods...), "1")
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			_ = idx.Update(pods[i%len(pods)])
		}
	})
	b.Run("client-go", func(b *testing.B) {
		idx := clientcache.NewIndexer(clientcache.DeletionHandlingMetaNamespaceKeyFunc, clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc})
		_ = idx.Replace(append([]interface{}(nil), pods...), "1")
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			_ = idx.Update(pods[i%len(pods)])
		}
	})
}

// BenchmarkStoreReplace measures an initial sync of 10000 objects into an
// indexer with a namespace and a label index.
func BenchmarkStoreReplace(b *testing.B) {
	pods := stBenchPods(10000)
	app := func(obj interface{}) ([]string, error) { return []string{obj.(*v1.Pod).Labels["app"]}, nil }
	b.Run("kinformer", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			idx := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "app": app})
			_ = idx.Replace(append([]interface{}(nil), pods...), "1")
		}
	})
	b.Run("client-go", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			idx := clientcache.NewIndexer(clientcache.DeletionHandlingMetaNamespaceKeyFunc, clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc, "app": app})
			_ = idx.Replace(append([]interface{}(nil), pods...), "1")
		}
	})
}

// BenchmarkStoreTransaction measures applying batches of 32 updates.
func BenchmarkStoreTransaction(b *testing.B) {
	pods := stBenchPods(10000)
	b.Run("kinformer", func(b *testing.B) {
		idx := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
		_ = idx.Replace(append([]interface{}(nil), pods...), "1")
		ts := idx.(TransactionStore)
		txns := make([]Transaction, 32)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for j := range txns {
				txns[j] = Transaction{Object: pods[(i*32+j)%len(pods)], Type: TransactionTypeUpdate}
			}
			_ = ts.Transaction(txns...)
		}
	})
	b.Run("client-go", func(b *testing.B) {
		idx := clientcache.NewIndexer(clientcache.DeletionHandlingMetaNamespaceKeyFunc, clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc})
		_ = idx.Replace(append([]interface{}(nil), pods...), "1")
		ts := idx.(clientcache.TransactionStore)
		txns := make([]clientcache.Transaction, 32)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for j := range txns {
				txns[j] = clientcache.Transaction{Object: pods[(i*32+j)%len(pods)], Type: clientcache.TransactionTypeUpdate}
			}
			_ = ts.Transaction(txns...)
		}
	})
}
