package cache

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	// the default RealFIFO. kinformer extension, not in client-go (there the
	// choice is made by feature gates).
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
	// Difference from client-go's DeltaFIFO informers: the cache's
	// resourceVersion is a watermark here too. client-go's store records
	// the version of every object it writes: popping a@12 while b@11 is
	// still queued makes it claim 12, a relist's or a resync's older objects
	// move it backwards. Here it only moves to a version once every change
	// the queue received up to it has been popped and applied, and a relist
	// moves it once all of it is applied.
	UseDeltaFIFO bool

	// RelistPageByPage applies relists page by page, as their pages
	// arrive, instead of atomically once complete (the default, as in
	// client-go). kinformer extension, not in client-go; off by default.
	// SetRelistPageByPage sets it before Run (informers.WithRelistPageByPage
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
	// (client-go's behaviour). kinformer extension. SetWatchIdleTimeout
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
	// kinformer extension; SetSnapshotFile sets it before Run.
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
	// kinformer extension; SetSnapshotScope sets it before Run.
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
	// extension; SetSnapshotProtection sets it before Run.
	SnapshotProtection SnapshotProtection

	// HandlerMetricsProvider, when not nil, times every notification the
	// informer's handlers handle, into the histograms it returns (see
	// HandlerMetricsProvider). nil times nothing. SetHandlerMetricsProvider
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
	// kinformer extension; SetStalenessProbeInterval sets it before Run.
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
	// by default. kinformer extension; SetListAdmission sets it before Run.
	ListAdmission *listadmission.Admission

	// ListAdmissionPriority orders the informer among those waiting for a
	// slot of ListAdmission: the highest first, and in the order they
	// asked among equals. Default 0. kinformer extension;
	// SetListAdmissionPriority sets it before Run.
	ListAdmissionPriority int

	// MaxRetryAfter is the longest Retry-After the informer's Reflector
	// honours before it retries a failed list or watch (see
	// ReflectorOptions.MaxRetryAfter): zero means
	// listadmission.DefaultMaxRetryAfter (60 s), negative no maximum. The
	// pause of a list admission has its own maximum
	// (listadmission.Options.MaxRetryAfter). kinformer extension;
	// SetMaxRetryAfter sets it before Run.
	MaxRetryAfter time.Duration
}

// informerConfig is the configuration of a sharedIndexInformer: assembled
// once from SharedIndexInformerOptions (see its config method) and given to
// newSharedIndexInformer. Until Run, the informer's Set methods and the
// package-level setters (SetSnapshotFile, SetWatchIdleTimeout, ...) change
// the informer's copy, under its startedLock and through configure; Run
// hands it on to the queue (informerQueueConfig), the controller (Config,
// controllerInternals) and through it the Reflector (reflectorConfig), and it
// does not change afterwards.
type informerConfig struct {
	// objectDescription is SharedIndexInformerOptions.ObjectDescription.
	objectDescription string
	// resyncPeriod is SharedIndexInformerOptions.ResyncPeriod: the default
	// resync period of handlers and the initial resync check period.
	resyncPeriod time.Duration
	// indexers are the cache's initial indices.
	indexers Indexers
	// identifier and metricsProvider are SharedIndexInformerOptions'
	// Identifier and InformerMetricsProvider.
	identifier      InformerNameAndResource
	metricsProvider InformerMetricsProvider
	// useDeltaFIFO is SharedIndexInformerOptions.UseDeltaFIFO.
	useDeltaFIFO bool
	// relistPageByPage is SharedIndexInformerOptions.RelistPageByPage
	// (SetRelistPageByPage).
	relistPageByPage bool
	// watchIdleTimeout is SharedIndexInformerOptions.WatchIdleTimeout
	// (SetWatchIdleTimeout): zero means the default, negative none.
	watchIdleTimeout time.Duration
	// snapshotFile and snapshotScope are SharedIndexInformerOptions'
	// SnapshotFile and SnapshotScope (SetSnapshotFile, SetSnapshotScope).
	snapshotFile  string
	snapshotScope string
	// snapshotCluster is SharedIndexInformerOptions.SnapshotCluster.
	snapshotCluster func(ctx context.Context) (string, error)
	// snapshotProjection is the fingerprint SetSnapshotProjection sets.
	snapshotProjection string
	// snapshotProtection is SharedIndexInformerOptions.SnapshotProtection
	// (SetSnapshotProtection).
	snapshotProtection SnapshotProtection
	// transform is set by SetTransform.
	transform TransformFunc
	// transformCheck is set by SetTransformCheck.
	transformCheck func(obj interface{}) error
	// watchErrorHandler is set by SetWatchErrorHandler and
	// SetWatchErrorHandlerWithContext.
	watchErrorHandler WatchErrorHandlerWithContext
	// handlerMetrics is SharedIndexInformerOptions.HandlerMetricsProvider,
	// the processor's provider at construction (SetHandlerMetricsProvider
	// changes the processor's, not this one).
	handlerMetrics HandlerMetricsProvider
	// stalenessProbeInterval is
	// SharedIndexInformerOptions.StalenessProbeInterval
	// (SetStalenessProbeInterval): zero means the default, negative none.
	stalenessProbeInterval time.Duration
	// listAdmission and listAdmissionPriority are
	// SharedIndexInformerOptions' ListAdmission and ListAdmissionPriority
	// (SetListAdmission, SetListAdmissionPriority).
	listAdmission         *listadmission.Admission
	listAdmissionPriority int
	// maxRetryAfter is SharedIndexInformerOptions.MaxRetryAfter
	// (SetMaxRetryAfter): zero means the default, negative none.
	maxRetryAfter time.Duration
}

