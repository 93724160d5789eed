package cache

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/naming"
	"k8s.io/apimachinery/pkg/util/wait"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/util/watchlist"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache/internal/diag"
	"github.com/kinformer/kinformer/cache/internal/reflector"
	"github.com/kinformer/kinformer/listadmission"
)

// defaultExpectedTypeName is the type description of a Reflector built
// without an expected type.
const defaultExpectedTypeName = "<unspecified>"

// The Reflector's timing defaults; they are client-go's.
const (
	// Watches ask the server for a timeout drawn from
	// [minWatchTimeout, 2*minWatchTimeout), which spreads reconnections.
	reflectorMinWatchTimeout = 5 * time.Minute

	// Retries back off exponentially from 0.8s with full jitter (each
	// delay is drawn from [d, 2d)) up to a cap of 30s, so an unreachable
	// server sees a request every 30-60s at worst.
	reflectorBackoffInitial = 800 * time.Millisecond
	reflectorBackoffCap     = 30 * time.Second
	reflectorBackoffFactor  = 2.0
	reflectorBackoffJitter  = 1.0
	// After this long without a failure the backoff starts over from its
	// initial delay.
	reflectorBackoffReset = 2 * time.Minute
	// A streaming list that receives no event at all for this long while
	// its end bookmark is pending is stopped, and the Reflector falls back
	// to LIST. It is the moment client-go starts warning: a server that
	// streams the initial events has sent something by then.
	reflectorInitialEventsTimeout = 10 * time.Second
)

// ReflectorStore is what a Reflector writes to: the part of Store it uses.
// The Reflector calls it from one goroutine at a time (its driver), except
// that Resync runs on the resync timer's goroutine.
type ReflectorStore interface {
	// Add records that obj was added (a watch ADDED event).
	Add(obj interface{}) error

	// Update records that obj changed (a watch MODIFIED event).
	Update(obj interface{}) error

	// Delete records that obj was deleted (a watch DELETED event; obj is
	// the last state the server reported).
	Delete(obj interface{}) error

	// Replace replaces the whole content with the given list, which was
	// current at resourceVersion. The store owns the list afterwards; the
	// Reflector does not touch it again.
	Replace([]interface{}, string) error

	// Resync is called every resync period (see ShouldResync); what it
	// does depends on the store (a DeltaFIFO queues Sync deltas, a plain
	// store does nothing).
	Resync() error
}

// ReflectorBookmarkStore is an optional interface of a ReflectorStore: when
// the store implements it, the Reflector passes the resourceVersion of every
// watch BOOKMARK event to Bookmark.
type ReflectorBookmarkStore interface {
	Bookmark(resourceVersion string) error
}

// TransformingStore is an optional interface of a ReflectorStore that applies
// a TransformFunc to the objects it receives. During a streaming list into
// such a store the Reflector applies the same transformer to the objects it
// collects before handing them to Replace, as client-go does, so that a
// large initial list is held in its transformed (usually smaller) form. The
// transformer must therefore accept objects it has already transformed. The
// queues of this package (RealFIFO, DeltaFIFO) take the objects of a list one
// by one as they arrive and transform each of them once.
type TransformingStore interface {
	ReflectorStore
	Transformer() TransformFunc
}

// ResourceVersionUpdater is an optional interface of a ReflectorStore: when
// the store implements it, the Reflector calls UpdateResourceVersion each
// time a watch event advances the resource version it has reached.
type ResourceVersionUpdater interface {
	// UpdateResourceVersion is called with the resource version the
	// Reflector has reached.
	UpdateResourceVersion(resourceVersion string)
}

