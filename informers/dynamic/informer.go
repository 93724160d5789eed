// Package dynamicinformer provides shared informers over client-go's dynamic
// client: informers for any resource, chosen by group/version/resource at run
// time, whose objects are *unstructured.Unstructured.
//
// It mirrors k8s.io/client-go/dynamic/dynamicinformer v0.37.2 and keeps its
// package name, so code moves over by changing the import path only.
package dynamicinformer

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/informers/internal/build"
	"github.com/kinformer/kinformer/informers/internal/gvrfactory"
	"github.com/kinformer/kinformer/listadmission"
	"github.com/kinformer/kinformer/projection"
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

// dynamicSharedInformerFactory implements DynamicSharedInformerFactory. Its
// configuration is fixed once the constructor returns.
type dynamicSharedInformerFactory struct {
	*gvrfactory.Factory
	client           dynamic.Interface
	defaultResync    time.Duration
	namespace        string
	tweakListOptions TweakListOptionsFunc
	// snapshots holds WithSnapshotDir's directory ("" means none),
	// WithSnapshotEncryptionKey's key and WithSensitiveResources' resources.
	snapshots gvrfactory.Snapshots
	// stalenessProbeInterval is WithStalenessProbeInterval's value; 0
	// means the informers' default.
	stalenessProbeInterval time.Duration
	// maxRetryAfter is WithMaxRetryAfter's value; 0 means the informers'
	// default.
	maxRetryAfter time.Duration
	// projections holds WithProjection's projections by resource.
	projections map[schema.GroupVersionResource]projected
	// admission is the informers' list admission (WithListAdmission,
	// WithListAdmissionPriority); used under the Factory's lock.
	admission gvrfactory.Admission
}

// projected is a resource's projection and the config its informer reaches
// the server with (nil: the factory's client).
type projected struct {
	p      *projection.Projection
	config *rest.Config
}

// WithListAdmission makes the factory's informers admit their initial lists
// and relists through admission (see package listadmission): at most
// admission's limit of them list at once, the highest priority first (see
// WithListAdmissionPriority), and a 429 slows them all down. Pass the same
// admission to several factories (typed, dynamic, metadata) to limit the
// lists of a whole process. nil turns admission off: every informer lists
// at once, as in client-go. Without this option a factory has its own
// listadmission.New(listadmission.Options{}) (10 lists at once; a
// handful of informers never waits). Only when lists are requested changes,
// not what listers and handlers observe. kinformer extension, not in
// client-go.
func WithListAdmission(admission *listadmission.Admission) DynamicSharedInformerOption {
	return func(f *dynamicSharedInformerFactory) *dynamicSharedInformerFactory {
		f.admission.Limiter, f.admission.Set = admission, true
		return f
	}
}

// WithListAdmissionPriority gives the informers of resources priority in the
// factory's list admission (see WithListAdmission): waiting informers are
// admitted the highest priority first, and in the order they asked among
// equals. The default is 0; a negative priority lets the others go first.
// kinformer extension, not in client-go.
func WithListAdmissionPriority(priority int, resources ...schema.GroupVersionResource) DynamicSharedInformerOption {
	resources = slices.Clone(resources)
	return func(f *dynamicSharedInformerFactory) *dynamicSharedInformerFactory {
		f.admission.Prioritize(priority, resources)
		return f
	}
}

// NewDynamicSharedInformerFactory returns a factory over client for all
// namespaces; defaultResync is every informer's resync period (zero: none).
func NewDynamicSharedInformerFactory(client dynamic.Interface, defaultResync time.Duration) DynamicSharedInformerFactory {
	return NewFilteredDynamicSharedInformerFactory(client, defaultResync, metav1.NamespaceAll, nil)
}

// NewFilteredDynamicSharedInformerFactory returns a factory over client whose
// informers watch namespace only (all if empty; cluster-scoped resources
// ignore it) and pass their requests through tweakListOptions (may be nil).
func NewFilteredDynamicSharedInformerFactory(client dynamic.Interface, defaultResync time.Duration, namespace string, tweakListOptions TweakListOptionsFunc) DynamicSharedInformerFactory {
	return NewDynamicSharedInformerFactoryWithOptions(client, defaultResync, WithNamespace(namespace), WithTweakListOptions(tweakListOptions))
}

