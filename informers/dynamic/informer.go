// Package dynamicinformer provides shared informers over client-go's dynamic
// client: informers for any resource, chosen by group/version/resource at run
// time, whose objects are *unstructured.Unstructured.
//
// It mirrors k8s.io/client-go/dynamic/dynamicinformer v0.37.2 and keeps its
// package name, so code moves over by changing the import path only.
package dynamicinformer

import (
	"context"
	"github.com/kinformer/kinformer/internal/unstructuredjson"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/informers/internal/build"
	"github.com/kinformer/kinformer/informers/internal/gvrfactory"
)

// TweakListOptionsFunc edits the options of every LIST and WATCH request of
// an informer, typically to set a label or field selector.
type TweakListOptionsFunc func(*metav1.ListOptions)

// DynamicSharedInformerFactory hands out one shared informer per
// group/version/resource over a dynamic client, and starts, waits for and
// stops them together. All methods are safe for concurrent use.
type DynamicSharedInformerFactory interface {
	// Start runs, each in its own goroutine, every informer requested so
	// far that is not running yet, until stopCh is closed. It does not
	// block; after Shutdown it does nothing.
	Start(stopCh <-chan struct{})
	// ForResource returns the shared informer of gvr, creating it on first
	// use. Its lister returns *unstructured.Unstructured objects.
	ForResource(gvr schema.GroupVersionResource) informers.GenericInformer
	// WaitForCacheSync blocks until every started informer has synced or
	// stopCh is closed, and reports per resource whether it synced.
	WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool
	// Shutdown makes later Start calls do nothing and blocks until every
	// goroutine the factory started has returned, which happens once their
	// stop channel is closed. It may be called repeatedly and concurrently.
	Shutdown()
}

// dynamicSharedInformerFactory implements DynamicSharedInformerFactory over
// the factory the dynamic and metadata packages share. Its configuration is
// fixed once the constructor returns.
type dynamicSharedInformerFactory struct {
	*gvrfactory.Factory
}

// NewDynamicSharedInformerFactory returns a factory over client for all
// namespaces; defaultResync is every informer's resync period (zero: none).
func NewDynamicSharedInformerFactory(client dynamic.Interface, defaultResync time.Duration) DynamicSharedInformerFactory {
	return NewDynamicSharedInformerFactoryWithOptions(client, defaultResync)
}

// NewFilteredDynamicSharedInformerFactory returns a factory over client whose
// informers watch namespace only (all if empty; cluster-scoped resources
// ignore it) and pass their requests through tweakListOptions (may be nil).
func NewFilteredDynamicSharedInformerFactory(client dynamic.Interface, defaultResync time.Duration, namespace string, tweakListOptions TweakListOptionsFunc) DynamicSharedInformerFactory {
	return NewDynamicSharedInformerFactoryWithOptions(client, defaultResync, WithNamespace(namespace), WithTweakListOptions(tweakListOptions))
}

// NewDynamicSharedInformerFactoryWithOptions returns a factory over client
// for all namespaces, configured by options (nil options are ignored);
// defaultResync is every informer's resync period (zero: none). kinformer
// extension, not in client-go: it is how a dynamic factory gets kinformer's
// options (WithSnapshotDir and the others).
func NewDynamicSharedInformerFactoryWithOptions(client dynamic.Interface, defaultResync time.Duration, options ...DynamicSharedInformerOption) DynamicSharedInformerFactory {
	f := &dynamicSharedInformerFactory{Factory: gvrfactory.New(clientOf(client), defaultResync)}
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

// NewFilteredDynamicInformer returns a new, unshared informer for gvr over
// client, restricted to namespace (all if empty), with tweakListOptions (may
// be nil) applied to every request. Prefer a factory's shared informer.
func NewFilteredDynamicInformer(client dynamic.Interface, gvr schema.GroupVersionResource, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, tweakListOptions TweakListOptionsFunc) informers.GenericInformer {
	return gvrfactory.NewFilteredInformer(clientOf(client), gvr, namespace, resyncPeriod, indexers, tweakListOptions)
}

// clientOf describes client to the shared factory: informers of
// *unstructured.Unstructured, listed and watched through client (a nil
// client makes every request fail), and projected through a dynamic client
// of the projection's config.
func clientOf(client dynamic.Interface) gvrfactory.Client {
	c := gvrfactory.Client{
		NewObject: func() runtime.Object { return &unstructured.Unstructured{} },
		ListAndWatch: func(gvr schema.GroupVersionResource, namespace string) (build.ListFunc, build.WatchFunc) {
			return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
					return client.Resource(gvr).Namespace(namespace).List(ctx, opts)
				}, func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
					return client.Resource(gvr).Namespace(namespace).Watch(ctx, opts)
				}
		},
		ForConfig: func(config *rest.Config) (gvrfactory.Client, error) {
			projecting, err := dynamic.NewForConfig(config)
			if err != nil {
				return gvrfactory.Client{}, err
			}
			return clientOf(projecting), nil
		},
		Decoding: decodingClientOf,
	}
	if client != nil {
		c.Client = client
		c.Cluster = gvrfactory.KubeSystemUID(client.Resource(gvrfactory.NamespacesGVR).Get)
	}
	return c
}

// decodingClientOf describes a client of config listing and watching as the
// dynamic client does, decoding JSON with kinformer's unstructured decoder
// (unstructuredjson.Client).
func decodingClientOf(config *rest.Config) (gvrfactory.Client, error) {
	c, err := unstructuredjson.NewClient(config)
	if err != nil {
		return gvrfactory.Client{}, err
	}
	return gvrfactory.Client{
		Client:    c,
		NewObject: func() runtime.Object { return &unstructured.Unstructured{} },
		ListAndWatch: func(gvr schema.GroupVersionResource, namespace string) (build.ListFunc, build.WatchFunc) {
			return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
					return c.List(ctx, gvr, namespace, opts)
				}, func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
					return c.Watch(ctx, gvr, namespace, opts)
				}
		},
	}, nil
}

var _ informers.ResourceReleaser = &dynamicSharedInformerFactory{}
