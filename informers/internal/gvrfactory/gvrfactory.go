package gvrfactory

import (
	"context"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/informers/internal/build"
	"github.com/kinformer/kinformer/informers/internal/factoryengine"
)

// Options is the options value of a factory keyed by resource.
type Options = factoryengine.Options[schema.GroupVersionResource]

// Client is what sets the dynamic factory apart from the metadata one: how
// it lists and watches a resource, the objects it gets, and how its
// snapshot files are named.
type Client struct {
	// Client is the client as the user gave it, or nil (not a typed nil)
	// when none was given: the informers of a nil client fail every
	// request instead of reaching ListAndWatch.
	Client any
	// NewObject returns an empty object of the kind the informers hold
	// (*unstructured.Unstructured, *metav1.PartialObjectMetadata).
	NewObject func() runtime.Object
	// ListAndWatch returns the LIST and the WATCH of gvr in namespace
	// through Client.
	ListAndWatch func(gvr schema.GroupVersionResource, namespace string) (build.ListFunc, build.WatchFunc)
	// ForConfig returns the Client of a new client built from config (a
	// client whose transport projects, for WithProjection); nil when the
	// factory offers no projection.
	ForConfig func(config *rest.Config) (Client, error)
	// Decoding returns the Client of a client built from config that
	// decodes with kinformer's decoder (for the dynamic factory's
	// WithRESTConfig); nil when the factory offers none.
	Decoding func(config *rest.Config) (Client, error)
	// Cluster reads the identity of the cluster, to tie the snapshot files
	// to; nil when there is no client.
	Cluster *ClusterIdentity
	// SnapshotVariant tells the factory's snapshot files apart from those
	// of the other factory in a shared directory (see SnapshotFileName).
	SnapshotVariant string
}

// Factory hands out one Informer per resource over a Client. All methods
// are safe for concurrent use once Init returned; the options are set
// before.
type Factory struct {
	// Options holds what the factory's options set; Init defaults it.
	Options Options

	client        Client
	defaultResync time.Duration
	// decoding is the client of Options.RESTConfig (client.Decoding), and
	// decodingErr why it could not be built.
	decoding    *Client
	decodingErr error
	snapshots   factoryengine.Snapshots[schema.GroupVersionResource]
	engine      *factoryengine.Engine[schema.GroupVersionResource, *Informer]
}

// New returns a Factory over client whose informers resync every
// defaultResync (zero: never). Set its Options, then call Init once before
// any other method.
func New(client Client, defaultResync time.Duration) *Factory {
	return &Factory{client: client, defaultResync: defaultResync}
}

// Init defaults the factory's options and readies it for use.
func (f *Factory) Init() {
	f.Options.Default()
	f.snapshots = factoryengine.Snapshots[schema.GroupVersionResource]{
		Name:            resourceName,
		FileName:        func(gvr schema.GroupVersionResource) string { return SnapshotFileName(gvr, f.client.SnapshotVariant) },
		AlwaysSensitive: cache.IsSensitiveResource,
		Cluster:         f.client.Cluster.get,
	}
	f.engine = factoryengine.New(resourceName, (*Informer).Informer)
	if f.Options.RESTConfig != nil && f.client.Decoding != nil {
		c, err := f.client.Decoding(f.Options.RESTConfig)
		if err != nil {
			f.decodingErr = err
		} else {
			f.decoding = &c
		}
	}
}

// resourceName names a resource in errors and orders ListInformers.
func resourceName(gvr schema.GroupVersionResource) string { return gvr.String() }

// ForResource returns the informer of gvr, building it on first use.
func (f *Factory) ForResource(gvr schema.GroupVersionResource) informers.GenericInformer {
	i, _ := f.engine.Get(gvr, func() (*Informer, bool) { return f.build(gvr), true })
	return i
}

// build makes the informer of one resource with the factory's settings.
func (f *Factory) build(gvr schema.GroupVersionResource) *Informer {
	options := f.Options.InformerOptions(cache.SharedIndexInformerOptions{
		ResyncPeriod: f.Options.ResyncPeriod(gvr, f.defaultResync),
		Indexers:     cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
	}, gvr, &f.snapshots)
	namespace, tweak := f.Options.Namespace, f.Options.TweakListOptions
	sel := selection{namespace: namespace, tweak: tweak, membership: f.Options.Membership}
	var informer cache.SharedIndexInformer
	if proj, ok := f.Options.Projections[gvr]; ok {
		options = build.ProjectedOptions(options, proj.Projection)
		informer = newProjectedInformer(f.client, proj, gvr, sel, options)
	} else if f.Options.RESTConfig != nil && f.client.Decoding != nil && !f.Options.APIMachineryDecoding[gvr] {
		if f.decodingErr != nil {
			informer = informerOf(f.client, gvr, sel, options, build.FailingList(f.decodingErr), build.FailingWatch(f.decodingErr))
		} else {
			informer = newInformer(*f.decoding, gvr, sel, options)
		}
	} else {
		informer = newInformer(f.client, gvr, sel, options)
	}
	if transform := f.Options.InformerTransform(); transform != nil {
		// The informer is new and not running, so this cannot fail.
		_ = informer.SetTransform(transform)
	}
	return NewInformer(informer, gvr)
}