// Reflector keeps a store in step with the server's objects of one resource:
// it lists them (a paged LIST, or a streaming list when the WatchListClient
// feature of k8s.io/client-go/features is enabled and the client supports
// it), replaces the store's content with the result, then watches from the
// list's resourceVersion and applies every event to the store. A watch that
// closes is resumed from the last resourceVersion seen (bookmarks included)
// without a relist; an expired resourceVersion (410) leads to a relist;
// failures back off exponentially with jitter.
//
// Build one with NewReflector, NewNamedReflector or NewReflectorWithOptions;
// set the exported fields before calling Run, and do not change them while it
// runs. Name, TypeDescription and LastSyncResourceVersion are safe to call at
// any time from any goroutine.
//
// What it guarantees besides client-go's contract:
//   - An event it cannot store (no object or a nil pointer, an object of the
//     wrong type or kind, a Table, no object metadata, an unknown event type,
//     a bookmark without a resourceVersion) is logged without the object's
//     data (its event type, Go type and namespace/name only), counted
//     (InformerStatus.BadData) and dropped; the watch goes on, and such an
//     event does not move LastSyncResourceVersion. A frame the client cannot
//     decode ends the watch (an ERROR event) and is counted as bad data
//     unless it reports a broken connection. An event whose object has no
//     resourceVersion is stored without moving LastSyncResourceVersion.
//   - LIST runs on the caller's goroutine with its context: nothing outlives
//     a stopped ListAndWatch.
//   - Backoff waits run on the injected clock and end with the context; a
//     Retry-After longer than the backoff is honoured up to
//     ReflectorOptions.MaxRetryAfter; the backoff starts over after two
//     minutes without a failure.
//   - A streaming list that receives nothing for 10 seconds before its
//     "k8s.io/initial-events-end" bookmark is dropped, and the cycle falls
//     back to a paged LIST and a WATCH; events that keep arriving keep the
//     stream going.
//   - With ReflectorOptions.WatchIdleTimeout, a watch that went silent after
//     a periodic bookmark is reopened from the last resourceVersion.
//   - Lists and watches are recorded through SetReflectorMetricsProvider's
//     provider, ListWatch.DisableChunking is honoured, and a Reflector
//     without a name started from a bare goroutine is named after its type
//     ("reflector *v1.Pod").
//
// Differs from client-go v0.37.2 in each of these; see COMPATIBILITY.md.
//
// Streaming lists otherwise behave as in client-go: a stream the server
// closes before its end bookmark (after an event, or after a second) is
// opened again at once from the same resource version; one that fails with
// a refused connection or 429 is retried after a backoff, one whose resource
// version is expired or too large at once from the latest data; any other
// failure (a server that cannot stream lists, a very short stream, an error
// event) makes that cycle fall back to LIST, logged at V(4) and counted as a
// list of reason RelistStreamFallback but never handed to the watch error
// handler; and every cycle tries streaming again.
type Reflector struct {
	name            string
	typeDescription string
	// expectedType, when not nil, is the only object type the Reflector
	// stores; expectedGVK, when not nil (unstructured objects), is the only
	// group/version/kind.
	expectedType reflect.Type
	expectedGVK  *schema.GroupVersionKind

	store         ReflectorStore
	listerWatcher ListerWatcherWithContext

	// logger is the Reflector's logger when ReflectorOptions.Logger was
	// set; otherwise the logger of the context passed to Run is used.
	logger    klog.Logger
	hasLogger bool

	resyncPeriod time.Duration
	clock        clock.Clock

	// engine lists, watches and keeps the resourceVersion reached
	// (internal/reflector); it holds the configuration below that does not
	// change between cycles.
	engine *reflector.Engine

	// useWatchList selects the streaming list.
	useWatchList bool

	// watchErrorHandler, when not nil, replaces DefaultWatchErrorHandler
	// and is also called for the failures the Reflector handles inside its
	// cycle (see WatchErrorHandlerWithContext). It comes from the
	// Reflector's configuration; nil means the default behaviour.
	watchErrorHandler WatchErrorHandlerWithContext
	// shardErr, when not nil, fails every cycle before any request: the
	// shard option is invalid (reflectorConfig.shardErr).
	shardErr error

	metricsOnce sync.Once
	metrics     *reflector.Metrics
	// stats are the diagnostics counters (cache/internal/diag); a shared
	// informer hands its own to the Reflector it builds.
	stats *diag.Stats

	// WatchListPageSize is the page size (limit) of the Reflector's LIST
	// requests. When zero, lists that may be served from the watch cache
	// (resourceVersion not "" and not "0") are not paged, and the others
	// use 500 (or keep paging when the first list came back paged). Large
	// page sizes are served from etcd and cost the server more; set it
	// with care.
	WatchListPageSize int64
	// ShouldResync, when not nil, is asked at every resync period whether
	// to call the store's Resync; nil means always.
	ShouldResync func() bool
	// MaxInternalErrorRetryDuration is how long a watch that keeps ending
	// with an internal server error (500) is reopened from the same
	// resource version before the Reflector relists. Zero means relist at
	// the first one.
	MaxInternalErrorRetryDuration time.Duration
}

