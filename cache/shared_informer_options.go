package cache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kinformer/kinformer/cache/internal/reflector"
	"github.com/kinformer/kinformer/listadmission"
)

// SharedIndexInformerOptions configures NewSharedIndexInformerWithOptions.
type SharedIndexInformerOptions struct {
	// ResyncPeriod is the default resync period of handlers and the
	// initial resync check period; 0 disables resyncs.
	ResyncPeriod time.Duration

	// Indexers are the cache's initial indices.
	Indexers Indexers

	// ObjectDescription describes the objects in the Reflector's log
	// messages.
	ObjectDescription string

	// Identifier names the informer for metrics and logs; metrics are only
	// published when it is set.
	Identifier InformerNameAndResource

	// InformerMetricsProvider provides the metrics; nil means the global
	// provider (see SetInformerMetricsProvider).
	InformerMetricsProvider InformerMetricsProvider

	// UseDeltaFIFO selects the DeltaFIFO as the informer's queue instead of
	// the default RealFIFO. kinformer extension, not in client-go, whose
	// informers always use a RealFIFO (its InOrderInformers gate is locked
	// on).
	//
	// The default RealFIFO delivers every change in watch order; a relist
	// swaps the cache in one step and then notifies deletes (as
	// DeletedFinalStateUnknown) for vanished objects, then adds and updates
	// in list order, as client-go v0.37 does; queued changes are applied in
	// batches, each in one store transaction. The DeltaFIFO coalesces the
	// changes queued for one key and is kept for code that depends on that
	// behaviour; it has client-go's DeltaFIFO semantics: a relist queues a
	// Replaced delta per listed object, then the deletions, and they are
	// applied key by key in queue order, so listers see the relist applied
	// partly while it is processed and handlers get its deletions last; the
	// listed objects are passed as decoded (no cached object is kept in
	// their place); bookmarks do not reach the cache.
	//
	// Difference from a controller built by hand around client-go's
	// DeltaFIFO: the cache's resourceVersion is a watermark here too.
	// client-go's store records
	// the version of every object it writes: popping a@12 while b@11 is
	// still queued makes it claim 12, a relist's or a resync's older objects
	// move it backwards. Here it only moves to a version once every change
	// the queue received up to it has been popped and applied, and a relist
	// moves it once all of it is applied.
	UseDeltaFIFO bool

	// RelistPageByPage applies relists page by page, as their pages
	// arrive, instead of atomically once complete (the default, as in
	// client-go). kinformer extension, not in client-go; off by default.
	// ConfigureInformer sets it before Run (informers.WithRelistPageByPage
	// for a factory's informers).
	//
	// What it saves: a relist never holds the old cache and the changed
	// listed objects together; at most two pages (500 objects each) are in
	// flight. What it costs: relists are requested in pages even where the
	// API server's watch cache could answer them in one piece (paged
	// requests at a resourceVersion are served from etcd, which costs the
	// server more); while a relist runs, listers see partial states (some
	// objects already in their new state, others still in their old one,
	// objects the server no longer has), and handlers are told of each page
	// as it is applied; the relist's deletions (DeletedFinalStateUnknown,
	// in key order) come after its updates and adds instead of before them;
	// a relist that fails midway leaves what its pages applied, and the
	// next one reports those objects again. The first list is always
	// applied whole. The cache's resourceVersion does not move until a
	// relist is complete, so WaitForResourceVersion and
	// LastStoreSyncResourceVersion keep relying on the version the cache had
	// before it, and no snapshot is written until it is complete.
	// With UseDeltaFIFO the pages are queued as Replaced deltas, and the
	// deletions after them, in the DeltaFIFO's own order.
	RelistPageByPage bool

	// WatchIdleTimeout is the watch liveness deadline: a watch that has
	// received a periodic bookmark from the server and then gets no event
	// and no bookmark for this long is reopened from the last
	// resourceVersion, without a relist. A watch without a periodic
	// bookmark yet, and a streaming list, are never cut for silence; watch
	// requests ask client-go's timeouts either way (see
	// ReflectorOptions.WatchIdleTimeout). Zero means
	// DefaultWatchIdleTimeout (2 minutes); negative turns it off
	// (client-go's behaviour). kinformer extension. ConfigureInformer
	// changes it before Run.
	WatchIdleTimeout time.Duration

	// SnapshotFile, when not empty, makes the informer warm-restartable:
	// when it stops after having synced, it writes its cache and the
	// resourceVersion the cache reached to this file (atomically: a
	// temporary file renamed over it). That resourceVersion is the cache's
	// watermark: every change up to it is in the file, so a snapshot taken
	// during an atomic relist resumes from the version the cache had before
	// the relist and misses nothing the relist would have found. A file
	// only ever holds one consistent state at its resourceVersion: an
	// informer stopped while its cache mixes states (a relist applied page
	// by page, RelistPageByPage, or any DeltaFIFO relist, partly applied;
	// with UseDeltaFIFO, any change still queued, since that queue pops per
	// key and not in watch order) writes nothing, counts it
	// (InformerStatus.SnapshotsSkipped) and leaves the file it had, which
	// the next run resumes from (older, but consistent). When it
	// starts and the file exists,
	// it loads it instead of listing, so its handlers get an add (with
	// isInInitialList true) for every loaded object, it counts as synced
	// once those are delivered, and it watches from the snapshot's
	// resourceVersion, so that only the changes made meanwhile follow.
	// When the server answers 410 Gone (the version is too old), it lists
	// and reconciles against the loaded cache as any relist does: updates
	// for the objects still there, deletes (DeletedFinalStateUnknown) for
	// those gone, adds for new ones. A file that is corrupt, truncated, of
	// another object type, another scope (SnapshotScope) or another format
	// version is rejected: logged, passed to the watch error handler as a
	// *SnapshotError, and the informer lists as usual. Objects are stored in their API types'
	// protobuf encoding where they have one, as JSON otherwise
	// (unstructured objects included), with a CRC-32C checksum. The file
	// must not be shared by informers running at the same time.
	// kinformer extension; ConfigureInformer sets it before Run.
	//
	// The transform (SetTransform) is not applied again to the loaded
	// objects: they are the cache's objects as they were saved, so they
	// went through it once already, when they came from the server. This
	// keeps SetTransform's promise (applied exactly once to every object
	// received from the server) and client-go's, which asks a transform to
	// be idempotent only when cached objects are passed to Replace, which
	// default informers never do. So a transform that is changed between
	// runs applies to a loaded object only once the server sends it again
	// (an update, or the relist after a 410); remove the snapshot file when
	// the transform changes what the cache keeps.
	SnapshotFile string

	// SnapshotScope names which objects of the type the ListerWatcher
	// selects, in a stable text form (SnapshotScopeFor builds it from a
	// namespace and list options). It is part of the snapshot file's
	// identity: a file written under another scope (another namespace,
	// label or field selector) is rejected as a *SnapshotError, and the
	// informer lists as usual, instead of loading objects its own list
	// would not return. "" is the scope of an unrestricted informer.
	// kinformer extension; ConfigureInformer sets it before Run.
	SnapshotScope string

	// SnapshotCluster, when set, returns the identity of the cluster the
	// ListerWatcher reads, such as the UID of its kube-system namespace
	// (which survives a cluster rebuilt at the same address, unlike the
	// address itself). The informer calls it once per Run, before it reads
	// its snapshot file, and ties the file to the identity as to the
	// scope: a file written against another cluster is rejected as a
	// *SnapshotError. An error, or an empty identity, means the cluster
	// is not known: no snapshot is read or written in that run (the
	// informer lists as usual, and says so in its log). kinformer
	// extension; the dynamic and metadata factories set it.
	SnapshotCluster func(ctx context.Context) (string, error)

	// SnapshotProtection says which objects may be written to SnapshotFile
	// and how: by default the objects of a sensitive type (Secrets always,
	// and any informer marked Sensitive) are never written, and other files
	// are plain; with a Key every file is encrypted and authenticated, and
	// sensitive objects are written too. See SnapshotProtection. kinformer
	// extension; ConfigureInformer sets it before Run.
	SnapshotProtection SnapshotProtection

	// SnapshotProjection ties the snapshot file to the projection the
	// informer's objects are read with (the fingerprint of a
	// projection.Projection; empty for full objects): a snapshot records it,
	// and one written under another projection is not loaded (it is
	// reported like one of another scope, and the informer lists instead).
	// The factories set it for the informers they give a projection.
	// kinformer extension.
	SnapshotProjection string

	// TransformCheck, when not nil, checks every object the transform
	// (SetTransform) returns: an object it refuses (a non-nil error) does
	// not reach the cache, and is counted in the informer's status
	// (InformerStatus.TransformRefused). A list goes on without it (a cached
	// state of it is removed, as for an object the list no longer has); an
	// added or updated object of a watch event is logged and skipped (a
	// cached state of it stays until the next relist); a deletion is still
	// applied, its handlers getting a DeletedFinalStateUnknown without
	// object. Without a transform nothing is checked. The projected
	// informers of kinformer's factories use it to refuse the objects a
	// transform leaves without the projection's marker (see package
	// projection). It is called from the informer's goroutines, one object
	// at a time. kinformer extension.
	TransformCheck func(obj interface{}) error

	// TransformPrepare, when not nil, is called on every object before the
	// transform (SetTransform) sees it, and the transform gets what it
	// returns; without a transform it is not called. The projected
	// informers of kinformer's factories use it to give an object whose
	// annotations are the map its projection shares among objects a map
	// of its own, since a transform may modify the object it is given
	// (projection.Projection.UnshareMarker). It is called from the
	// informer's goroutines, one object at a time. kinformer extension.
	TransformPrepare func(obj interface{}) interface{}

	// HandlerMetricsProvider, when not nil, times every notification the
	// informer's handlers handle, into the histograms it returns (see
	// HandlerMetricsProvider). nil times nothing. ConfigureInformer
	// replaces it at any time, also while the informer runs. kinformer
	// extension.
	HandlerMetricsProvider HandlerMetricsProvider

	// StalenessProbeInterval is how long the informer, once synced, goes
	// without the server confirming a resourceVersion as current before it
	// asks: a LIST of one object (limit=1, resourceVersion "", a consistent
	// read) whose list resourceVersion confirms the cache once the cache
	// has reached it (see InformerStatus.Confirmed). Bookmarks, which
	// kube-apiserver's watch cache sends about once a minute, and lists
	// confirm too, so with the default (zero: DefaultStalenessProbeInterval,
	// 2 minutes) an informer served by a watch cache makes no probe.
	// Negative turns probing off. The probe stops with the informer.
	// kinformer extension; ConfigureInformer sets it before Run.
	StalenessProbeInterval time.Duration

	// ListAdmission, when not nil, limits the informer's initial list and
	// relists together with those of the other informers sharing it: the
	// informer waits for a slot before each LIST or streaming list, holds
	// it until the list is complete (its last page, or the bookmark that
	// ends a streaming list's initial events) or failed, and a 429 it gets
	// slows the lists of the whole group down (see package listadmission).
	// Only the moment lists are requested changes; what listers and
	// handlers observe does not. nil (the default of an informer built
	// alone): no limit, as in client-go. The factories set one per factory
	// by default. kinformer extension; ConfigureInformer sets it before Run.
	ListAdmission *listadmission.Admission

	// ListAdmissionPriority orders the informer among those waiting for a
	// slot of ListAdmission: the highest first, and in the order they
	// asked among equals. Default 0. kinformer extension;
	// ConfigureInformer sets it before Run.
	ListAdmissionPriority int

	// MaxRetryAfter is the longest Retry-After the informer's Reflector
	// honours before it retries a failed list or watch (see
	// ReflectorOptions.MaxRetryAfter): zero means
	// listadmission.DefaultMaxRetryAfter (60 s), negative no maximum. The
	// pause of a list admission has its own maximum
	// (listadmission.Options.MaxRetryAfter). kinformer extension;
	// ConfigureInformer sets it before Run.
	MaxRetryAfter time.Duration

	// Shard, when not zero, makes the informer keep one shard of its
	// resource: its requests carry the shard selector, and it keeps only
	// the objects whose hash falls in Shard's ranges, whatever the server
	// sends (see Shard for the keys' trade-offs, how a server that ignores
	// the selector is detected and reported, and what the degraded mode
	// costs). Zero (the default): the whole resource, and requests exactly
	// as client-go's. An invalid Shard (see Shard.Validate) is not
	// refused here, nor by ConfigureInformer: the informer then sends no
	// request, and each of its list attempts fails with an error wrapping
	// ErrInvalidShard, passed to the watch error handler and reported by
	// WaitForCacheSyncWithOptions (IsPermanentSyncError is true for it).
	// The ranges are copied. kinformer extension; ConfigureInformer sets it
	// before Run (informers.WithShard for a factory's informers).
	Shard Shard
}

