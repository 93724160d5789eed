package factoryengine

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/lean"
	"github.com/kinformer/kinformer/listadmission"
	"github.com/kinformer/kinformer/projection"
	"github.com/kinformer/kinformer/sharding"
)

// Options is the configuration of one factory: every With... option of the
// three factory packages sets one of its fields, and nothing else does.
// Options apply in the order given, a later one replacing an earlier one's
// value (the per-key maps add to each other instead). The zero value of
// every field means what the option's documentation says happens without
// the option; Default fills in the one default that is not a zero value.
// Once the factory's constructor has called Default, Options is read-only.
type Options[K comparable] struct {
	// Namespace restricts the informers of namespaced resources to one
	// namespace (WithNamespace); "" is every namespace.
	Namespace string
	// TweakListOptions edits every LIST and WATCH request's options
	// (WithTweakListOptions); nil changes nothing.
	TweakListOptions func(*metav1.ListOptions)
	// Transform is installed on every informer (WithTransform); nil: none.
	Transform cache.TransformFunc
	// MemoryLean makes every informer keep lean objects (WithMemoryLean),
	// after Transform, through one intern table per factory.
	MemoryLean bool
	// CustomResync gives the informers of some keys their own resync
	// period instead of the factory's default (the typed factory's
	// WithCustomResyncConfig).
	CustomResync map[K]time.Duration
	// InformerName names the informers for metrics (the typed factory's
	// WithInformerName); nil: unnamed, no metrics.
	InformerName *cache.InformerName
	// SyncOptions configures waiting for the informers to sync
	// (WithSyncOptions); the zero value waits for all of them.
	SyncOptions cache.SyncOptions

	// Informer holds the kinformer settings every informer of the factory
	// gets, each set by one With... option over the field of the same name
	// (WithRelistPageByPage, WithWatchIdleTimeout,
	// WithStalenessProbeInterval, WithMaxRetryAfter): a field left zero
	// keeps the informer's own setting, whose zero meaning
	// cache.SharedIndexInformerOptions documents and cache resolves. The
	// per-key and per-factory settings below are not set here.
	Informer cache.SharedIndexInformerOptions

	// Membership makes every informer the factory builds a sharded
	// informer over the ranges a member of a group holds (WithMembership);
	// the zero value: none, each informer keeps its whole resource (or the
	// static shard of Informer.Shard).
	Membership Membership

	// SnapshotDir is the directory of the informers' snapshot files
	// (WithSnapshotDir); "" means none. Sharded informers (Membership) get
	// none.
	SnapshotDir string
	// SnapshotKey encrypts the snapshot files (WithSnapshotEncryptionKey);
	// nil: plain files, and none for sensitive objects.
	SnapshotKey []byte
	// Sensitive marks keys whose objects are sensitive besides those that
	// always are (WithSensitiveResources).
	Sensitive map[K]bool
	// Projections holds the projection of some keys' informers
	// (WithProjection).
	Projections map[K]Projection

	// APIMachineryDecoding marks keys whose informers decode with
	// apimachinery's decoder instead of kinformer's (protobuf with the
	// generated decoders for the typed factory, JSON with the unstructured
	// decoder for the dynamic one; WithAPIMachineryDecoding).
	APIMachineryDecoding map[K]bool
	// RESTConfig is the config of the client the dynamic factory's informers
	// list and watch through, decoding with kinformer's unstructured JSON
	// decoder (its WithRESTConfig); nil: the factory's dynamic client.
	RESTConfig *rest.Config

	// ListAdmission admits the informers' lists (WithListAdmission); nil
	// turns admission off once ListAdmissionSet. Without the option,
	// Default gives the factory its own.
	ListAdmission *listadmission.Admission
	// ListAdmissionSet records that WithListAdmission was given.
	ListAdmissionSet bool
	// ListAdmissionPriorities holds the priorities of some keys' informers
	// in the list admission (WithListAdmissionPriority); others have 0.
	ListAdmissionPriorities map[K]int

	// lean is the intern table of MemoryLean, made by Default.
	lean *lean.Table
}

// Membership is what WithMembership says: the informers keep only the
// ranges Member holds, hashed by Key (cache.ShardByUID or
// cache.ShardByNamespace; "" means by uid). A nil Member means no
// membership.
type Membership struct {
	Member *sharding.Member
	Key    cache.ShardKey
}

// Projection is what WithProjection says about one key's informer: the
// fields to keep, and, for a client that gives no access to its transport
// (the dynamic client), the config of the client the informer reaches the
// server with (nil: the factory's client, projecting decoded objects).
type Projection struct {
	Projection *projection.Projection
	Config     *rest.Config
}

// Default gives o the defaults that are not zero values, once, before the
// factory builds its first informer: the factory's own list admission
// (listadmission.New with listadmission.Options{}) unless
// WithListAdmission chose one or none, and the intern table of MemoryLean.
func (o *Options[K]) Default() {
	if !o.ListAdmissionSet {
		o.ListAdmission, o.ListAdmissionSet = listadmission.New(listadmission.Options{}), true
	}
	if o.MemoryLean && o.lean == nil {
		o.lean = &lean.Table{}
	}
}

// Prioritize sets the list admission priority of keys' informers.
func (o *Options[K]) Prioritize(priority int, keys ...K) {
	for _, key := range keys {
		if o.ListAdmissionPriorities == nil {
			o.ListAdmissionPriorities = map[K]int{}
		}
		o.ListAdmissionPriorities[key] = priority
	}
}

// MarkSensitive marks the objects of keys' informers as sensitive.
func (o *Options[K]) MarkSensitive(keys ...K) {
	for _, key := range keys {
		if o.Sensitive == nil {
			o.Sensitive = map[K]bool{}
		}
		o.Sensitive[key] = true
	}
}

// DecodeWithAPIMachinery makes keys' informers decode with apimachinery's
// decoder.
func (o *Options[K]) DecodeWithAPIMachinery(keys ...K) {
	for _, key := range keys {
		if o.APIMachineryDecoding == nil {
			o.APIMachineryDecoding = map[K]bool{}
		}
		o.APIMachineryDecoding[key] = true
	}
}

// Project gives key's informer projection p (nil is ignored), replacing an
// earlier one.
func (o *Options[K]) Project(key K, p Projection) {
	if p.Projection == nil {
		return
	}
	if o.Projections == nil {
		o.Projections = map[K]Projection{}
	}
	o.Projections[key] = p
}

// ResyncPeriod returns the resync period of key's informer: its
// CustomResync period, or defaultResync.
func (o *Options[K]) ResyncPeriod(key K, defaultResync time.Duration) time.Duration {
	if d, ok := o.CustomResync[key]; ok {
		return d
	}
	return defaultResync
}

// InformerTransform returns the transform every informer gets: Transform,
// then the memory-lean step, either or both, or nil.
func (o *Options[K]) InformerTransform() cache.TransformFunc {
	return lean.Compose(o.Transform, o.lean)
}