// ReflectorOptions configures a Reflector built by NewReflectorWithOptions.
type ReflectorOptions struct {
	// Logger, if not nil, is used instead of the context's logger (or
	// klog.Background()) for logging. The name of the reflector gets added
	// automatically.
	Logger *klog.Logger

	// Name is the Reflector's name. If unset, it defaults to the
	// file:line of the closest caller outside this package.
	Name string

	// TypeDescription describes the stored type in logs. If unset, it is
	// "<unspecified>" for a nil expectedType, the apiVersion and kind of
	// an *unstructured.Unstructured expectedType that has them, and the Go
	// type of expectedType otherwise.
	TypeDescription string

	// ResyncPeriod is how often the store's Resync is considered (see
	// Reflector.ShouldResync); zero means never.
	ResyncPeriod time.Duration

	// MinWatchTimeout is the minimum timeout of watch requests; each watch
	// asks for a random timeout in [MinWatchTimeout, 2*MinWatchTimeout).
	// Values below 5 minutes (including zero) mean 5 minutes, to spare the
	// control plane.
	MinWatchTimeout time.Duration

	// Clock is the source of time for backoff, resync and watch timing.
	// If unset, the real clock.
	Clock clock.Clock

	// Backoff, if set, replaces the default backoff between retries
	// (0.8s doubling with full jitter, capped at 30s). The backoff starts
	// over after two minutes without a failure.
	Backoff *wait.Backoff

	// WatchIdleTimeout, when positive, is the watch liveness deadline. It
	// is armed on a watch by the first periodic bookmark the watch
	// receives (a BOOKMARK event other than the one that ends a streaming
	// list's initial events), and restarts with every event and bookmark
	// after it: a watch that then receives nothing for this long is stopped
	// and reopened from the last resourceVersion (no relist), and the watch
	// error handler is told with a *WatchIdleTimeoutError. Until its first
	// periodic bookmark a watch is never cut for silence, however long:
	// kube-apiserver's watch cache sends such bookmarks about once a minute
	// to watches that allow them (the Reflector's always do), but only
	// once it has seen a change newer than the watch's start, a watch
	// served from etcd gets none, and a quiet resource is not a dead
	// connection, which HTTP/2 pings detect anyway. A streaming list is
	// never cut for liveness. A value below the server's bookmark interval
	// restarts every idle watch after each bookmark; DefaultWatchIdleTimeout
	// explains the default of shared informers. Watch requests ask the
	// server for MinWatchTimeout's timeouts whatever this is. Zero or
	// negative: no deadline (as client-go). kinformer extension; shared
	// informers enable it by default (see
	// SharedIndexInformerOptions.WatchIdleTimeout).
	WatchIdleTimeout time.Duration

	// ListAdmission, when not nil, makes the Reflector wait for a slot of
	// it before each LIST and streaming list, and hold the slot until the
	// list is complete or failed (see listadmission.Admission);
	// ListAdmissionPriority orders it among the Reflectors waiting (higher
	// first). nil: lists are not held back, as in client-go. kinformer
	// extension.
	ListAdmission         *listadmission.Admission
	ListAdmissionPriority int

	// MaxRetryAfter is the longest Retry-After the Reflector honours: after
	// a failure whose error carries a Retry-After longer than its backoff
	// (a 429, a server timeout), it waits the Retry-After, but never longer
	// than MaxRetryAfter; a longer one is counted
	// (InformerStatus.RetryAfterCapped). Zero means
	// listadmission.DefaultMaxRetryAfter (60 s), negative no maximum.
	// client-go's Reflector does not honour Retry-After at all. kinformer
	// extension.
	MaxRetryAfter time.Duration
}