// informerConfig is the configuration of a sharedIndexInformer as its user
// gave it: the options it was built with, which ConfigureInformer changes
// before Run, and what SetTransform and the SetWatchErrorHandler methods
// set. Its fields keep the zero meanings SharedIndexInformerOptions
// documents; RunWithContext resolves them, once, into the effective
// settings of the queue, the controller and the Reflector (resolve), and
// nothing below that step sees an unresolved value. It is guarded by the
// informer's startedLock until Run and read-only from then on.
type informerConfig struct {
	SharedIndexInformerOptions
	// transform is set by SetTransform.
	transform TransformFunc
	// watchErrorHandler is set by SetWatchErrorHandler and
	// SetWatchErrorHandlerWithContext.
	watchErrorHandler WatchErrorHandlerWithContext
}

// newInformerConfig returns the configuration of an informer built with
// options, keeping its own copy of what the caller could change later (the
// snapshot key).
func newInformerConfig(options SharedIndexInformerOptions) informerConfig {
	options.SnapshotProtection = options.SnapshotProtection.clone()
	options.Shard = options.Shard.clone()
	return informerConfig{SharedIndexInformerOptions: options}
}

// informerSettings are the effective settings of one run of an informer,
// resolved from its informerConfig by resolve: every default applied, every
// "off" a zero.
type informerSettings struct {
	// queue builds the informer's queue.
	queue informerQueueConfig
	// reflector builds the controller's Reflector.
	reflector reflectorConfig
	// probeInterval is the staleness probe's interval; zero: no probe.
	probeInterval time.Duration
}