// DynamicSharedInformerOption configures a factory built by
// NewDynamicSharedInformerFactoryWithOptions. kinformer extension, not in
// client-go (whose dynamic factory has no options).
type DynamicSharedInformerOption func(*dynamicSharedInformerFactory) *dynamicSharedInformerFactory

// WithNamespace restricts the factory's informers of namespaced resources to
// namespace; metav1.NamespaceAll ("") means every namespace. Cluster-scoped
// resources ignore it. kinformer extension, not in client-go.
func WithNamespace(namespace string) DynamicSharedInformerOption {
	return func(f *dynamicSharedInformerFactory) *dynamicSharedInformerFactory {
		f.namespace = namespace
		return f
	}
}

// WithTweakListOptions passes every LIST and WATCH request of the factory's
// informers through tweakListOptions (nil: no change), typically to set a
// label or field selector. kinformer extension, not in client-go.
func WithTweakListOptions(tweakListOptions TweakListOptionsFunc) DynamicSharedInformerOption {
	return func(f *dynamicSharedInformerFactory) *dynamicSharedInformerFactory {
		f.tweakListOptions = tweakListOptions
		return f
	}
}

// WithMaxRetryAfter sets the longest Retry-After the Reflector of every
// informer the factory builds honours before it retries a failed list or
// watch (see cache.SharedIndexInformerOptions.MaxRetryAfter). Zero keeps
// the default (listadmission.DefaultMaxRetryAfter, 60 s), a negative value
// sets no maximum. The pause of the factory's list admission has its own
// maximum (listadmission.Options.MaxRetryAfter). kinformer extension, not
// in client-go.
func WithMaxRetryAfter(d time.Duration) DynamicSharedInformerOption {
	return func(f *dynamicSharedInformerFactory) *dynamicSharedInformerFactory {
		f.maxRetryAfter = d
		return f
	}
}

// WithStalenessProbeInterval sets how long every informer the factory
// builds goes without the server confirming its cache as current before it
// asks with a LIST of one object (see
// cache.SharedIndexInformerOptions.StalenessProbeInterval). Zero keeps the
// default (cache.DefaultStalenessProbeInterval), a negative value turns
// probing off. kinformer extension, not in client-go.
func WithStalenessProbeInterval(d time.Duration) DynamicSharedInformerOption {
	return func(f *dynamicSharedInformerFactory) *dynamicSharedInformerFactory {
		f.stalenessProbeInterval = d
		return f
	}
}

// WithSnapshotDir makes every informer the factory builds warm-restartable
// (see cache.SharedIndexInformerOptions.SnapshotFile): on stop it writes its
// cache to a file in dir named after its resource (for example
// "deployments.v1.apps.snap", "pods.v1.snap"), and on start it resumes from
// that file instead of listing. The directory is created owner-only (0700) when
// needed; Secrets and the types marked sensitive are written only with
// WithSnapshotEncryptionKey (see cache.SnapshotProtection). Each
// file is tied to the factory's namespace and the label and field selectors
// of its tweakListOptions (cache.SnapshotScopeFor): a factory with another
// scope rejects it with a *cache.SnapshotError and lists as usual. Each file
// is also tied to the cluster, identified by the UID of its kube-system
// namespace, which the factory reads once (the first time an informer
// starts) with its own client: that needs get permission on
// namespaces/kube-system. A file written against another cluster, even one
// rebuilt at the same address, is rejected the same way; when the identity
// cannot be read (no permission, no kube-system namespace, an error), no
// snapshot is read or written and the informers list as usual. Only one
// running factory may use a directory at a time. kinformer extension, not
// in client-go.
func WithSnapshotDir(dir string) DynamicSharedInformerOption {
	return func(f *dynamicSharedInformerFactory) *dynamicSharedInformerFactory {
		f.snapshots.Dir = dir
		return f
	}
}

// WithSnapshotEncryptionKey makes the factory's snapshot files (see
// WithSnapshotDir) encrypted and authenticated with key, which must be
// cache.SnapshotKeySize (32) bytes long (another size is reported through
// utilruntime.HandleError when an informer is built, and that informer's
// snapshot stays off), and lets the
// informers of sensitive resources (core secrets, and those of
// WithSensitiveResources) write theirs, which they never do without a key.
// Files written without the key, or with another, are rejected and the
// informers list as usual. The key is copied. See cache.SnapshotProtection.
// kinformer extension, not in client-go.
func WithSnapshotEncryptionKey(key []byte) DynamicSharedInformerOption {
	key = bytes.Clone(key)
	return func(f *dynamicSharedInformerFactory) *dynamicSharedInformerFactory {
		f.snapshots.Key = key
		return f
	}
}