// Start runs the requested informers not yet running until stopCh is
// closed; it does nothing after Shutdown.
func (f *Factory) Start(stopCh <-chan struct{}) {
	f.engine.StartWithContext(wait.ContextForChannel(stopCh))
}

// StartWithContext runs the requested informers not yet running until ctx
// is done; it does nothing after Shutdown.
func (f *Factory) StartWithContext(ctx context.Context) {
	f.engine.StartWithContext(ctx)
}

// WaitForCacheSync blocks until every started informer has synced or
// stopCh is closed (or, with WithSyncOptions' FailFast, one has failed for
// good), and reports per resource whether it synced.
func (f *Factory) WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool {
	synced, _ := f.engine.WaitForCacheSync(wait.ContextForChannel(stopCh), f.Options.SyncOptions)
	return synced
}

// ListInformers returns every informer built so far, ordered by resource;
// it implements cache.InformerSource.
func (f *Factory) ListInformers() []cache.SharedIndexInformer {
	return f.engine.ListInformers()
}

// ReleaseResource stops the informer of gvr, waits for its goroutines to
// return (or ctx to end), drops it so that the next ForResource builds a new
// one, and empties its cache; see factoryengine.Engine.Release. It
// implements informers.ResourceReleaser.
func (f *Factory) ReleaseResource(ctx context.Context, gvr schema.GroupVersionResource) (bool, error) {
	return f.engine.Release(ctx, gvr)
}

// Shutdown makes later starts no-ops and waits until every goroutine the
// factory started has returned (once its context is done).
func (f *Factory) Shutdown() {
	f.engine.Shutdown()
}

var _ informers.ResourceReleaser = &Factory{}

// NewFilteredInformer returns a new, unshared informer of gvr over client,
// restricted to namespace (all if empty), with tweak (may be nil) applied to
// every request.
func NewFilteredInformer(client Client, gvr schema.GroupVersionResource, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, tweak func(*metav1.ListOptions)) informers.GenericInformer {
	return NewInformer(newInformer(client, gvr, selection{namespace: namespace, tweak: tweak}, cache.SharedIndexInformerOptions{ResyncPeriod: resyncPeriod, Indexers: indexers}), gvr)
}

// selection is what an informer lists and keeps: the objects of namespace
// (all if empty), with tweak (may be nil) applied to every request, of the
// ranges membership's member holds (all without one).
type selection struct {
	namespace  string
	tweak      func(*metav1.ListOptions)
	membership factoryengine.Membership
}

// newInformer returns the informer of gvr over client selecting sel.
func newInformer(client Client, gvr schema.GroupVersionResource, sel selection, options cache.SharedIndexInformerOptions) cache.SharedIndexInformer {
	list, watchFn := client.ListAndWatch(gvr, sel.namespace)
	return informerOf(client, gvr, sel, options, list, watchFn)
}

// newProjectedInformer is newInformer for a resource with a projection:
// over a client of proj.Config whose transport projects, or over client
// with each decoded object projected when proj.Config is nil (or the
// factory has no ForConfig); either way the objects that hold only the
// marker share the projection's marker map (build.SharingMarker).
func newProjectedInformer(client Client, proj factoryengine.Projection, gvr schema.GroupVersionResource, sel selection, options cache.SharedIndexInformerOptions) cache.SharedIndexInformer {
	if proj.Config != nil && client.ForConfig != nil {
		config := rest.CopyConfig(proj.Config)
		config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			// Without an example type Transport fails only on a nil
			// projection, which Options.Project never stores.
			projecting, _ := proj.Projection.Transport(rt, nil)
			return projecting
		})
		projectingClient, err := client.ForConfig(config)
		if err != nil {
			return informerOf(client, gvr, sel, options, build.FailingList(err), build.FailingWatch(err))
		}
		list, watchFn := projectingClient.ListAndWatch(gvr, sel.namespace)
		list, watchFn = build.SharingMarker(list, watchFn, proj.Projection)
		return informerOf(projectingClient, gvr, sel, options, list, watchFn)
	}
	list, watchFn := client.ListAndWatch(gvr, sel.namespace)
	list, watchFn = build.SharingMarker(build.ProjectingList(list, proj.Projection), build.ProjectingWatch(watchFn, proj.Projection), proj.Projection)
	return informerOf(client, gvr, sel, options, list, watchFn)
}

// informerOf returns the informer of gvr listing and watching with list and
// watchFn, which reach the server through client: a nil client makes every
// request fail (build.ListerWatcher) instead of reaching them.
func informerOf(client Client, gvr schema.GroupVersionResource, sel selection, options cache.SharedIndexInformerOptions, list build.ListFunc, watchFn build.WatchFunc) cache.SharedIndexInformer {
	lw := build.ListerWatcher(client.Client, sel.tweak, list, watchFn)
	return NewSharedIndexInformer(lw, client.NewObject(), gvr, options, sel.membership)
}
