package dynamicinformer

import (
	"bytes"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers/internal/factoryengine"
	"github.com/kinformer/kinformer/informers/internal/gvrfactory"
	"github.com/kinformer/kinformer/listadmission"
	"github.com/kinformer/kinformer/projection"
)

// DynamicSharedInformerOption configures a factory built by
// NewDynamicSharedInformerFactoryWithOptions: each sets a field of the
// factory's options value. Options apply in order; a later one overrides an
// earlier one of the same kind (those naming resources add to the earlier
// ones instead). kinformer extension, not in client-go (whose dynamic
// factory has no options).
type DynamicSharedInformerOption func(*dynamicSharedInformerFactory) *dynamicSharedInformerFactory

// option returns the DynamicSharedInformerOption that applies set to the
// factory's options.
func option(set func(*gvrfactory.Options)) DynamicSharedInformerOption {
	return func(f *dynamicSharedInformerFactory) *dynamicSharedInformerFactory {
		set(&f.Options)
		return f
	}
}

// WithNamespace restricts the factory's informers of namespaced resources to
// namespace; metav1.NamespaceAll ("") means every namespace. Cluster-scoped
// resources ignore it. kinformer extension, not in client-go.
func WithNamespace(namespace string) DynamicSharedInformerOption {
	return option(func(o *gvrfactory.Options) { o.Namespace = namespace })
}

// WithTweakListOptions passes every LIST and WATCH request of the factory's
// informers through tweakListOptions (nil: no change), typically to set a
// label or field selector. kinformer extension, not in client-go.
func WithTweakListOptions(tweakListOptions TweakListOptionsFunc) DynamicSharedInformerOption {
	return option(func(o *gvrfactory.Options) { o.TweakListOptions = tweakListOptions })
}

// WithTransform installs transform on every informer the factory creates: it
// sees each object before it is stored (see cache.TransformFunc). kinformer
// extension, not in client-go.
func WithTransform(transform cache.TransformFunc) DynamicSharedInformerOption {
	return option(func(o *gvrfactory.Options) { o.Transform = transform })
}

// WithMemoryLean makes every informer of the factory keep lean objects:
// managedFields dropped, and label and annotation keys and values, the
// namespace and owner references' API version, kind, name and UID shared
// through a bounded intern table of the factory; with WithTransform too, the
// user's transform runs first. See informers.WithMemoryLean, whose
// contract it has. kinformer extension, not in client-go.
func WithMemoryLean() DynamicSharedInformerOption {
	return option(func(o *gvrfactory.Options) { o.MemoryLean = true })
}

// WithSyncOptions configures the factory's WaitForCacheSync, e.g.
// cache.SyncOptions{FailFast: true} to stop waiting as soon as an informer
// fails with an error retrying will not cure (see
// cache.IsPermanentSyncError). kinformer extension, not in client-go.
func WithSyncOptions(options cache.SyncOptions) DynamicSharedInformerOption {
	return option(func(o *gvrfactory.Options) { o.SyncOptions = options })
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
	return option(func(o *gvrfactory.Options) { o.ListAdmission, o.ListAdmissionSet = admission, true })
}

// WithListAdmissionPriority gives the informers of resources priority in the
// factory's list admission (see WithListAdmission): waiting informers are
// admitted the highest priority first, and in the order they asked among
// equals. The default is 0; a negative priority lets the others go first.
// kinformer extension, not in client-go.
func WithListAdmissionPriority(priority int, resources ...schema.GroupVersionResource) DynamicSharedInformerOption {
	resources = slices.Clone(resources)
	return option(func(o *gvrfactory.Options) { o.Prioritize(priority, resources...) })
}

// WithRelistPageByPage makes every informer the factory builds apply its
// relists page by page, as the pages arrive, instead of atomically once
// complete as client-go does (see
// cache.SharedIndexInformerOptions.RelistPageByPage, and
// informers.WithRelistPageByPage for what it costs). kinformer extension,
// not in client-go.
func WithRelistPageByPage() DynamicSharedInformerOption {
	return option(func(o *gvrfactory.Options) { o.Informer.RelistPageByPage = true })
}

// WithWatchIdleTimeout sets the watch liveness deadline of every informer the
// factory builds (see cache.SharedIndexInformerOptions.WatchIdleTimeout).
// Zero keeps the default (cache.DefaultWatchIdleTimeout), a negative value
// turns liveness off. kinformer extension, not in client-go.
func WithWatchIdleTimeout(d time.Duration) DynamicSharedInformerOption {
	return option(func(o *gvrfactory.Options) { o.Informer.WatchIdleTimeout = d })
}

// WithStalenessProbeInterval sets how long every informer the factory
// builds goes without the server confirming its cache as current before it
// asks with a LIST of one object (see
// cache.SharedIndexInformerOptions.StalenessProbeInterval). Zero keeps the
// default (cache.DefaultStalenessProbeInterval), a negative value turns
// probing off. kinformer extension, not in client-go.
func WithStalenessProbeInterval(d time.Duration) DynamicSharedInformerOption {
	return option(func(o *gvrfactory.Options) { o.Informer.StalenessProbeInterval = d })
}

