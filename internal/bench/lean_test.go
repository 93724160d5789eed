package bench

import (
	"context"
	goruntime "runtime"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	clientcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
)

// BenchmarkLean is the memory-lean scenario: the heap per cached pod after
// the sync of a realistic pod population (bench.NewPod, managedFields
// included) and two GCs, for
//
//   - kinformer's factory pod informer with informers.WithMemoryLean
//     (figure "B/pod"), the informer built by the factory's InformerFor
//     over the in-memory ListerWatcher, so that the factory installs its
//     transform as it does for every informer;
//   - kinformer's metadata-only informer with metadatainformer.WithMemoryLean
//     (figure "meta-B/pod"), fed the same pods' metadata;
//
// each against client-go's default typed informer over the same pods (the
// client-go column of both figures is the same run). The heap is above the
// heap before the list was built, so it includes the cached objects, as
// decoded objects would be.
func BenchmarkLean(b *testing.B) {
	pods := sizeFor(10000, 10000)
	b.Run(paramName("pods", pods), func(b *testing.B) {
		samples := figureSamples{}
		for range b.N {
			for _, side := range orderedSides() {
				switch side.id {
				case SideKinformer:
					samples.add(side.id, "B/pod", heapPerPod(b, pods, leanTypedInformer))
					samples.add(side.id, "meta-B/pod", heapPerPod(b, pods, leanMetadataInformer))
				case SideClientGo:
					v := heapPerPod(b, pods, clientGoTypedInformer)
					samples.add(side.id, "B/pod", v)
					samples.add(side.id, "meta-B/pod", v)
				}
			}
		}
		samples.report(b)
	})
}

// leanInformerBuild builds an informer over lw (which serves pods, or their
// metadata when the informer asks for metav1.PartialObjectMetadata).
type leanInformerBuild func(pods int) (run func(context.Context), synced func() bool, keep any)

// leanTypedInformer is kinformer's factory pod informer with WithMemoryLean.
func leanTypedInformer(pods int) (func(context.Context), func() bool, any) {
	lw := &listOnceLW{list: NewPodList(0, pods, "1000")}
	factory := informers.NewSharedInformerFactoryWithOptions(nil, 0, informers.WithMemoryLean())
	inf := factory.InformerFor(&v1.Pod{}, func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer {
		return cache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	})
	return inf.RunWithContext, inf.HasSynced, inf
}

// leanMetadataInformer is kinformer's metadata-only informer over the pods'
// metadata with the memory-lean transform. A metadata factory needs a
// metadata client, so the informer is requested from a typed factory with
// WithMemoryLean by its Go type: the factory installs the same lean
// transform (lean.Compose) the metadata factory's WithMemoryLean does.
func leanMetadataInformer(pods int) (func(context.Context), func() bool, any) {
	full := NewPodList(0, pods, "1000")
	list := &metav1.PartialObjectMetadataList{ListMeta: full.ListMeta, Items: make([]metav1.PartialObjectMetadata, len(full.Items))}
	for i := range full.Items {
		list.Items[i] = metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: full.Items[i].ObjectMeta}
	}
	lw := &listOnceLW{list: list}
	factory := informers.NewSharedInformerFactoryWithOptions(nil, 0, informers.WithMemoryLean())
	inf := factory.InformerFor(&metav1.PartialObjectMetadata{}, func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer {
		return cache.NewSharedIndexInformer(lw, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	})
	return inf.RunWithContext, inf.HasSynced, inf
}

// clientGoTypedInformer is client-go's default typed informer.
func clientGoTypedInformer(pods int) (func(context.Context), func() bool, any) {
	lw := &listOnceLW{list: NewPodList(0, pods, "1000")}
	inf := clientcache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc})
	return inf.RunWithContext, inf.HasSynced, inf
}

// heapPerPod builds the list and the informer, syncs it and returns
// the settled heap per pod above the heap before the list was built.
func heapPerPod(b *testing.B, pods int, build leanInformerBuild) float64 {
	base := SettledHeap()
	run, synced, keep := build(pods)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { run(ctx) })
	defer func() {
		cancel()
		wg.Wait()
	}()
	deadline := time.Now().Add(waitTimeout)
	for !synced() {
		if time.Now().After(deadline) {
			b.Fatal("informer did not sync")
		}
		time.Sleep(time.Millisecond) // polling HasSynced, not synchronising
	}
	settled := SettledHeap()
	goruntime.KeepAlive(keep)
	if settled < base {
		return 0
	}
	return float64(settled-base) / float64(pods)
}

// listOnceLW serves one list once (and drops it, so that the informer's
// cache is all that stays alive), then empty lists; watches stay open and
// silent until stopped. It declares no streaming-list support.
type listOnceLW struct {
	mu   sync.Mutex
	list runtime.Object
}

// IsWatchListSemanticsUnSupported makes both reflectors LIST then WATCH.
func (lw *listOnceLW) IsWatchListSemanticsUnSupported() bool { return true }

// List returns the list the first time, an empty pod list afterwards.
func (lw *listOnceLW) List(metav1.ListOptions) (runtime.Object, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	l := lw.list
	lw.list = nil
	if l == nil {
		return &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1000"}}, nil
	}
	return l, nil
}

// Watch returns a silent watch.
func (lw *listOnceLW) Watch(metav1.ListOptions) (watch.Interface, error) {
	return watch.NewFake(), nil
}