// resolve is the one defaulting step of an informer's options: it maps
// every option's documented zero and negative meanings to the effective
// value (a default, or zero for "off"). transform is the transform the
// queue applies (the configured one, checked by TransformCheck).
func (c informerConfig) resolve(objectType runtime.Object, transform TransformFunc) informerSettings {
	filter, shardErr := c.Shard.filter()
	return informerSettings{
		queue: informerQueueConfig{
			objectType:      objectType,
			transform:       transform,
			identifier:      c.Identifier,
			metricsProvider: c.InformerMetricsProvider,
			useDeltaFIFO:    c.UseDeltaFIFO,
			pageByPage:      c.RelistPageByPage,
		},
		reflector: reflectorConfig{
			typeDescription:   c.ObjectDescription,
			watchErrorHandler: c.watchErrorHandler,
			admission:         listAdmitterOf(c.ListAdmission),
			shardErr:          shardErr,
			engine: reflector.Settings{
				ResyncPeriod:         c.ResyncPeriod,
				MinWatchTimeout:      reflectorMinWatchTimeout,
				Backoff:              defaultReflectorBackoff(),
				MaxRetryAfter:        defaultedOrOff(c.MaxRetryAfter, listadmission.DefaultMaxRetryAfter),
				WatchIdleTimeout:     defaultedOrOff(c.WatchIdleTimeout, DefaultWatchIdleTimeout),
				InitialEventsTimeout: reflectorInitialEventsTimeout,
				AdmissionPriority:    c.ListAdmissionPriority,
				Shard:                filter,
			},
		},
		probeInterval: defaultedOrOff(c.StalenessProbeInterval, DefaultStalenessProbeInterval),
	}
}