// WithSensitiveResources marks the objects of resources as sensitive, as
// core secrets always are: their informers write no snapshot file (see
// WithSnapshotDir) unless WithSnapshotEncryptionKey gives a key, and delete
// one they find. See cache.SnapshotProtection. kinformer extension, not in
// client-go.
func WithSensitiveResources(resources ...schema.GroupVersionResource) DynamicSharedInformerOption {
	resources = slices.Clone(resources)
	return func(f *dynamicSharedInformerFactory) *dynamicSharedInformerFactory {
		f.snapshots.Sensitive = append(f.snapshots.Sensitive, resources...)
		return f
	}
}

// WithProjection makes the factory's informer of gvr keep only the fields p
// names of its objects (see package projection): its LIST and WATCH answers
// are read in JSON and filtered while they are scanned, so the full objects
// are never decoded and neither the cache nor the peak of an initial list
// pays for the fields left out. Handlers and listers receive
// *unstructured.Unstructured objects holding only those fields and the
// identity fields; each carries projection.MarkerAnnotation and must never
// be written back (build the clients that write with
// projection.GuardConfig, which refuses it).
//
// A dynamic client gives no access to its transport, so config is how the
// informer reaches the server: it lists and watches gvr through a dynamic
// client of config whose transport projects the answers
// (projection.Transport). With a nil config it uses the factory's client
// and projects the objects once decoded instead, which is how client-go's
// fake dynamic client is served in tests. The informer's snapshot files
// record the projection, and a file written under another projection is
// not loaded. An object a transform (SetTransform) returns without the
// marker is refused (not cached, counted in
// cache.InformerStatus.TransformRefused). A nil p is ignored; a later call for the same resource
// replaces an earlier one. kinformer extension, not in client-go.
func WithProjection(gvr schema.GroupVersionResource, p *projection.Projection, config *rest.Config) DynamicSharedInformerOption {
	if config != nil {
		config = rest.CopyConfig(config)
	}
	return func(f *dynamicSharedInformerFactory) *dynamicSharedInformerFactory {
		if p == nil {
			return f
		}
		if f.projections == nil {
			f.projections = map[schema.GroupVersionResource]projected{}
		}
		f.projections[gvr] = projected{p: p, config: config}
		return f
	}
}

// NewDynamicSharedInformerFactoryWithOptions returns a factory over client
// for all namespaces, configured by options (nil options are ignored);
// defaultResync is every informer's resync period (zero: none). kinformer
// extension, not in client-go: it is how a dynamic factory gets a snapshot
// directory (WithSnapshotDir).
func NewDynamicSharedInformerFactoryWithOptions(client dynamic.Interface, defaultResync time.Duration, options ...DynamicSharedInformerOption) DynamicSharedInformerFactory {
	f := &dynamicSharedInformerFactory{client: client, defaultResync: defaultResync, namespace: metav1.NamespaceAll}
	for _, opt := range options {
		if opt == nil {
			continue
		}
		if next := opt(f); next != nil {
			f = next
		}
	}
	if client != nil {
		f.snapshots.Cluster = gvrfactory.KubeSystemUID(client.Resource(gvrfactory.NamespacesGVR).Get)
	}
	f.Factory = gvrfactory.New(f.build)
	return f
}

// build makes the informer of one resource with the factory's settings.
func (f *dynamicSharedInformerFactory) build(gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	options := cache.SharedIndexInformerOptions{
		ResyncPeriod: f.defaultResync,
		Indexers:     cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},

		StalenessProbeInterval: f.stalenessProbeInterval,
		MaxRetryAfter:          f.maxRetryAfter,
	}
	options = f.snapshots.Apply(options, gvr, "", f.namespace, f.tweakListOptions)
	options = f.admission.Apply(options, gvr)
	proj, ok := f.projections[gvr]
	if !ok {
		return newInformer(f.client, gvr, f.namespace, f.tweakListOptions, options)
	}
	informer := newProjectedInformer(f.client, proj, gvr, f.namespace, f.tweakListOptions, options)
	// The informer is new and not running: these cannot fail.
	_ = cache.SetSnapshotProjection(informer, proj.p.Fingerprint())
	_ = cache.SetTransformCheck(informer, func(obj interface{}) error { return proj.p.CheckMarked(obj) })
	return informer
}

