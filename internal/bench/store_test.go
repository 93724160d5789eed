package bench

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
)

// storeNamespaces is how many namespaces BenchmarkStore's objects are
// spread over (the values of the namespace index).
const storeNamespaces = 50

// storeListsPerRound is how many times a round of BenchmarkStore lists the
// store (and, for the indexer, reads every namespace by ByIndex).
const storeListsPerRound = 5

// BenchmarkStore is a store used directly, as controllers and unit tests
// use one: NewStore (kind store) and NewIndexer with the namespace index
// (kind indexer), both with MetaNamespaceKeyFunc, kinformer's against
// client-go's, in one process. Each op measures one pair, sides in an order
// that alternates from op to op, each phase after a forced GC (so that no
// phase pays for the garbage of another, or of the other side). A side runs rounds
// of: Add every object under a new key into an empty store, Update every
// object, List the store storeListsPerRound times, (indexer) ByIndex every
// namespace storeListsPerRound times (each pass returns every object once),
// Delete every object. Objects: metav1.PartialObjectMetadata with a name, a
// namespace (of storeNamespaces) and a resourceVersion, built once and
// shared by both sides. Sizes: 10,000 and 1,000,000 objects with
// KINFORMER_BENCH_FULL=1, 10,000 and 100,000 otherwise; at 10,000 a side
// runs 20 rounds, otherwise one. Figures: add-ms, update-ms, list-ms,
// byindex-ms (indexer) and delete-ms, the time of each phase summed over
// the rounds.
func BenchmarkStore(b *testing.B) {
	for _, kind := range []string{"store", "indexer"} {
		for _, n := range sizesFor([]int{10000, 100000}, []int{10000, 1000000}) {
			b.Run(kind+"/"+paramName("objects", n), func(b *testing.B) {
				objs := storeBenchObjects(n)
				rounds := 1
				if n <= 10000 {
					rounds = 20
				}
				samples := figureSamples{}
				for range b.N {
					for _, side := range sideOrder(SideKinformer, SideClientGo) {
						if err := runStoreSide(side, kind, objs, rounds, samples); err != nil {
							b.Fatal(err)
						}
					}
				}
				samples.report(b)
			})
		}
	}
}

// storeBenchObjects returns BenchmarkStore's n objects.
func storeBenchObjects(n int) []interface{} {
	out := make([]interface{}, n)
	for i := range out {
		out[i] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace:       "ns-" + strconv.Itoa(i%storeNamespaces),
			Name:            "obj-" + strconv.Itoa(i),
			ResourceVersion: strconv.Itoa(i + 1),
		}}
	}
	return out
}

// storeUnderTest is the part of a Store and an Indexer BenchmarkStore uses;
// kinformer's and client-go's both have it.
type storeUnderTest interface {
	Add(obj interface{}) error
	Update(obj interface{}) error
	Delete(obj interface{}) error
	List() []interface{}
}

// newStoreUnderTest returns side's store of kind and, for an indexer, its
// ByIndex.
func newStoreUnderTest(side, kind string) (storeUnderTest, func(index, value string) ([]interface{}, error), error) {
	engine := engineOf(side)
	switch {
	case engine == SideKinformer && kind == "store":
		return cache.NewStore(cache.MetaNamespaceKeyFunc), nil, nil
	case engine == SideClientGo && kind == "store":
		return clientcache.NewStore(clientcache.MetaNamespaceKeyFunc), nil, nil
	case engine == SideKinformer && kind == "indexer":
		idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		return idx, idx.ByIndex, nil
	case engine == SideClientGo && kind == "indexer":
		idx := clientcache.NewIndexer(clientcache.MetaNamespaceKeyFunc, clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc})
		return idx, idx.ByIndex, nil
	}
	return nil, nil, fmt.Errorf("unknown side %q or store kind %q", side, kind)
}

// runStoreSide runs BenchmarkStore's rounds on side's store of kind and
// adds its figures to samples. It fails when a write fails or a read
// returns another number of objects than stored.
func runStoreSide(side, kind string, objs []interface{}, rounds int, samples figureSamples) error {
	var addT, updateT, listT, byIndexT, deleteT time.Duration
	for range rounds {
		s, byIndex, err := newStoreUnderTest(side, kind)
		if err != nil {
			return err
		}
		write := func(what string, op func(interface{}) error) (time.Duration, error) {
			runtime.GC()
			start := time.Now()
			for _, o := range objs {
				if err := op(o); err != nil {
					return 0, fmt.Errorf("%s: %s: %w", side, what, err)
				}
			}
			return time.Since(start), nil
		}
		d, err := write("Add", s.Add)
		if err != nil {
			return err
		}
		addT += d
		if d, err = write("Update", s.Update); err != nil {
			return err
		}
		updateT += d

		runtime.GC()
		start := time.Now()
		for range storeListsPerRound {
			if got := len(s.List()); got != len(objs) {
				return fmt.Errorf("%s: List returned %d objects, want %d", side, got, len(objs))
			}
		}
		listT += time.Since(start)

		if byIndex != nil {
			runtime.GC()
			start = time.Now()
			for range storeListsPerRound {
				got := 0
				for ns := range storeNamespaces {
					items, err := byIndex(cache.NamespaceIndex, "ns-"+strconv.Itoa(ns))
					if err != nil {
						return fmt.Errorf("%s: ByIndex: %w", side, err)
					}
					got += len(items)
				}
				if got != len(objs) {
					return fmt.Errorf("%s: ByIndex returned %d objects over all namespaces, want %d", side, got, len(objs))
				}
			}
			byIndexT += time.Since(start)
		}

		if d, err = write("Delete", s.Delete); err != nil {
			return err
		}
		deleteT += d
		if got := len(s.List()); got != 0 {
			return fmt.Errorf("%s: %d objects left after deleting all", side, got)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	samples.add(side, "add-ms", ms(addT))
	samples.add(side, "update-ms", ms(updateT))
	samples.add(side, "list-ms", ms(listT))
	if kind == "indexer" {
		samples.add(side, "byindex-ms", ms(byIndexT))
	}
	samples.add(side, "delete-ms", ms(deleteT))
	return nil
}
