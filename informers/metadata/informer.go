// Package metadatainformer provides shared informers over client-go's
// metadata client: informers for any resource, chosen by
// group/version/resource at run time, that cache only each object's
// metadata (*metav1.PartialObjectMetadata). They are the low-memory choice
// when a controller needs names, labels, owners or finalizers but not specs.
//
// It mirrors k8s.io/client-go/metadata/metadatainformer v0.37.2 and keeps its
// package name, so code moves over by changing the import path only.
package metadatainformer

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/informers/internal/build"
	"github.com/kinformer/kinformer/informers/internal/gvrfactory"
)

// TweakListOptionsFunc edits the options of every LIST and WATCH request of
// an informer, typically to set a label or field selector.
type TweakListOptionsFunc func(*metav1.ListOptions)

// SharedInformerFactory hands out one shared metadata informer per
// group/version/resource, and starts, waits for and stops them together. All
// methods are safe for concurrent use.
type SharedInformerFactory interface {
	// Start runs, each in its own goroutine, every informer requested so
	// far that is not running yet, until stopCh is closed. It does not
	// block; after Shutdown it does nothing.
	Start(stopCh <-chan struct{})
	// ForResource returns the shared informer of gvr, creating it on first
	// use. Its lister returns *metav1.PartialObjectMetadata objects.
	ForResource(gvr schema.GroupVersionResource) informers.GenericInformer
	// WaitForCacheSync blocks until every started informer has synced or
	// stopCh is closed, and reports per resource whether it synced.
	WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool
	// Shutdown makes later Start calls do nothing and blocks until every
	// goroutine the factory started has returned, which happens once their
	// stop channel is closed. It may be called repeatedly and concurrently.
	Shutdown()
}

// metadataSharedInformerFactory implements SharedInformerFactory over the
// factory the dynamic and metadata packages share. Its configuration is
// fixed once the constructor returns.
type metadataSharedInformerFactory struct {
	*gvrfactory.Factory
}

// NewSharedInformerFactory returns a factory over client for all namespaces;
// defaultResync is every informer's resync period (zero: none).
func NewSharedInformerFactory(client metadata.Interface, defaultResync time.Duration) SharedInformerFactory {
	return NewSharedInformerFactoryWithOptions(client, defaultResync)
}

// NewFilteredSharedInformerFactory returns a factory over client whose
// informers watch namespace only (all if empty; cluster-scoped resources
// ignore it) and pass their requests through tweakListOptions (may be nil).
func NewFilteredSharedInformerFactory(client metadata.Interface, defaultResync time.Duration, namespace string, tweakListOptions TweakListOptionsFunc) SharedInformerFactory {
	return NewSharedInformerFactoryWithOptions(client, defaultResync, WithNamespace(namespace), WithTweakListOptions(tweakListOptions))
}

// NewSharedInformerFactoryWithOptions returns a factory over client for all
// namespaces, configured by options (nil options are ignored).
func NewSharedInformerFactoryWithOptions(client metadata.Interface, defaultResync time.Duration, options ...SharedInformerOption) SharedInformerFactory {
	f := &metadataSharedInformerFactory{Factory: gvrfactory.New(clientOf(client), defaultResync)}
	for _, opt := range options {
		if opt == nil {
			continue
		}
		if next := opt(f); next != nil {
			f = next
		}
	}
	f.Init()
	return f
}

// NewFilteredMetadataInformer returns a new, unshared metadata informer for
// gvr over client, restricted to namespace (all if empty), with
// tweakListOptions (may be nil) applied to every request. Prefer a factory's
// shared informer.
func NewFilteredMetadataInformer(client metadata.Interface, gvr schema.GroupVersionResource, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, tweakListOptions TweakListOptionsFunc) informers.GenericInformer {
	return gvrfactory.NewFilteredInformer(clientOf(client), gvr, namespace, resyncPeriod, indexers, tweakListOptions)
}

// clientOf describes client to the shared factory: informers of
// *metav1.PartialObjectMetadata, listed and watched through client (a nil
// client makes every request fail), with snapshot files of their own
// ("metadata" in their names).
func clientOf(client metadata.Interface) gvrfactory.Client {
	c := gvrfactory.Client{
		NewObject: func() runtime.Object { return &metav1.PartialObjectMetadata{} },
		ListAndWatch: func(gvr schema.GroupVersionResource, namespace string) (build.ListFunc, build.WatchFunc) {
			return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
					return client.Resource(gvr).Namespace(namespace).List(ctx, opts)
				}, func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
					return client.Resource(gvr).Namespace(namespace).Watch(ctx, opts)
				}
		},
		SnapshotVariant: "metadata",
	}
	if client != nil {
		c.Client = client
		c.Cluster = gvrfactory.KubeSystemUID(client.Resource(gvrfactory.NamespacesGVR).Get)
	}
	return c
}

var _ informers.ResourceReleaser = &metadataSharedInformerFactory{}