// NewNamespaceKeyedIndexerAndReflector returns an Indexer keyed by
// MetaNamespaceKeyFunc with the namespace index, and a Reflector that fills
// it from lw with objects of expectedType's type.
func NewNamespaceKeyedIndexerAndReflector(lw ListerWatcher, expectedType interface{}, resyncPeriod time.Duration) (indexer Indexer, reflector *Reflector) {
	indexer = NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	reflector = NewReflector(lw, expectedType, indexer, resyncPeriod)
	return indexer, reflector
}

// NewReflector returns a Reflector named after the file:line of its caller
// outside this package (and outside the wrapper of package
// interop/clientgo). See NewReflectorWithOptions.
func NewReflector(lw ListerWatcher, expectedType interface{}, store ReflectorStore, resyncPeriod time.Duration) *Reflector {
	return NewReflectorWithOptions(lw, expectedType, store, ReflectorOptions{ResyncPeriod: resyncPeriod})
}

// NewNamedReflector returns a Reflector with the given name. See
// NewReflectorWithOptions.
func NewNamedReflector(name string, lw ListerWatcher, expectedType interface{}, store ReflectorStore, resyncPeriod time.Duration) *Reflector {
	return NewReflectorWithOptions(lw, expectedType, store, ReflectorOptions{Name: name, ResyncPeriod: resyncPeriod})
}

// NewReflectorWithOptions returns a Reflector that keeps store in step with
// the objects lw lists and watches. Only objects of expectedType's type are
// stored (any type when expectedType is nil; for an
// *unstructured.Unstructured with apiVersion and kind, only objects of that
// group/version/kind); others are logged and skipped. When
// options.ResyncPeriod is non-zero, the store's Resync is called every period
// when ShouldResync is nil or returns true.
//
// The streaming list is used when the WatchListClient feature gate of
// k8s.io/client-go/features is enabled (the default; set
// KUBE_FEATURE_WatchListClient=false to disable it) and lw does not report
// IsWatchListSemanticsUnSupported() == true (see
// ToListWatcherWithWatchListSemantics). A streaming list that goes silent
// before its initial-events-end bookmark falls back to LIST for that cycle
// (see Reflector). Differs from client-go v0.37.2; see COMPATIBILITY.md.
//
// A nil lw or store does not panic: ListAndWatch then returns an error.
func NewReflectorWithOptions(lw ListerWatcher, expectedType interface{}, store ReflectorStore, options ReflectorOptions) *Reflector {
	return newReflector(lw, expectedType, store, options.config())
}

// newReflector builds a Reflector from its whole configuration.
func newReflector(lw ListerWatcher, expectedType interface{}, store ReflectorStore, cfg reflectorConfig) *Reflector {
	clk := clockOrReal(cfg.clock)
	stats := cfg.stats
	if stats == nil {
		stats = diag.NewStats()
	}

	r := &Reflector{
		name:            cfg.name,
		typeDescription: cfg.typeDescription,
		expectedType:    reflect.TypeOf(expectedType),
		expectedGVK:     getExpectedGVKFromObject(expectedType),
		store:           store,
		listerWatcher:   ToListerWatcherWithContext(lw),
		resyncPeriod:    cfg.engine.ResyncPeriod,
		clock:           clk,
		stats:           stats,

		watchErrorHandler: cfg.watchErrorHandler,
		shardErr:          cfg.shardErr,

		WatchListPageSize:             cfg.watchListPageSize,
		ShouldResync:                  cfg.shouldResync,
		MaxInternalErrorRetryDuration: cfg.maxInternalErrorRetryDuration,
	}
	if r.typeDescription == "" {
		r.typeDescription = getTypeDescriptionFromObject(expectedType)
	}
	if r.name == "" {
		r.name = reflectorCallsiteName()
		if r.name == reflectorUnknownCallsite {
			// Started from a bare goroutine: every frame is ours or the runtime's.
			r.name = "reflector " + r.typeDescription
		}
	}
	if cfg.logger != nil {
		r.logger = klog.LoggerWithName(*cfg.logger, r.name)
		r.hasLogger = true
	}
	var admission reflector.Admission
	if cfg.admission != nil {
		admission = reflectorAdmission{cfg.admission}
	}
	var engineLW reflector.ListerWatcher
	if r.listerWatcher != nil {
		engineLW = r.listerWatcher
	}
	r.engine = reflector.New(reflector.Options{
		Name:            r.name,
		TypeDescription: r.typeDescription,
		ExpectedType:    r.expectedType,
		ExpectedGVK:     r.expectedGVK,
		Store:           store,
		Lists:           reflectorLists{store: store},
		ListerWatcher:   engineLW,
		Logger:          r.logger,
		HasLogger:       r.hasLogger,
		Settings:        cfg.engine,
		Clock:           clk,
		BackoffReset:    reflectorBackoffReset,
		DisableChunking: listWatchDisablesChunking(lw),
		Resume:          engineResume(cfg.resume),
		Admission:       admission,
		Stats:           reflectorStats{stats: stats},
		Arrivals:        stats,
		Report: func(ctx context.Context, err error) {
			r.reportWatchFailure(ctx, publicReflectorError(err))
		},
	})

	r.useWatchList = clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
	if r.useWatchList && lw != nil && watchlist.DoesClientNotSupportWatchListSemantics(lw) {
		r.loggerFor(context.Background()).V(2).Info(
			"The client of this reflector does not support WatchList semantics; using LIST. This is expected in unit tests with fake clients, not in production.",
			"reflector", r.name, "feature", clientfeatures.WatchListClient)
		r.useWatchList = false
	}
	return r
}

