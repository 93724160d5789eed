package gvrfactory

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers/internal/factoryengine"
)

// Informer is one resource's shared informer with an untyped lister; it
// implements informers.GenericInformer.
type Informer struct {
	informer cache.SharedIndexInformer
	resource schema.GroupResource
}

// NewSharedIndexInformer returns the shared informer the dynamic and metadata
// packages build for gvr: objects like exampleObject listed and watched through
// lw, configured by options (resync period, indexers, snapshot file and scope),
// described and identified by gvr (options' ObjectDescription and Identifier
// are replaced). The identity is unnamed, so it publishes no metrics, but it
// tells diagnostics (cache.GetInformerStatus) the resource. A membership
// with a Member makes it a *sharding.Informer over the ranges the member
// holds (see factoryengine.NewInformer).
func NewSharedIndexInformer(lw cache.ListerWatcher, exampleObject runtime.Object, gvr schema.GroupVersionResource, options cache.SharedIndexInformerOptions, membership factoryengine.Membership) cache.SharedIndexInformer {
	options.ObjectDescription = gvr.String()
	options.Identifier = (*cache.InformerName)(nil).WithResource(gvr)
	return factoryengine.NewInformer(lw, exampleObject, options, membership)
}

// NewInformer pairs informer with the resource its lister names in NotFound
// errors.
func NewInformer(informer cache.SharedIndexInformer, gvr schema.GroupVersionResource) *Informer {
	return &Informer{informer: informer, resource: gvr.GroupResource()}
}

// Informer returns the shared informer.
func (i *Informer) Informer() cache.SharedIndexInformer {
	return i.informer
}

// Lister returns an untyped lister over the informer's cache; its Get
// returns a NotFound error naming the resource for a missing object.
func (i *Informer) Lister() cache.GenericLister {
	return cache.NewGenericLister(i.informer.GetIndexer(), i.resource)
}