// WithMaxRetryAfter sets the longest Retry-After the Reflector of every
// informer the factory builds honours before it retries a failed list or
// watch (see cache.SharedIndexInformerOptions.MaxRetryAfter). Zero keeps
// the default (listadmission.DefaultMaxRetryAfter, 60 s), a negative value
// sets no maximum. The pause of the factory's list admission has its own
// maximum (listadmission.Options.MaxRetryAfter). kinformer extension, not
// in client-go.
func WithMaxRetryAfter(d time.Duration) DynamicSharedInformerOption {
	return option(func(o *gvrfactory.Options) { o.Informer.MaxRetryAfter = d })
}

// WithShard makes every informer the factory builds keep one shard of its
// resource (see cache.SharedIndexInformerOptions.Shard and
// informers.WithShard): every LIST and WATCH request carries the shard
// selector, and the informers keep only
// the objects whose hash falls in shard's ranges, whatever the server
// sends (see cache.Shard for the trade of each key: by uid spreads objects
// evenly but puts an owner and its children in different shards; by
// namespace keeps them together but puts every cluster-scoped object in one
// range; and for the degraded mode of a server that ignores the selector,
// reported as a *cache.ShardSelectorIgnoredError). The zero cache.Shard
// keeps the whole resource, as without the option. An invalid shard (see
// cache.Shard.Validate) makes every informer's lists fail with an error
// wrapping cache.ErrInvalidShard instead of listing unsharded. The ranges
// are copied. kinformer extension, not in client-go.
func WithShard(shard cache.Shard) DynamicSharedInformerOption {
	ranges := slices.Clone(shard.Ranges)
	return option(func(o *gvrfactory.Options) {
		o.Informer.Shard = cache.Shard{Key: shard.Key, Ranges: slices.Clone(ranges)}
	})
}

// WithSnapshotDir makes every informer the factory builds warm-restartable
// (see cache.SharedIndexInformerOptions.SnapshotFile): on stop it writes its
// cache to a file in dir named after its resource (for example
// "deployments.v1.apps.snap", "pods.v1.snap"), and on start it resumes from
// that file instead of listing. The directory is created owner-only (0700)
// when needed; core secrets and the resources marked sensitive are written
// only with WithSnapshotEncryptionKey (see cache.SnapshotProtection). Each
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
	return option(func(o *gvrfactory.Options) { o.SnapshotDir = dir })
}

// WithSnapshotEncryptionKey makes the factory's snapshot files (see
// WithSnapshotDir) encrypted and authenticated with key, which must be
// cache.SnapshotKeySize (32) bytes long (another size is reported through
// utilruntime.HandleError when an informer is built, and that informer's
// snapshot stays off), and lets the informers of sensitive resources (core
// secrets, and those of WithSensitiveResources) write theirs, which they
// never do without a key. Files written without the key, or with another,
// are rejected and the informers list as usual. The key is copied. See
// cache.SnapshotProtection. kinformer extension, not in client-go.
func WithSnapshotEncryptionKey(key []byte) DynamicSharedInformerOption {
	key = bytes.Clone(key)
	return option(func(o *gvrfactory.Options) { o.SnapshotKey = key })
}

// WithSensitiveResources marks the objects of resources as sensitive, as
// core secrets always are: their informers write no snapshot file (see
// WithSnapshotDir) unless WithSnapshotEncryptionKey gives a key, and delete
// one they find. See cache.SnapshotProtection. kinformer extension, not in
// client-go.
func WithSensitiveResources(resources ...schema.GroupVersionResource) DynamicSharedInformerOption {
	resources = slices.Clone(resources)
	return option(func(o *gvrfactory.Options) { o.MarkSensitive(resources...) })
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
// not loaded. An object a transform (WithTransform, SetTransform) returns
// without the marker is refused (not cached, counted in
// cache.InformerStatus.TransformRefused). A nil p is ignored; a later call
// for the same resource replaces an earlier one. kinformer extension, not
// in client-go.
func WithProjection(gvr schema.GroupVersionResource, p *projection.Projection, config *rest.Config) DynamicSharedInformerOption {
	if config != nil {
		config = rest.CopyConfig(config)
	}
	return option(func(o *gvrfactory.Options) {
		o.Project(gvr, factoryengine.Projection{Projection: p, Config: config})
	})
}

// WithRESTConfig makes the factory's informers list and watch through a
// client of config instead of the factory's dynamic client: the same
// requests as client-go's dynamic client of config sends, with the JSON
// answers decoded by kinformer's unstructured decoder, which gives the same
// objects (deeply equal, numbers typed by apimachinery's rules, checked by
// differential tests and fuzzing against apimachinery's decoder) in about a
// quarter of the CPU time and allocations, with object keys shared across
// objects. A dynamic client gives no access to its REST client, so config
// is how the informers reach the server; projections (WithProjection) keep
// their own config. WithAPIMachineryDecoding keeps the factory's dynamic
// client for some resources. A nil config is ignored. kinformer extension,
// not in client-go.
func WithRESTConfig(config *rest.Config) DynamicSharedInformerOption {
	if config == nil {
		return nil
	}
	config = rest.CopyConfig(config)
	return option(func(o *gvrfactory.Options) { o.RESTConfig = config })
}

// WithAPIMachineryDecoding makes the informers of resources list and watch
// through the factory's dynamic client, decoding with apimachinery, even
// when WithRESTConfig gives the factory kinformer's decoder: to rule the
// decoder out when diagnosing. kinformer extension, not in client-go.
func WithAPIMachineryDecoding(resources ...schema.GroupVersionResource) DynamicSharedInformerOption {
	resources = slices.Clone(resources)
	return option(func(o *gvrfactory.Options) { o.DecodeWithAPIMachinery(resources...) })
}