// reflectorUnknownCallsite is what the call-site lookup returns when no frame outside this
// package is found.
const reflectorUnknownCallsite = "????"

// reflectorCallsiteName returns the file:line of the closest caller outside
// this package, as a default Reflector name. The client-go wrapper of
// package interop/clientgo only forwards Run to this package, so its frames
// are passed over too: an informer run through it is named after its
// caller, as one run directly.
func reflectorCallsiteName() string {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return naming.GetNameFromCallsite()
	}
	dir := filepath.ToSlash(filepath.Dir(self))
	return naming.GetNameFromCallsite(dir+"/", path.Dir(dir)+"/interop/clientgo/informer.go")
}

// listWatchDisablesChunking reports whether lw is a ListWatch (possibly
// wrapped by ToListWatcherWithWatchListSemantics) with DisableChunking set.
func listWatchDisablesChunking(lw ListerWatcher) bool {
	switch l := lw.(type) {
	case *ListWatch:
		return l != nil && l.DisableChunking
	case *listWatchWithWatchListSupport:
		return l != nil && l.ListWatch != nil && l.ListWatch.DisableChunking
	}
	return false
}

// getTypeDescriptionFromObject describes expectedType for logs.
func getTypeDescriptionFromObject(expectedType interface{}) string {
	if expectedType == nil {
		return defaultExpectedTypeName
	}
	if gvk := getExpectedGVKFromObject(expectedType); gvk != nil {
		return gvk.String()
	}
	return reflect.TypeOf(expectedType).String()
}

// getExpectedGVKFromObject returns the group/version/kind of an
// *unstructured.Unstructured expectedType, or nil.
func getExpectedGVKFromObject(expectedType interface{}) *schema.GroupVersionKind {
	u, ok := expectedType.(*unstructured.Unstructured)
	if !ok || u == nil {
		return nil
	}
	gvk := u.GroupVersionKind()
	if gvk.Empty() {
		return nil
	}
	return &gvk
}

// Name returns the Reflector's name.
func (r *Reflector) Name() string {
	return r.name
}

// TypeDescription returns the description of the type the Reflector stores.
func (r *Reflector) TypeDescription() string {
	return r.typeDescription
}

// LastSyncResourceVersion returns the resource version the store was last
// brought to (by a list, a watch event or a bookmark). It is safe for
// concurrent use, but is not synchronised with the store: the store may be a
// step ahead or behind when the caller looks at it.
func (r *Reflector) LastSyncResourceVersion() string {
	return r.engine.LastSyncResourceVersion()
}

// loggerFor returns the logger for a call made with ctx.
func (r *Reflector) loggerFor(ctx context.Context) klog.Logger {
	if r.hasLogger {
		return r.logger
	}
	return klog.FromContext(ctx)
}