// config returns the informerConfig of options.
func (options SharedIndexInformerOptions) config() informerConfig {
	return informerConfig{
		objectDescription:  options.ObjectDescription,
		resyncPeriod:       options.ResyncPeriod,
		indexers:           options.Indexers,
		identifier:         options.Identifier,
		metricsProvider:    options.InformerMetricsProvider,
		useDeltaFIFO:       options.UseDeltaFIFO,
		relistPageByPage:   options.RelistPageByPage,
		watchIdleTimeout:   options.WatchIdleTimeout,
		snapshotFile:       options.SnapshotFile,
		snapshotScope:      options.SnapshotScope,
		snapshotCluster:    options.SnapshotCluster,
		snapshotProtection: options.SnapshotProtection.clone(),
		handlerMetrics:     options.HandlerMetricsProvider,

		stalenessProbeInterval: options.StalenessProbeInterval,
		listAdmission:          options.ListAdmission,
		listAdmissionPriority:  options.ListAdmissionPriority,
		maxRetryAfter:          options.MaxRetryAfter,
	}
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

// configureBeforeRun is configure for the package-level setters: it reaches
// the informer through sharedOf, and what names the setting in its errors
// (for a nil informer, one not built by this package, and one that has
// started already).
func configureBeforeRun(informer SharedInformer, what string, set func(*informerConfig)) error {
	if informer == nil {
		return fmt.Errorf("cannot set %s of a nil informer", what)
	}
	s := sharedOf(informer)
	if s == nil {
		return fmt.Errorf("cannot set %s of an informer of type %T: it is not built by kinformer's cache package", what, informer)
	}
	if err := s.configure(set); err != nil {
		return fmt.Errorf("cannot set %s: %w", what, err)
	}
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

// SetRelistPageByPage makes informer apply its relists page by page, or
// atomically again (see SharedIndexInformerOptions.RelistPageByPage). It is
// how the typed factory (package informers), whose informers client-go's
// NewInformerFunc builds without options, applies
// informers.WithRelistPageByPage. kinformer extension, not in client-go.
//
// It returns an error for a nil informer, one not built by this package,
// and one that has started already.
func SetRelistPageByPage(informer SharedInformer, pageByPage bool) error {
	return configureBeforeRun(informer, "the relist mode", func(c *informerConfig) { c.relistPageByPage = pageByPage })
}

// SetWatchIdleTimeout sets the watch liveness deadline of informer (see
// SharedIndexInformerOptions.WatchIdleTimeout: zero means the default,
// negative turns it off). It is how the typed factory (package informers)
// applies its option to the informers it builds. kinformer extension, not in
// client-go.
//
// It returns an error for a nil informer, one not built by this package, and
// one that has started already.
func SetWatchIdleTimeout(informer SharedInformer, d time.Duration) error {
	return configureBeforeRun(informer, "the watch idle timeout", func(c *informerConfig) { c.watchIdleTimeout = d })
}

// SetStalenessProbeInterval sets how long informer goes without a
// confirmation of its cache's resourceVersion before it probes the server
// (see SharedIndexInformerOptions.StalenessProbeInterval: zero means
// DefaultStalenessProbeInterval, negative turns probing off). It is how the
// typed factory (package informers) applies its option to the informers it
// builds. kinformer extension, not in client-go.
//
// It returns an error for a nil informer, one not built by this package, and
// one that has started already.
func SetStalenessProbeInterval(informer SharedInformer, d time.Duration) error {
	return configureBeforeRun(informer, "the staleness probe interval", func(c *informerConfig) { c.stalenessProbeInterval = d })
}

// SetSnapshotFile makes informer persist its cache and resourceVersion to
// path when it stops, and resume from that file when it starts (see
// SharedIndexInformerOptions.SnapshotFile); "" turns it off. It is how the
// typed factory (package informers) applies its snapshot directory; the
// dynamic and metadata factories pass SharedIndexInformerOptions instead.
// kinformer extension, not in client-go.
//
// It returns an error for a nil informer, one not built by this package, and
// one that has started already.
func SetSnapshotFile(informer SharedInformer, path string) error {
	return configureBeforeRun(informer, "the snapshot file", func(c *informerConfig) { c.snapshotFile = path })
}

// SetSnapshotProtection sets which objects informer may write to its
// snapshot file and whether it encrypts them (see SnapshotProtection and
// SharedIndexInformerOptions.SnapshotProtection); the key is copied. It
// fails for a key that is not SnapshotKeySize bytes long, and once the
// informer has started. It is how the factories (package informers, and
// the dynamic and metadata factories) apply their WithSnapshotEncryptionKey
// and sensitive-type options. kinformer extension, not in client-go.
func SetSnapshotProtection(informer SharedInformer, protection SnapshotProtection) error {
	if protection.Key != nil {
		if err := checkSnapshotKey(protection.Key); err != nil {
			return fmt.Errorf("cannot set the snapshot protection: %w", err)
		}
	}
	protection = protection.clone()
	return configureBeforeRun(informer, "the snapshot protection", func(c *informerConfig) { c.snapshotProtection = protection })
}

// SetSnapshotProjection ties an informer's snapshot file to the projection
// its objects are read with (the fingerprint of a projection.Projection;
// empty for full objects): a snapshot records it, and one written under
// another projection is not loaded (it is reported like one of another
// scope, and the informer lists instead). The informer factories call it
// for the informers they give a projection. kinformer extension, not in
// client-go.
//
// It returns an error for a nil informer, one not built by this package, and
// one that has started already.
func SetSnapshotProjection(informer SharedInformer, fingerprint string) error {
	return configureBeforeRun(informer, "the snapshot projection", func(c *informerConfig) { c.snapshotProjection = fingerprint })
}

// SetTransformCheck makes the informer check every object its transform
// (SetTransform) returns: an object check refuses (a non-nil error) does not
// reach the cache, and is counted in the informer's status
// (InformerStatus's TransformRefused). A list goes on without it (a cached
// state of it is removed, as for an object the list no longer has); an
// added or updated object of a watch event is logged and skipped (a cached
// state of it stays until the next relist); a deletion is still applied, its
// handlers getting a DeletedFinalStateUnknown without object. Without a transform nothing is checked. The
// projected informers of kinformer's factories use it to refuse the objects
// a transform leaves without the projection's marker (see package
// projection). check is called from the informer's goroutines, one object
// at a time. kinformer extension, not in client-go.
//
// It returns an error for a nil informer, one not built by this package, and
// one that has started already.
func SetTransformCheck(informer SharedInformer, check func(obj interface{}) error) error {
	return configureBeforeRun(informer, "the transform check", func(c *informerConfig) { c.transformCheck = check })
}

// SetSnapshotScope sets the scope an informer's snapshot file is tied to
// (see SharedIndexInformerOptions.SnapshotScope). It is how the typed
// factory (package informers) ties its snapshot files to its namespace and
// list options; the dynamic and metadata factories pass
// SharedIndexInformerOptions instead. kinformer extension, not in client-go.
//
// It returns an error for a nil informer, one not built by this package, and
// one that has started already.
func SetSnapshotScope(informer SharedInformer, scope string) error {
	return configureBeforeRun(informer, "the snapshot scope", func(c *informerConfig) { c.snapshotScope = scope })
}

// SetHandlerMetricsProvider makes informer time every notification its
// handlers (registered now or later) handle, into the histograms provider
// returns; a nil provider stops the timing. A later call replaces the
// provider for handlers registered afterwards and for those registered
// before. Without a provider, handlers are not timed at all (no clock
// reads). SharedIndexInformerOptions.HandlerMetricsProvider sets the first
// provider at construction. It fails for informers not built by this
// package. Safe for concurrent use, also while the informer runs.
func SetHandlerMetricsProvider(informer SharedInformer, provider HandlerMetricsProvider) error {
	s := sharedOf(informer)
	if s == nil {
		return fmt.Errorf("cannot time the handlers of an informer of type %T: only informers of this package support it", informer)
	}
	s.processor.SetHandlerLatency(handlerLatencyOf(provider))
	return nil
}

// SetListAdmission makes informer admit its lists through admission (see
// SharedIndexInformerOptions.ListAdmission); nil turns admission off. It is
// how the typed factory (package informers) gives its informers the
// factory's list admission. kinformer extension, not in client-go.
//
// It returns an error for a nil informer, one not built by this package,
// and one that has started already.
func SetListAdmission(informer SharedInformer, admission *listadmission.Admission) error {
	return configureBeforeRun(informer, "the list admission", func(c *informerConfig) { c.listAdmission = admission })
}

// SetListAdmissionPriority sets informer's place among the informers waiting
// for a slot of their list admission (see
// SharedIndexInformerOptions.ListAdmissionPriority: higher first). kinformer
// extension, not in client-go.
//
// It returns an error for a nil informer, one not built by this package,
// and one that has started already.
func SetListAdmissionPriority(informer SharedInformer, priority int) error {
	return configureBeforeRun(informer, "the list admission priority", func(c *informerConfig) { c.listAdmissionPriority = priority })
}

// SetMaxRetryAfter sets the longest Retry-After informer's Reflector honours
// (see SharedIndexInformerOptions.MaxRetryAfter: zero means
// listadmission.DefaultMaxRetryAfter, negative no maximum). It is how the
// factories pass their WithMaxRetryAfter option on. kinformer extension,
// not in client-go.
//
// It returns an error for a nil informer, one not built by this package,
// and one that has started already.
func SetMaxRetryAfter(informer SharedInformer, d time.Duration) error {
	return configureBeforeRun(informer, "the maximum Retry-After", func(c *informerConfig) { c.maxRetryAfter = d })
}