// Start runs the requested informers until stopCh is closed.
func (f *dynamicSharedInformerFactory) Start(stopCh <-chan struct{}) {
	f.StartWithContext(wait.ContextForChannel(stopCh))
}

// ForResource returns the shared informer of gvr.
func (f *dynamicSharedInformerFactory) ForResource(gvr schema.GroupVersionResource) informers.GenericInformer {
	return f.Factory.ForResource(gvr)
}

// WaitForCacheSync waits for the started informers to sync or stopCh to close.
func (f *dynamicSharedInformerFactory) WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool {
	return f.Factory.WaitForCacheSync(wait.ContextForChannel(stopCh))
}

// NewFilteredDynamicInformer returns a new, unshared informer for gvr over
// client, restricted to namespace (all if empty), with tweakListOptions (may
// be nil) applied to every request. Prefer a factory's shared informer.
func NewFilteredDynamicInformer(client dynamic.Interface, gvr schema.GroupVersionResource, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, tweakListOptions TweakListOptionsFunc) informers.GenericInformer {
	return gvrfactory.NewInformer(newInformer(client, gvr, namespace, tweakListOptions, cache.SharedIndexInformerOptions{ResyncPeriod: resyncPeriod, Indexers: indexers}), gvr)
}

// newProjectedInformer is newInformer for a resource with a projection: over
// a dynamic client of proj.config with the projecting transport, or over
// client with each decoded object projected when proj.config is nil.
func newProjectedInformer(client dynamic.Interface, proj projected, gvr schema.GroupVersionResource, namespace string, tweakListOptions TweakListOptionsFunc, options cache.SharedIndexInformerOptions) cache.SharedIndexInformer {
	if proj.config != nil {
		config := rest.CopyConfig(proj.config)
		config.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			// Without an example type Transport fails only on a nil
			// projection, which WithProjection never stores.
			projecting, _ := proj.p.Transport(rt, nil)
			return projecting
		})
		projectingClient, err := dynamic.NewForConfig(config)
		if err != nil {
			return informerOf(client, gvr, tweakListOptions, options, build.FailingList(err), build.FailingWatch(err))
		}
		return newInformer(projectingClient, gvr, namespace, tweakListOptions, options)
	}
	list, watchFn := listAndWatchOf(client, gvr, namespace)
	return informerOf(client, gvr, tweakListOptions, options, build.ProjectingList(list, proj.p), build.ProjectingWatch(watchFn, proj.p))
}

func newInformer(client dynamic.Interface, gvr schema.GroupVersionResource, namespace string, tweakListOptions TweakListOptionsFunc, options cache.SharedIndexInformerOptions) cache.SharedIndexInformer {
	list, watchFn := listAndWatchOf(client, gvr, namespace)
	return informerOf(client, gvr, tweakListOptions, options, list, watchFn)
}

// listAndWatchOf returns the LIST and the WATCH of gvr in namespace through
// client.
func listAndWatchOf(client dynamic.Interface, gvr schema.GroupVersionResource, namespace string) (build.ListFunc, build.WatchFunc) {
	return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return client.Resource(gvr).Namespace(namespace).List(ctx, opts)
		}, func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.Resource(gvr).Namespace(namespace).Watch(ctx, opts)
		}
}

// informerOf returns the informer of gvr listing and watching with list and
// watchFn, which reach the server through client: a nil client makes every
// request fail (build.ListerWatcher) instead of reaching them.
func informerOf(client dynamic.Interface, gvr schema.GroupVersionResource, tweakListOptions TweakListOptionsFunc, options cache.SharedIndexInformerOptions, list build.ListFunc, watchFn build.WatchFunc) cache.SharedIndexInformer {
	var c any
	if client != nil {
		c = client
	}
	lw := build.ListerWatcher(c, tweakListOptions, list, watchFn)
	return gvrfactory.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, gvr, options)
}

var _ informers.ResourceReleaser = &dynamicSharedInformerFactory{}
