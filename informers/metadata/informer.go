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
	"bytes"
	"context"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/informers/internal/build"
	"github.com/kinformer/kinformer/informers/internal/gvrfactory"
	"github.com/kinformer/kinformer/informers/internal/lean"
	"github.com/kinformer/kinformer/listadmission"
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

// SharedInformerOption configures a factory built by
// NewSharedInformerFactoryWithOptions.
type SharedInformerOption func(*metadataSharedInformerFactory) *metadataSharedInformerFactory

// metadataSharedInformerFactory implements SharedInformerFactory. Its
// configuration is fixed once the constructor returns.
type metadataSharedInformerFactory struct {
	*gvrfactory.Factory
	client           metadata.Interface
	defaultResync    time.Duration
	namespace        string
	tweakListOptions TweakListOptionsFunc
	transform        cache.TransformFunc
	lean             *lean.Table
	// snapshots holds WithSnapshotDir's directory ("" means none),
	// WithSnapshotEncryptionKey's key and WithSensitiveResources' resources.
	snapshots gvrfactory.Snapshots
	// stalenessProbeInterval is WithStalenessProbeInterval's value; 0
	// means the informers' default.
	stalenessProbeInterval time.Duration
	// maxRetryAfter is WithMaxRetryAfter's value; 0 means the informers'
	// default.
	maxRetryAfter time.Duration
	// admission is the informers' list admission (WithListAdmission,
	// WithListAdmissionPriority); used under the Factory's lock.
	admission gvrfactory.Admission
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
func WithListAdmission(admission *listadmission.Admission) SharedInformerOption {
	return func(f *metadataSharedInformerFactory) *metadataSharedInformerFactory {
		f.admission.Limiter, f.admission.Set = admission, true
		return f
	}
}

// WithListAdmissionPriority gives the informers of resources priority in the
// factory's list admission (see WithListAdmission): waiting informers are
// admitted the highest priority first, and in the order they asked among
// equals. The default is 0; a negative priority lets the others go first.
// kinformer extension, not in client-go.
func WithListAdmissionPriority(priority int, resources ...schema.GroupVersionResource) SharedInformerOption {
	resources = slices.Clone(resources)
	return func(f *metadataSharedInformerFactory) *metadataSharedInformerFactory {
		f.admission.Prioritize(priority, resources)
		return f
	}
}

// WithMemoryLean makes every informer of the factory keep lean objects:
// managedFields dropped, and label and annotation keys and values, the
// namespace and owner references' API version, kind, name and UID shared
// through an intern table of the factory. The table is bounded, not
// reference-counted: at most two generations of 32,768 strings (2 MiB of
// string data each), strings over 256 bytes not interned, the oldest
// generation dropped when the current one is full, so churn cannot grow it
// without limit. With WithTransform too, the user's transform runs first and
// the lean step on its result, whatever the order of the options. See
// informers.WithMemoryLean. Not in client-go.
func WithMemoryLean() SharedInformerOption {
	return func(f *metadataSharedInformerFactory) *metadataSharedInformerFactory {
		f.lean = &lean.Table{}
		return f
	}
}

// WithTransform installs transform on every informer the factory creates: it
// sees each object before it is stored (see cache.TransformFunc).
func WithTransform(transform cache.TransformFunc) SharedInformerOption {
	return func(f *metadataSharedInformerFactory) *metadataSharedInformerFactory {
		f.transform = transform
		return f
	}
}

// WithNamespace restricts the factory's informers of namespaced resources to
// namespace; metav1.NamespaceAll ("") means every namespace. Cluster-scoped
// resources ignore it. It is NewFilteredSharedInformerFactory's namespace
// as an option, so that a restricted factory can have other options (such
// as WithSnapshotDir) too. kinformer extension, not in client-go.
func WithNamespace(namespace string) SharedInformerOption {
	return func(f *metadataSharedInformerFactory) *metadataSharedInformerFactory {
		f.namespace = namespace
		return f
	}
}

// WithTweakListOptions passes every LIST and WATCH request of the factory's
// informers through tweakListOptions (nil: no change), typically to set a
// label or field selector; it is NewFilteredSharedInformerFactory's
// tweakListOptions as an option. kinformer extension, not in client-go.
func WithTweakListOptions(tweakListOptions TweakListOptionsFunc) SharedInformerOption {
	return func(f *metadataSharedInformerFactory) *metadataSharedInformerFactory {
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
func WithMaxRetryAfter(d time.Duration) SharedInformerOption {
	return func(f *metadataSharedInformerFactory) *metadataSharedInformerFactory {
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
func WithStalenessProbeInterval(d time.Duration) SharedInformerOption {
	return func(f *metadataSharedInformerFactory) *metadataSharedInformerFactory {
		f.stalenessProbeInterval = d
		return f
	}
}

// WithSnapshotDir makes every informer the factory builds warm-restartable
// (see cache.SharedIndexInformerOptions.SnapshotFile): on stop it writes its
// cache to a file in dir named after its resource (for example
// "deployments.v1.apps.metadata.snap"), and on start it resumes from that
// file instead of listing. The directory is created owner-only (0700) when
// needed; Secrets and the types marked sensitive are written only with
// WithSnapshotEncryptionKey (see cache.SnapshotProtection). Each file
// is tied to the factory's namespace and the label and field selectors of
// its tweakListOptions (cache.SnapshotScopeFor): a factory with another
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
func WithSnapshotDir(dir string) SharedInformerOption {
	return func(f *metadataSharedInformerFactory) *metadataSharedInformerFactory {
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
func WithSnapshotEncryptionKey(key []byte) SharedInformerOption {
	key = bytes.Clone(key)
	return func(f *metadataSharedInformerFactory) *metadataSharedInformerFactory {
		f.snapshots.Key = key
		return f
	}
}

// WithSensitiveResources marks the objects of resources as sensitive, as
// core secrets always are: their informers write no snapshot file (see
// WithSnapshotDir) unless WithSnapshotEncryptionKey gives a key, and delete
// one they find. See cache.SnapshotProtection. kinformer extension, not in
// client-go.
func WithSensitiveResources(resources ...schema.GroupVersionResource) SharedInformerOption {
	resources = slices.Clone(resources)
	return func(f *metadataSharedInformerFactory) *metadataSharedInformerFactory {
		f.snapshots.Sensitive = append(f.snapshots.Sensitive, resources...)
		return f
	}
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
	f := newFactory(client, defaultResync)
	f.namespace, f.tweakListOptions = namespace, tweakListOptions
	return f
}

// NewSharedInformerFactoryWithOptions returns a factory over client for all
// namespaces, configured by options (nil options are ignored).
func NewSharedInformerFactoryWithOptions(client metadata.Interface, defaultResync time.Duration, options ...SharedInformerOption) SharedInformerFactory {
	f := newFactory(client, defaultResync)
	for _, opt := range options {
		if opt == nil {
			continue
		}
		if next := opt(f); next != nil {
			f = next
		}
	}
	return f
}

func newFactory(client metadata.Interface, defaultResync time.Duration) *metadataSharedInformerFactory {
	f := &metadataSharedInformerFactory{client: client, defaultResync: defaultResync, namespace: metav1.NamespaceAll}
	if client != nil {
		f.snapshots.Cluster = gvrfactory.KubeSystemUID(client.Resource(gvrfactory.NamespacesGVR).Get)
	}
	f.Factory = gvrfactory.New(f.build)
	return f
}

// build makes the informer of one resource with the factory's settings.
func (f *metadataSharedInformerFactory) build(gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	options := cache.SharedIndexInformerOptions{
		ResyncPeriod: f.defaultResync,
		Indexers:     cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},

		StalenessProbeInterval: f.stalenessProbeInterval,
		MaxRetryAfter:          f.maxRetryAfter,
	}
	options = f.snapshots.Apply(options, gvr, "metadata", f.namespace, f.tweakListOptions)
	options = f.admission.Apply(options, gvr)
	informer := newInformer(f.client, gvr, f.namespace, f.tweakListOptions, options)
	if transform := lean.Compose(f.transform, f.lean); transform != nil {
		// The informer is new and not running, so this cannot fail.
		_ = informer.SetTransform(transform)
	}
	return informer
}

// Start runs the requested informers until stopCh is closed.
func (f *metadataSharedInformerFactory) Start(stopCh <-chan struct{}) {
	f.StartWithContext(wait.ContextForChannel(stopCh))
}

// ForResource returns the shared informer of gvr.
func (f *metadataSharedInformerFactory) ForResource(gvr schema.GroupVersionResource) informers.GenericInformer {
	return f.Factory.ForResource(gvr)
}

// WaitForCacheSync waits for the started informers to sync or stopCh to close.
func (f *metadataSharedInformerFactory) WaitForCacheSync(stopCh <-chan struct{}) map[schema.GroupVersionResource]bool {
	return f.Factory.WaitForCacheSync(wait.ContextForChannel(stopCh))
}

// NewFilteredMetadataInformer returns a new, unshared metadata informer for
// gvr over client, restricted to namespace (all if empty), with
// tweakListOptions (may be nil) applied to every request. Prefer a factory's
// shared informer.
func NewFilteredMetadataInformer(client metadata.Interface, gvr schema.GroupVersionResource, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, tweakListOptions TweakListOptionsFunc) informers.GenericInformer {
	return gvrfactory.NewInformer(newInformer(client, gvr, namespace, tweakListOptions, cache.SharedIndexInformerOptions{ResyncPeriod: resyncPeriod, Indexers: indexers}), gvr)
}

func newInformer(client metadata.Interface, gvr schema.GroupVersionResource, namespace string, tweakListOptions TweakListOptionsFunc, options cache.SharedIndexInformerOptions) cache.SharedIndexInformer {
	var c any
	if client != nil {
		c = client
	}
	lw := build.ListerWatcher(c, tweakListOptions,
		func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return client.Resource(gvr).Namespace(namespace).List(ctx, opts)
		},
		func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.Resource(gvr).Namespace(namespace).Watch(ctx, opts)
		})
	return gvrfactory.NewSharedIndexInformer(lw, &metav1.PartialObjectMetadata{}, gvr, options)
}

var _ informers.ResourceReleaser = &metadataSharedInformerFactory{}
