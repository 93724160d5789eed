package informers

import (
	"context"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers/internal/factoryengine"
	"github.com/kinformer/kinformer/informers/internalinterfaces"
)

// SharedInformerOption configures a factory built by
// NewSharedInformerFactoryWithOptions: each sets a field of the factory's
// options value. Options apply in order; a later one overrides an earlier
// one of the same kind (the options naming types, such as
// WithCustomResyncConfig, add to the earlier ones instead).
type SharedInformerOption func(*sharedInformerFactory) *sharedInformerFactory

// sharedInformerFactory implements SharedInformerFactory over the factory
// engine, keyed by the Go type of the objects. Its configuration is set by
// options before the constructor returns and never changes afterwards.
type sharedInformerFactory struct {
	client        kubernetes.Interface
	defaultResync time.Duration
	// options holds what the options set, defaulted once.
	options factoryengine.Options[reflect.Type]
	// snapshots names and ties the snapshot files (WithSnapshotDir).
	snapshots factoryengine.Snapshots[reflect.Type]
	// engine holds the one informer per object type.
	engine *factoryengine.Engine[reflect.Type, cache.SharedIndexInformer]
}

// typeName names an object type in errors and orders ListInformers.
func typeName(t reflect.Type) string { return t.String() }

// WithCustomResyncConfig gives the informers of the listed object types their
// own resync period instead of the factory's default. Keys are example
// objects of each type (e.g. &corev1.Pod{}); only their Go type matters.
func WithCustomResyncConfig(resyncConfig map[metav1.Object]time.Duration) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		for obj, period := range resyncConfig {
			if f.options.CustomResync == nil {
				f.options.CustomResync = map[reflect.Type]time.Duration{}
			}
			f.options.CustomResync[reflect.TypeOf(obj)] = period
		}
		return f
	}
}

// WithTweakListOptions makes every informer of the factory pass its LIST and
// WATCH options through tweakListOptions (nil: no change), typically to set a
// label or field selector. Listers then see only the selected objects.
func WithTweakListOptions(tweakListOptions internalinterfaces.TweakListOptionsFunc) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.TweakListOptions = tweakListOptions
		return f
	}
}

// WithNamespace restricts the factory's informers of namespaced resources to
// namespace; metav1.NamespaceAll ("") means every namespace. Cluster-scoped
// resources are unaffected.
func WithNamespace(namespace string) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.Namespace = namespace
		return f
	}
}

// WithTransform installs transform on every informer the factory creates: it
// sees each object before it is stored (see cache.TransformFunc).
func WithTransform(transform cache.TransformFunc) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.Transform = transform
		return f
	}
}

// WithInformerName names the factory's informers for metrics: each informer
// registers its group/version/resource under informerName, which must come
// from cache.NewInformerName. Shutdown releases the name.
func WithInformerName(informerName *cache.InformerName) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.InformerName = informerName
		return f
	}
}

// WithSyncOptions configures the factory's WaitForCacheSyncWithContext (and
// WaitForCacheSync), e.g. cache.SyncOptions{FailFast: true} to stop waiting
// as soon as an informer fails with an error retrying will not cure (403,
// 404, ...; see cache.IsPermanentSyncError). kinformer extension, not in
// client-go.
func WithSyncOptions(options cache.SyncOptions) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.SyncOptions = options
		return f
	}
}

// NewSharedInformerFactory returns a factory of informers over client for all
// namespaces. defaultResync is the resync period of every informer (zero
// disables resync) unless WithCustomResyncConfig says otherwise.
//
// When client is a *kubernetes.Clientset, the informers of built-in types
// list and watch through their group's REST client asking for protobuf (JSON
// allowed), whatever content type the clientset was configured with, and
// decode the media type the server answers in. Fake clientsets and other
// kubernetes.Interface implementations (wrappers of a clientset included)
// are used through their typed clients. Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
func NewSharedInformerFactory(client kubernetes.Interface, defaultResync time.Duration) SharedInformerFactory {
	return NewSharedInformerFactoryWithOptions(client, defaultResync)
}

// NewFilteredSharedInformerFactory returns a factory restricted to namespace
// whose requests pass through tweakListOptions (may be nil).
//
// Deprecated: use NewSharedInformerFactoryWithOptions with WithNamespace and
// WithTweakListOptions.
func NewFilteredSharedInformerFactory(client kubernetes.Interface, defaultResync time.Duration, namespace string, tweakListOptions internalinterfaces.TweakListOptionsFunc) SharedInformerFactory {
	return NewSharedInformerFactoryWithOptions(client, defaultResync, WithNamespace(namespace), WithTweakListOptions(tweakListOptions))
}

