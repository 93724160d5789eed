package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	clientcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	kmetadata "github.com/kinformer/kinformer/informers/metadata"
)

// BenchmarkLean is the heap per cached pod of each implementation's most
// frugal configuration, after the sync of a realistic pod population
// (NewPod, managedFields included; 10,000 pods), each side in its own
// child process:
//
//   - typed: kinformer's factory pod informer with informers.WithMemoryLean
//     (k) against client-go's factory pod informer with a
//     managedFields-stripping transform installed by
//     informers.WithTransform (c; client-go's best for typed objects);
//   - metadata: kinformer's metadata factory's informer with
//     WithMemoryLean (k) against client-go's metadatainformer with the
//     same stripping transform (c), both over the pods' metadata
//     (metav1.PartialObjectMetadata).
//
// Both factories' informers are built by the factories (InformerFor,
// ForResource), so that each installs its transform as it does for every
// informer, over an in-memory source that serves the list once. Figure:
// B/pod, the retained heap (HeapPhase: live heap after the sync and two
// forced GCs, above the baseline read before the list was built) per
// cached pod.
func BenchmarkLean(b *testing.B) {
	pods := sizeFor(10000, 10000)
	for _, tc := range []struct{ name, scenario string }{
		{"typed", childLeanTyped},
		{"metadata", childLeanMetadata},
	} {
		b.Run(tc.name+"/"+paramName("pods", pods), func(b *testing.B) {
			samples := figureSamples{}
			for range b.N {
				runPairInChildren(b, childSpec{Scenario: tc.scenario, Pods: pods}, []string{SideKinformer, SideClientGo}, samples)
			}
			samples.report(b)
		})
	}
}

// stripManagedFields is the transform client-go's documentation suggests to
// save memory: it drops metadata.managedFields.
func stripManagedFields(obj interface{}) (interface{}, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// podsGVR is the pods' resource.
var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// leanChild is BenchmarkLean's side in its child process.
func leanChild(s childSpec, _ func() error) (any, error) {
	lw := &listOnceLW{}
	var run func(context.Context)
	var synced func() bool
	var cached func() int
	metadataOnly := s.Scenario == childLeanMetadata
	engine := engineOf(s.Side)
	switch {
	case engine == SideKinformer && !metadataOnly:
		inf := informers.NewSharedInformerFactoryWithOptions(nil, 0, informers.WithMemoryLean()).
			InformerFor(&v1.Pod{}, func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer {
				return cache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
			})
		run, synced, cached = inf.RunWithContext, inf.HasSynced, func() int { return len(inf.GetStore().ListKeys()) }
	case engine == SideClientGo && !metadataOnly:
		inf := clientinformers.NewSharedInformerFactoryWithOptions(nil, 0, clientinformers.WithTransform(stripManagedFields)).
			InformerFor(&v1.Pod{}, func(kubernetes.Interface, time.Duration) clientcache.SharedIndexInformer {
				return clientcache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc})
			})
		run, synced, cached = inf.RunWithContext, inf.HasSynced, func() int { return len(inf.GetStore().ListKeys()) }
	case engine == SideKinformer:
		inf := kmetadata.NewSharedInformerFactoryWithOptions(&memoryMetadataClient{lw: lw}, 0, kmetadata.WithMemoryLean()).
			ForResource(podsGVR).Informer()
		run, synced, cached = inf.RunWithContext, inf.HasSynced, func() int { return len(inf.GetStore().ListKeys()) }
	case engine == SideClientGo:
		inf := metadatainformer.NewSharedInformerFactoryWithOptions(&memoryMetadataClient{lw: lw}, 0, metadatainformer.WithTransform(stripManagedFields)).
			ForResource(podsGVR).Informer()
		run, synced, cached = inf.RunWithContext, inf.HasSynced, func() int { return len(inf.GetStore().ListKeys()) }
	default:
		return nil, fmt.Errorf("unknown side %q", s.Side)
	}

	phase := StartHeapPhase()
	if metadataOnly {
		lw.set(newPodMetadataList(s.Pods))
	} else {
		lw.set(NewPodList(0, s.Pods, "1000"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { run(ctx) })
	defer func() {
		cancel()
		wg.Wait()
	}()
	deadline := time.Now().Add(childTimeout)
	for !synced() {
		if time.Now().After(deadline) {
			return nil, errors.New("the informer did not sync")
		}
		time.Sleep(time.Millisecond) // polling HasSynced, not synchronising
	}
	if n := cached(); n != s.Pods {
		return nil, fmt.Errorf("the cache holds %d pods, want %d", n, s.Pods)
	}
	phase.End()
	retained := phase.Retained()
	return childFigures{"B/pod": retained * bytesPerMiB / float64(s.Pods)}, nil
}

// newPodMetadataList returns the metadata of NewPodList(0, pods, "1000").
func newPodMetadataList(pods int) *metav1.PartialObjectMetadataList {
	full := NewPodList(0, pods, "1000")
	list := &metav1.PartialObjectMetadataList{ListMeta: full.ListMeta, Items: make([]metav1.PartialObjectMetadata, len(full.Items))}
	for i := range full.Items {
		list.Items[i] = metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: full.Items[i].ObjectMeta}
	}
	return list
}