// ensureMetrics creates the Reflector's metrics from the provider set at
// that moment.
func (r *Reflector) ensureMetrics() {
	r.metricsOnce.Do(func() {
		r.metrics = newReflectorMetrics(currentReflectorMetricsProvider(), r.name)
	})
}

// Run lists and watches until stopCh is closed, backing off between
// attempts (see RunWithContext). It returns once stopCh is closed and every
// goroutine it started has ended.
//
// Contextual logging: use RunWithContext in code that supports it.
func (r *Reflector) Run(stopCh <-chan struct{}) {
	r.RunWithContext(wait.ContextForChannel(stopCh))
}

// RunWithContext calls ListAndWatchWithContext again and again until ctx is
// done, waiting a backoff delay between two calls. Errors it returns go to
// the watch error handler (DefaultWatchErrorHandler unless the informer set
// one). It returns once ctx is done and every goroutine it started has
// ended; a ListerWatcher that ignores its context delays that until its call
// returns.
func (r *Reflector) RunWithContext(ctx context.Context) {
	logger := r.loggerFor(ctx)
	logger.V(3).Info("Starting reflector", "type", r.typeDescription, "resyncPeriod", r.resyncPeriod, "reflector", r.name)
	for ctx.Err() == nil {
		err := r.ListAndWatchWithContext(ctx)
		if err != nil && ctx.Err() == nil {
			r.handleListAndWatchError(ctx, err)
		}
		if !r.engine.Sleep(ctx, r.backoffDelay(err)) {
			break
		}
	}
	logger.V(3).Info("Stopping reflector", "type", r.typeDescription, "resyncPeriod", r.resyncPeriod, "reflector", r.name)
}

// ListAndWatch lists and then watches until stopCh is closed (see
// ListAndWatchWithContext).
//
// Contextual logging: use ListAndWatchWithContext in code that supports it.
func (r *Reflector) ListAndWatch(stopCh <-chan struct{}) error {
	return r.ListAndWatchWithContext(wait.ContextForChannel(stopCh))
}

// ListAndWatchWithContext makes one list-and-watch cycle: it lists (streaming
// or paged), replaces the store's content with the result, then watches,
// reopening the watch from the last resource version each time it closes,
// until ctx is done or the watch cannot go on without a relist (an expired
// resource version, a very short watch, an error event). It returns an error
// only when it could not get as far as watching: the list failed, the store
// rejected the list, or a watch could not be opened for a reason other than
// a refused connection or 429 (those are retried with backoff). It returns
// nil when ctx is done, and does not return before the goroutines it started
// have ended.
//
// A streaming list that fails makes this cycle fall back to a paged LIST, as
// in client-go; a stream the server closes before its initial-events-end
// bookmark is opened again; a stream that stays silent before that bookmark
// also falls back (see Reflector). Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
func (r *Reflector) ListAndWatchWithContext(ctx context.Context) error {
	if ctx.Err() != nil {
		return nil
	}
	if r.listerWatcher == nil {
		return fmt.Errorf("reflector %s: no ListerWatcher", r.name)
	}
	if r.store == nil {
		return fmt.Errorf("reflector %s: no store", r.name)
	}
	if r.shardErr != nil {
		return fmt.Errorf("reflector %s: %w", r.name, r.shardErr)
	}
	r.ensureMetrics()
	r.loggerFor(ctx).V(3).Info("Listing and watching", "type", r.typeDescription, "reflector", r.name)
	err := r.engine.RunCycle(ctx, reflector.CycleConfig{
		Streaming:        r.useWatchList,
		PageSize:         r.WatchListPageSize,
		MaxInternalRetry: r.MaxInternalErrorRetryDuration,
		ShouldResync:     r.ShouldResync,
		Metrics:          r.metrics,
	})
	return publicReflectorError(err)
}

// backoffDelay returns how long to wait before retrying after err: the next
// step of the backoff, or the server's Retry-After when that is longer, up
// to ReflectorOptions.MaxRetryAfter (see reflector.Engine.BackoffDelay).
func (r *Reflector) backoffDelay(err error) time.Duration {
	return r.engine.BackoffDelay(err)
}

// clockOrReal returns c, or the real clock when c is nil.
func clockOrReal(c clock.Clock) clock.Clock {
	if c == nil {
		return clock.RealClock{}
	}
	return c
}
