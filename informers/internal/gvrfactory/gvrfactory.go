// Package gvrfactory is the shared engine of the dynamic and metadata
// informer factories: informers keyed by group/version/resource rather than
// by Go type, started, waited for and shut down together.
package gvrfactory

import (
	"context"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache"
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
// tells diagnostics (cache.GetInformerStatus) the resource.
func NewSharedIndexInformer(lw cache.ListerWatcher, exampleObject runtime.Object, gvr schema.GroupVersionResource, options cache.SharedIndexInformerOptions) cache.SharedIndexInformer {
	options.ObjectDescription = gvr.String()
	options.Identifier = (*cache.InformerName)(nil).WithResource(gvr)
	return cache.NewSharedIndexInformerWithOptions(lw, exampleObject, options)
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

// Factory hands out one Informer per resource. All methods are safe for
// concurrent use.
type Factory struct {
	newInformer func(schema.GroupVersionResource) cache.SharedIndexInformer

	mu           sync.Mutex
	informers    map[schema.GroupVersionResource]*Informer
	started      map[schema.GroupVersionResource]bool
	runs         map[schema.GroupVersionResource]*run
	shuttingDown bool
	running      sync.WaitGroup
}

// New returns a Factory that builds the informer of a resource with
// newInformer the first time the resource is asked for.
func New(newInformer func(schema.GroupVersionResource) cache.SharedIndexInformer) *Factory {
	return &Factory{
		newInformer: newInformer,
		informers:   map[schema.GroupVersionResource]*Informer{},
		started:     map[schema.GroupVersionResource]bool{},
		runs:        map[schema.GroupVersionResource]*run{},
	}
}

// ForResource returns the informer of gvr, building it on first use.
func (f *Factory) ForResource(gvr schema.GroupVersionResource) *Informer {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i, ok := f.informers[gvr]; ok {
		return i
	}
	i := NewInformer(f.newInformer(gvr), gvr)
	f.informers[gvr] = i
	return i
}

// StartWithContext runs every informer not yet running, each in a goroutine,
// until ctx is done. It does nothing after Shutdown.
func (f *Factory) StartWithContext(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shuttingDown {
		return
	}
	for gvr, i := range f.informers {
		if f.started[gvr] {
			continue
		}
		f.started[gvr] = true
		f.runs[gvr] = startRun(ctx, &f.running, i.informer)
	}
}

// WaitForCacheSync blocks until every started informer has synced or ctx is
// done, and reports per resource whether it synced.
func (f *Factory) WaitForCacheSync(ctx context.Context) map[schema.GroupVersionResource]bool {
	f.mu.Lock()
	started := make(map[schema.GroupVersionResource]cache.SharedIndexInformer, len(f.started))
	for gvr := range f.started {
		started[gvr] = f.informers[gvr].informer
	}
	f.mu.Unlock()

	checkers := make([]cache.DoneChecker, 0, len(started))
	for _, informer := range started {
		checkers = append(checkers, informer.HasSyncedChecker())
	}
	cache.WaitFor(ctx, "", checkers...)
	res := make(map[schema.GroupVersionResource]bool, len(started))
	for gvr, informer := range started {
		res[gvr] = informer.HasSynced()
	}
	return res
}

// ListInformers returns every informer built so far, ordered by resource;
// it implements cache.InformerSource.
func (f *Factory) ListInformers() []cache.SharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	gvrs := make([]schema.GroupVersionResource, 0, len(f.informers))
	for gvr := range f.informers {
		gvrs = append(gvrs, gvr)
	}
	slices.SortFunc(gvrs, func(a, b schema.GroupVersionResource) int { return strings.Compare(a.String(), b.String()) })
	out := make([]cache.SharedIndexInformer, len(gvrs))
	for i, gvr := range gvrs {
		out[i] = f.informers[gvr].informer
	}
	return out
}

// Shutdown makes later starts no-ops and waits until every goroutine the
// factory started has returned (once its context is done).
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shuttingDown = true
	f.mu.Unlock()
	f.running.Wait()
}