// listOnceLW serves one list once (and drops it, so that the informer's
// cache is all that stays alive), then empty lists; watches stay open and
// silent until stopped. It declares no streaming-list support.
type listOnceLW struct {
	mu   sync.Mutex
	list runtime.Object
}

// set makes list the answer to the next LIST.
func (lw *listOnceLW) set(list runtime.Object) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.list = list
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

// memoryMetadataClient is a metadata.Interface over a listOnceLW that holds
// a PartialObjectMetadataList: LIST and WATCH of any resource and
// namespace are the listOnceLW's; the other requests fail. It declares no
// streaming-list support, so both metadata informers LIST then WATCH.
type memoryMetadataClient struct {
	lw *listOnceLW
}

var errMetadataUnsupported = errors.New("memoryMetadataClient serves LIST and WATCH only")

// IsWatchListSemanticsUnSupported makes both reflectors LIST then WATCH.
func (c *memoryMetadataClient) IsWatchListSemanticsUnSupported() bool { return true }

// Resource returns the client itself, for every resource.
func (c *memoryMetadataClient) Resource(schema.GroupVersionResource) metadata.Getter { return c }

// Namespace returns the client itself, for every namespace.
func (c *memoryMetadataClient) Namespace(string) metadata.ResourceInterface { return c }

// List returns the listOnceLW's list.
func (c *memoryMetadataClient) List(_ context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	obj, err := c.lw.List(opts)
	if err != nil {
		return nil, err
	}
	if l, ok := obj.(*metav1.PartialObjectMetadataList); ok {
		return l, nil
	}
	return &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1000"}}, nil
}

// Watch returns the listOnceLW's silent watch.
func (c *memoryMetadataClient) Watch(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return c.lw.Watch(opts)
}

func (c *memoryMetadataClient) Delete(context.Context, string, metav1.DeleteOptions, ...string) error {
	return errMetadataUnsupported
}

func (c *memoryMetadataClient) DeleteCollection(context.Context, metav1.DeleteOptions, metav1.ListOptions) error {
	return errMetadataUnsupported
}

func (c *memoryMetadataClient) Get(context.Context, string, metav1.GetOptions, ...string) (*metav1.PartialObjectMetadata, error) {
	return nil, errMetadataUnsupported
}

func (c *memoryMetadataClient) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*metav1.PartialObjectMetadata, error) {
	return nil, errMetadataUnsupported
}

// TestLeanSidesCacheEveryPod runs one pair of each BenchmarkLean scenario on
// a few pods: both sides of both sync every pod and report a heap per pod.
func TestLeanSidesCacheEveryPod(t *testing.T) {
	for _, scenario := range []string{childLeanTyped, childLeanMetadata} {
		for _, side := range []string{SideKinformer, SideClientGo} {
			var figs childFigures
			if err := runChild(childSpec{Scenario: scenario, Side: side, Pods: 300}, nil, nil, &figs); err != nil {
				t.Fatal(err)
			}
			if figs["B/pod"] <= 0 {
				t.Errorf("%s/%s: B/pod %v", scenario, side, figs["B/pod"])
			}
		}
	}
}