// defaultedOrOff is the meaning of a duration option whose zero value is a
// default and whose negative values turn it off: def for zero, zero (off)
// for a negative d, d otherwise.
func defaultedOrOff(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// errInformerStarted is what changing the configuration of an informer
// that has started returns.
var errInformerStarted = errors.New("informer has already started")

// configure changes the informer's configuration with set, or returns
// errInformerStarted once the informer has started.
func (s *sharedIndexInformer) configure(set func(*informerConfig)) error {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	if s.started {
		return errInformerStarted
	}
	set(&s.config)
	return nil
}

func (s *sharedIndexInformer) SetWatchErrorHandler(handler WatchErrorHandler) error {
	if handler == nil {
		return s.SetWatchErrorHandlerWithContext(nil)
	}
	return s.SetWatchErrorHandlerWithContext(func(_ context.Context, r *Reflector, err error) {
		handler(r, err)
	})
}

func (s *sharedIndexInformer) SetWatchErrorHandlerWithContext(handler WatchErrorHandlerWithContext) error {
	return s.configure(func(c *informerConfig) { c.watchErrorHandler = handler })
}

func (s *sharedIndexInformer) SetTransform(handler TransformFunc) error {
	return s.configure(func(c *informerConfig) { c.transform = handler })
}

// ConfigureInformer is the one way to give kinformer's options to an informer
// built without them: by client-go's constructors (NewSharedInformer,
// NewSharedIndexInformer), which the generated typed informers use, or by a
// library that calls them. change is called with the informer's kinformer
// options, the fields of SharedIndexInformerOptions that client-go's struct
// does not have (ResyncPeriod, Indexers, ObjectDescription, Identifier and
// InformerMetricsProvider are zero on the way in), and what it leaves there
// becomes the informer's configuration, with the meaning each field
// documents. Before the informer runs, every kinformer field may change;
// once it has started, only HandlerMetricsProvider may (it takes effect at
// once, for the handlers registered before and after). change runs under
// the informer's lock and must not call the informer. kinformer extension,
// not in client-go.
//
// It returns an error, and changes nothing, for a nil informer or change, an
// informer not built by this package, a change that sets one of client-go's
// fields (they are fixed at construction), a SnapshotProtection key that is
// not SnapshotKeySize bytes long, and a change to any field but
// HandlerMetricsProvider once the informer has started.
func ConfigureInformer(informer SharedInformer, change func(options *SharedIndexInformerOptions)) error {
	if change == nil {
		return errors.New("cannot configure an informer with a nil change")
	}
	if informer == nil {
		return errors.New("cannot configure a nil informer")
	}
	s := sharedOf(informer)
	if s == nil {
		return fmt.Errorf("cannot configure an informer of type %T: it is not built by kinformer's cache package", informer)
	}
	if err := s.configureOptions(change); err != nil {
		return fmt.Errorf("cannot configure the informer: %w", err)
	}
	return nil
}

// configureOptions is ConfigureInformer for an informer of this package.
func (s *sharedIndexInformer) configureOptions(change func(options *SharedIndexInformerOptions)) error {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	current := s.config.SharedIndexInformerOptions
	current.HandlerMetricsProvider = s.handlerMetrics
	before := kinformerFields(current)
	options := kinformerFields(current)
	options.SnapshotProtection = options.SnapshotProtection.clone()
	options.Shard = options.Shard.clone()
	change(&options)
	options.SnapshotProtection = options.SnapshotProtection.clone()
	options.Shard = options.Shard.clone()
	if err := checkKinformerOnly(options); err != nil {
		return err
	}
	if options.SnapshotProtection.Key != nil {
		if err := checkSnapshotKey(options.SnapshotProtection.Key); err != nil {
			return err
		}
	}
	if s.started {
		// The configuration is read without the lock once the informer
		// runs: only the handler timing, which the processor holds, may
		// change.
		changed := options
		changed.HandlerMetricsProvider = before.HandlerMetricsProvider
		if !sameOptions(before, changed) {
			return fmt.Errorf("%w: only HandlerMetricsProvider can change", errInformerStarted)
		}
	} else {
		options.ResyncPeriod, options.Indexers = current.ResyncPeriod, current.Indexers
		options.ObjectDescription, options.Identifier = current.ObjectDescription, current.Identifier
		options.InformerMetricsProvider = current.InformerMetricsProvider
		s.config.SharedIndexInformerOptions = options
	}
	s.handlerMetrics = options.HandlerMetricsProvider
	s.processor.SetHandlerLatency(handlerLatencyOf(options.HandlerMetricsProvider))
	return nil
}

// kinformerFields returns options with client-go's fields zeroed.
func kinformerFields(options SharedIndexInformerOptions) SharedIndexInformerOptions {
	options.ResyncPeriod, options.Indexers, options.ObjectDescription = 0, nil, ""
	options.Identifier, options.InformerMetricsProvider = InformerNameAndResource{}, nil
	return options
}

// sameOptions reports whether a and b hold the same settings: functions
// and pointers are compared by identity, the snapshot key by its bytes.
// It walks the struct's fields, so that a field added later is compared
// without a change here.
func sameOptions(a, b SharedIndexInformerOptions) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		fa, fb := va.Field(i), vb.Field(i)
		switch fa.Kind() {
		case reflect.Func, reflect.Pointer, reflect.Map:
			if fa.Pointer() != fb.Pointer() {
				return false
			}
		case reflect.Interface:
			if fa.IsNil() != fb.IsNil() || (!fa.IsNil() && !sameInterface(fa, fb)) {
				return false
			}
		default:
			if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
				return false
			}
		}
	}
	return true
}

// sameInterface compares two non-nil interface values: by identity when
// their dynamic values are pointers, by equality when they are comparable.
func sameInterface(a, b reflect.Value) bool {
	ea, eb := a.Elem(), b.Elem()
	if ea.Type() != eb.Type() {
		return false
	}
	switch ea.Kind() {
	case reflect.Pointer, reflect.Func, reflect.Map, reflect.Chan, reflect.UnsafePointer, reflect.Slice:
		return ea.Pointer() == eb.Pointer()
	}
	if ea.Comparable() {
		return ea.Equal(eb)
	}
	return false
}

// checkKinformerOnly returns an error naming the first of client-go's fields
// options sets.
func checkKinformerOnly(options SharedIndexInformerOptions) error {
	var set string
	switch {
	case options.ResyncPeriod != 0:
		set = "ResyncPeriod"
	case options.Indexers != nil:
		set = "Indexers"
	case options.ObjectDescription != "":
		set = "ObjectDescription"
	case options.Identifier != InformerNameAndResource{}:
		set = "Identifier"
	case options.InformerMetricsProvider != nil:
		set = "InformerMetricsProvider"
	default:
		return nil
	}
	return fmt.Errorf("%s is fixed when the informer is built", set)
}