// NewSharedInformerFactoryWithOptions returns a factory of informers over
// client, configured by options (nil options are ignored). Informers are
// created lazily, when first requested, and run once Start is called.
func NewSharedInformerFactoryWithOptions(client kubernetes.Interface, defaultResync time.Duration, options ...SharedInformerOption) SharedInformerFactory {
	f := &sharedInformerFactory{client: client, defaultResync: defaultResync}
	for _, opt := range options {
		if opt == nil {
			continue
		}
		if next := opt(f); next != nil {
			f = next
		}
	}
	f.options.Default()
	f.snapshots = factoryengine.Snapshots[reflect.Type]{Name: typeName, FileName: SnapshotFileName}
	if f.options.SnapshotDir != "" {
		f.snapshots.Server = clientServer(client)
	}
	f.engine = factoryengine.New(typeName, func(i cache.SharedIndexInformer) cache.SharedIndexInformer { return i })
	return f
}

// InformerName returns the metrics identity given by WithInformerName, or nil.
func (f *sharedInformerFactory) InformerName() *cache.InformerName {
	return f.options.InformerName
}

// Start runs every requested informer not yet running until stopCh is
// closed; see SharedInformerFactory.
func (f *sharedInformerFactory) Start(stopCh <-chan struct{}) {
	f.StartWithContext(wait.ContextForChannel(stopCh))
}

// StartWithContext runs every requested informer not yet running until ctx
// is done; see SharedInformerFactory.
func (f *sharedInformerFactory) StartWithContext(ctx context.Context) {
	f.engine.StartWithContext(ctx)
}

// Shutdown stops further starts and waits for the running informers; see
// SharedInformerFactory.
func (f *sharedInformerFactory) Shutdown() {
	f.engine.Shutdown()
	f.options.InformerName.Release()
}

// WaitForCacheSync waits for the started informers to sync or stopCh to
// close; see SharedInformerFactory.
func (f *sharedInformerFactory) WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool {
	return f.WaitForCacheSyncWithContext(wait.ContextForChannel(stopCh)).Synced
}

// WaitForCacheSyncWithContext waits for the started informers to sync or ctx
// to end; see SharedInformerFactory.
//
// When an informer did not sync, the result's Err is an errors.Join of
// context.Cause(ctx) and one *cache.InformerSyncError per unsynced
// informer, which names the informer's
// type and resource and wraps its Reflector's last error (a 403 naming the
// resource and verb, a 404, a refused connection, a 429...), so that
// errors.Is(err, context.DeadlineExceeded) and apierrors.IsForbidden(err)
// both work on it and on AsError(). With WithSyncOptions(cache.SyncOptions{
// FailFast: true}) waiting also ends early, with cache.ErrPermanentSyncFailure
// in place of the context's cause, once an informer fails with an error
// retrying will not cure. Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
func (f *sharedInformerFactory) WaitForCacheSyncWithContext(ctx context.Context) cache.SyncResult {
	synced, err := f.engine.WaitForCacheSync(ctx, f.options.SyncOptions)
	return cache.SyncResult{Synced: synced, Err: err}
}

// ListInformers returns every informer built so far, ordered by object type;
// it implements cache.InformerSource, for diagnostics and metrics.
func (f *sharedInformerFactory) ListInformers() []cache.SharedIndexInformer {
	return f.engine.ListInformers()
}

// InformerFor returns the factory's informer for the Go type of obj. The
// first call for a type builds it with newFunc, passing the factory's client
// and the type's resync period, and installs the factory's transform; later
// calls return that same informer and ignore newFunc. An informer requested
// after Start runs when Start is called again. A nil newFunc (or one
// returning nil) yields nil when there is no informer for the type yet. An
// informer built here with the caller's newFunc gets no snapshot file
// (WithSnapshotDir): its selection is the caller's, not the factory's.
func (f *sharedInformerFactory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	return f.informerFor(obj, newFunc, false)
}

// InformerForOwnSelection is InformerFor for the factory's generated
// informers, whose newFunc selects exactly what the factory's namespace and
// tweak say: only their informers get a snapshot file (WithSnapshotDir).
// The generated informer packages call it through build.InformerFor; it is
// not part of client-go's SharedInformerFactory.
func (f *sharedInformerFactory) InformerForOwnSelection(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) cache.SharedIndexInformer {
	return f.informerFor(obj, newFunc, true)
}

// informerFor implements InformerFor; ownSelection says whether newFunc
// selects what the factory's namespace and tweak say.
func (f *sharedInformerFactory) informerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc, ownSelection bool) cache.SharedIndexInformer {
	t := reflect.TypeOf(obj)
	var build func() (cache.SharedIndexInformer, bool)
	if newFunc != nil {
		build = func() (cache.SharedIndexInformer, bool) {
			informer := newFunc(f.client, f.options.ResyncPeriod(t, f.defaultResync))
			if informer == nil {
				return nil, false
			}
			snapshots := &f.snapshots
			if !ownSelection {
				// The file would not be tied to what the informer selects.
				snapshots = nil
			}
			factoryengine.Configure(informer, f.options.InformerTransform(), f.options.InformerOptions(cache.SharedIndexInformerOptions{}, t, snapshots))
			return informer, true
		}
	}
	informer, _ := f.engine.Get(t, build)
	return informer
}
