package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/naming"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/util/watchlist"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	utiltrace "k8s.io/utils/trace"
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

	// A watch that ends sooner than this without an event is an error.
	reflectorShortWatch = time.Second
	// Page size of LIST requests when nothing else decides it (the
	// default of client-go's pager).
	reflectorDefaultPageSize = 500
	// Internal server errors in a watch are retried without a relist while
	// they keep recurring within this period (see
	// MaxInternalErrorRetryDuration).
	reflectorInternalErrorQuietPeriod = time.Minute
	// While a streaming list waits for its end bookmark, a warning is
	// logged when no event arrived for this long.
	reflectorInitialEventsWarnInterval = 10 * time.Second
	// A streaming list that receives no event at all for this long while
	// its end bookmark is pending is stopped, and the Reflector falls back
	// to LIST. It is the moment client-go starts warning: a server that
	// streams the initial events has sent something by then.
	reflectorInitialEventsTimeout = 10 * time.Second
)

// ReflectorStore is what a Reflector writes to: the part of Store it uses.
// The Reflector calls it from one goroutine at a time (the watch loop), except
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

// WatchErrorHandler is called with a list or watch failure of a Reflector;
// the Reflector then backs off and retries. Handlers must return quickly.
//
// Contextual logging: use WatchErrorHandlerWithContext in code that supports
// it.
type WatchErrorHandler func(r *Reflector, err error)

// WatchErrorHandlerWithContext is called with a list or watch failure of a
// Reflector; the Reflector then backs off and retries. Handlers must return
// quickly; anything expensive belongs on another goroutine.
//
// A handler set on an informer (SetWatchErrorHandler /
// SetWatchErrorHandlerWithContext) reaches its Reflector. Difference from
// client-go: such a handler is called for every failure, including those the
// Reflector handles by itself without leaving its watch loop (a watch that
// cannot be opened because the connection is refused or the server answers
// 429, a watch that ends with 410 Gone / Expired, an internal error that is
// retried, a very short watch, a streaming list retried after a refused
// connection or a 429), which client-go only logs at V(2)/V(4). A handler
// therefore sees why an informer is not current. As in client-go, a handler
// never hears of a streaming list that falls back to LIST (the server cannot
// stream lists, the stream failed or stayed silent): the LIST's own failure,
// if any, is what it gets. DefaultWatchErrorHandler (used when no handler is
// set) only receives the errors that end a ListAndWatch, as in client-go.
type WatchErrorHandlerWithContext func(ctx context.Context, r *Reflector, err error)

// DefaultWatchErrorHandler logs err the way client-go does: an expired or
// gone resource version at V(4), io.EOF (a normal close) not at all,
// io.ErrUnexpectedEOF at V(1), anything else as an error through
// utilruntime.HandleErrorWithContext. It accepts a nil Reflector.
//
// Difference from client-go: io.EOF and io.ErrUnexpectedEOF are also
// recognised when wrapped.
func DefaultWatchErrorHandler(ctx context.Context, r *Reflector, err error) {
	name, description := "", ""
	if r != nil {
		name, description = r.name, r.typeDescription
	}
	switch {
	case isExpiredError(err):
		// The relist asks for data at least as new as the last resource
		// version seen, so this is routine.
		klog.FromContext(ctx).V(4).Info("Watch closed", "reflector", name, "type", description, "err", err)
	case errors.Is(err, io.EOF):
	case errors.Is(err, io.ErrUnexpectedEOF):
		klog.FromContext(ctx).V(1).Info("Watch closed with unexpected EOF", "reflector", name, "type", description, "err", err)
	default:
		utilruntime.HandleErrorWithContext(ctx, err, "Failed to watch", "reflector", name, "type", description)
	}
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
// Differences from client-go:
//   - A watch error handler set by the informer sees every list and watch
//     failure (see WatchErrorHandlerWithContext).
//   - An event the Reflector cannot store (an object of the wrong type or
//     kind, a Table, an object without metadata, no object, an unknown event
//     type, a bookmark without a resourceVersion) is logged through
//     utilruntime.HandleErrorWithContext, with client-go's message where
//     client-go has one, dropped, and the watch goes on, as in client-go;
//     kinformer also counts it (InformerStatus.BadData). Differences: an
//     event with a nil pointer is skipped where client-go panics, and
//     neither an unknown event type nor a bookmark without a resourceVersion
//     moves LastSyncResourceVersion (client-go moves it to the event's, ""
//     for such a bookmark). A frame the client cannot decode arrives, as in
//     client-go, as an ERROR event (500, cause ClientWatchDecoding) that ends
//     the watch, and the Reflector relists after its backoff; kinformer also
//     counts it as bad data unless it reports a broken connection (an HTTP/2
//     stream reset). An event whose object has no resourceVersion is stored
//     but does not move LastSyncResourceVersion back to "".
//   - The LIST runs on the caller's goroutine with the caller's context, so
//     no goroutine outlives a stopped ListAndWatch; stopping is prompt when
//     the ListerWatcher honours its context.
//   - Backoff waits (including Run's and the streaming list's) use the
//     injected clock and end when the context ends; a Retry-After sent with
//     a 429 (or a server timeout) is honoured when longer than the backoff;
//     the backoff starts over after two minutes without a failure (see
//     ReflectorOptions.Backoff).
//   - Metrics are recorded through SetReflectorMetricsProvider's provider.
//   - ListWatch.DisableChunking is honoured.
//   - A Reflector without a name that is started where no caller outside this
//     package is on the stack (a bare goroutine) is named after its type,
//     "reflector *v1.Pod", instead of client-go's "????".
//   - A streaming list that stays silent does not block the Reflector
//     (client-go issues kubernetes/kubernetes#140890 and #135895): when it
//     receives no event at all for 10 seconds before the bookmark annotated
//     "k8s.io/initial-events-end" arrived, the Reflector drops what the
//     stream delivered and falls back to a paged LIST followed by a WATCH
//     for that cycle, as it does after a stream that fails. client-go waits
//     without end on a silent stream, only logging "event bookmark expired"
//     every 10 seconds, so its informer never syncs against such a server
//     (an aggregated API server, a proxy, a mock, or client-go's fake
//     clientset behind a plain ListWatch without
//     ToListWatcherWithWatchListSemantics). Events that keep arriving, as
//     in a large initial list, keep the stream going.
//   - With ReflectorOptions.WatchIdleTimeout (off for a Reflector built
//     here, on by default in shared informers), a watch that went silent
//     after a periodic bookmark is reopened from the last resourceVersion.
//     Watch requests, streaming lists included, ask the server for
//     client-go's timeouts either way.
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

	resyncPeriod    time.Duration
	minWatchTimeout time.Duration
	maxWatchTimeout time.Duration
	clock           clock.Clock
	backoff         *reflectorBackoff

	// useWatchList selects the streaming list; disableChunking turns off
	// LIST paging (ListWatch.DisableChunking).
	useWatchList    bool
	disableChunking bool
	// initialEventsTimeout is how long a streaming list may go without
	// receiving any event while the bookmark that ends its initial events
	// is pending, measured on clock; it is then stopped and the Reflector
	// falls back to LIST. Zero or less means no bound. Set before Run
	// (tests lower it or drive it with a fake clock).
	initialEventsTimeout time.Duration
	// watchIdleTimeout, when positive, is how long a watch that has
	// received a periodic bookmark may go without any event (bookmarks
	// included) before it is stopped and resumed from the last resource
	// version (reflector_liveness.go).
	watchIdleTimeout time.Duration
	// resume, when set, is called once before the first list; the state it
	// returns replaces that list (snapshot.go). Guarded by mu.
	resume func(context.Context) (*reflectorResume, error)

	// watchErrorHandler, when not nil, replaces DefaultWatchErrorHandler
	// and is also called for the failures the Reflector handles inside its
	// watch loop (see WatchErrorHandlerWithContext). The informer sets it
	// before Run; nil means the default behaviour.
	watchErrorHandler WatchErrorHandlerWithContext

	metricsOnce sync.Once
	metrics     *reflectorMetrics
	// stats are the diagnostics counters (informer_stats.go); a shared
	// informer replaces them with its own before Run.
	stats *informerStats
	// badData counts bad data from the server (reflector_baddata.go).
	badData reflectorBadDataCounter

	// mu guards the fields below.
	mu sync.Mutex
	// lastSyncResourceVersion is the resource version the store has
	// reached (from the last list, watch event or bookmark).
	lastSyncResourceVersion string
	// lastSyncResourceVersionUnavailable is set when the server answered
	// that lastSyncResourceVersion is expired or too new: the next list
	// then asks for the latest data (resourceVersion "").
	lastSyncResourceVersionUnavailable bool
	// paginatedResult is set when the first list (resourceVersion "0")
	// came back in pages: the server then does not serve lists from its
	// watch cache, so relists keep paging.
	paginatedResult bool

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
// outside this package. See NewReflectorWithOptions.
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
// ToListWatcherWithWatchListSemantics). Difference from client-go: a
// streaming list that goes silent before its initial-events-end bookmark
// falls back to LIST for that cycle instead of blocking the Reflector (see
// Reflector).
//
// A nil lw or store does not panic: ListAndWatch then returns an error.
func NewReflectorWithOptions(lw ListerWatcher, expectedType interface{}, store ReflectorStore, options ReflectorOptions) *Reflector {
	return newReflector(lw, expectedType, store, options.config())
}

// newReflector builds a Reflector from its whole configuration.
func newReflector(lw ListerWatcher, expectedType interface{}, store ReflectorStore, cfg reflectorConfig) *Reflector {
	clk := clockOrReal(cfg.clock)

	minWatch := reflectorMinWatchTimeout
	if cfg.minWatchTimeout > minWatch {
		minWatch = cfg.minWatchTimeout
	}

	backoff := wait.Backoff{
		Duration: reflectorBackoffInitial,
		Cap:      reflectorBackoffCap,
		Steps:    int(math.Ceil(float64(reflectorBackoffCap) / float64(reflectorBackoffInitial))),
		Factor:   reflectorBackoffFactor,
		Jitter:   reflectorBackoffJitter,
	}
	if cfg.backoff != nil {
		backoff = *cfg.backoff
	}
	initialEventsTimeout := cfg.initialEventsTimeout
	switch {
	case initialEventsTimeout == 0:
		initialEventsTimeout = reflectorInitialEventsTimeout
	case initialEventsTimeout < 0:
		initialEventsTimeout = 0
	}
	stats := cfg.stats
	if stats == nil {
		stats = newInformerStats()
	}

	r := &Reflector{
		name:            cfg.name,
		typeDescription: cfg.typeDescription,
		expectedType:    reflect.TypeOf(expectedType),
		expectedGVK:     getExpectedGVKFromObject(expectedType),
		store:           store,
		listerWatcher:   ToListerWatcherWithContext(lw),
		resyncPeriod:    cfg.resyncPeriod,
		minWatchTimeout: minWatch,
		maxWatchTimeout: 2 * minWatch,
		clock:           clk,
		backoff:         newReflectorBackoff(backoff, reflectorBackoffReset, clk),
		disableChunking: listWatchDisablesChunking(lw),
		stats:           stats,
		resume:          cfg.resume,

		watchErrorHandler:    cfg.watchErrorHandler,
		initialEventsTimeout: initialEventsTimeout,
		watchIdleTimeout:     cfg.watchIdleTimeout,

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
// this package, as a default Reflector name.
func reflectorCallsiteName() string {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return naming.GetNameFromCallsite()
	}
	return naming.GetNameFromCallsite(filepath.ToSlash(filepath.Dir(self)) + "/")
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
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastSyncResourceVersion
}

func (r *Reflector) setLastSyncResourceVersion(rv string) {
	r.mu.Lock()
	r.lastSyncResourceVersion = rv
	r.mu.Unlock()
	if r.metrics != nil {
		r.metrics.resourceVersion(rv)
	}
}

// syncAt records rv as the last synced resource version, then runs handOver,
// which gives the store the state current at rv. The version is recorded
// first because the store may be processed, and the informer report synced,
// before handOver returns: a caller that waited for HasSynced then reads
// the version its cache holds, not an older one. When handOver fails the
// previous version is restored.
func (r *Reflector) syncAt(rv string, handOver func() error) error {
	previous := r.LastSyncResourceVersion()
	r.setLastSyncResourceVersion(rv)
	if err := handOver(); err != nil {
		r.setLastSyncResourceVersion(previous)
		return err
	}
	return nil
}

func (r *Reflector) setLastSyncResourceVersionUnavailable(unavailable bool) {
	r.mu.Lock()
	r.lastSyncResourceVersionUnavailable = unavailable
	r.mu.Unlock()
}

// relistResourceVersion is the resourceVersion of the next LIST: "0" for the
// first one (any data, servable from the watch cache), the last resource
// version reached for a relist (data at least that new, so the store never
// goes back in time), and "" (the latest data, a consistent read) after the
// server said that version is expired or too new.
func (r *Reflector) relistResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.lastSyncResourceVersionUnavailable:
		return ""
	case r.lastSyncResourceVersion == "":
		return "0"
	}
	return r.lastSyncResourceVersion
}

// rewatchResourceVersion is the resourceVersion of the next streaming list:
// the last resource version reached, or "" (the latest data) at first and
// after the server said that version is expired or too new.
func (r *Reflector) rewatchResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastSyncResourceVersionUnavailable {
		return ""
	}
	return r.lastSyncResourceVersion
}

// listPageSize decides the limit of the LIST requests of one list at
// resourceVersion rv (0 means unpaged).
func (r *Reflector) listPageSize(rv string) int64 {
	r.mu.Lock()
	paginated := r.paginatedResult
	r.mu.Unlock()
	switch {
	case r.disableChunking:
		return 0
	case r.WatchListPageSize != 0:
		return r.WatchListPageSize
	case paginated:
		// The first list came back paged: the server does not serve
		// lists from a watch cache for this resource, keep paging.
		return reflectorDefaultPageSize
	case rv != "" && rv != "0":
		// Unpaged lists at a given resource version can be served by the
		// watch cache; paged ones would all go to etcd.
		return 0
	}
	return reflectorDefaultPageSize
}

// loggerFor returns the logger for a call made with ctx.
func (r *Reflector) loggerFor(ctx context.Context) klog.Logger {
	if r.hasLogger {
		return r.logger
	}
	return klog.FromContext(ctx)
}

// reportWatchFailure passes a failure the Reflector handles by itself (and
// so does not return) to a watch error handler set by the informer.
func (r *Reflector) reportWatchFailure(ctx context.Context, err error) {
	r.stats.recordError(err, r.clock.Now())
	if h := r.watchErrorHandler; h != nil {
		h(ctx, r, err)
	}
}

// handleListAndWatchError passes an error returned by ListAndWatch to the
// watch error handler, or to DefaultWatchErrorHandler when none is set.
func (r *Reflector) handleListAndWatchError(ctx context.Context, err error) {
	r.stats.recordError(err, r.clock.Now())
	if h := r.watchErrorHandler; h != nil {
		h(ctx, r, err)
		return
	}
	DefaultWatchErrorHandler(ctx, r, err)
}

// ensureMetrics creates the Reflector's metrics from the provider set at
// that moment.
func (r *Reflector) ensureMetrics() {
	r.metricsOnce.Do(func() {
		r.metrics = newReflectorMetrics(currentReflectorMetricsProvider(), r.name)
	})
}

// watchTimeoutSeconds draws the timeout of one watch request (a streaming
// list's included): in [minWatchTimeout, maxWatchTimeout), as client-go.
func (r *Reflector) watchTimeoutSeconds() *int64 {
	span := r.maxWatchTimeout.Seconds() - r.minWatchTimeout.Seconds()
	seconds := int64(r.minWatchTimeout.Seconds() + rand.Float64()*span)
	return &seconds
}

// backoffDelay returns how long to wait before retrying after err: the next
// step of the backoff, or the server's Retry-After when that is longer.
//
// Difference from client-go: client-go's Reflector ignores Retry-After (only
// the REST client's own retries honour it).
func (r *Reflector) backoffDelay(err error) time.Duration {
	d := r.backoff.next()
	if seconds, ok := apierrors.SuggestsClientDelay(err); ok && seconds > 0 {
		if retryAfter := time.Duration(seconds) * time.Second; retryAfter > d {
			d = retryAfter
		}
	}
	return d
}

// sleep waits d on the Reflector's clock; it returns false when ctx ended
// first.
func (r *Reflector) sleep(ctx context.Context, d time.Duration) bool {
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
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
		if !r.sleep(ctx, r.backoffDelay(err)) {
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
// bookmark is opened again. Difference from client-go: a stream that stays
// silent before that bookmark also falls back, instead of waiting for ever
// (see Reflector).
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
	r.ensureMetrics()
	logger := r.loggerFor(ctx)
	logger.V(3).Info("Listing and watching", "type", r.typeDescription, "reflector", r.name)

	var w watch.Interface
	listed := r.resumeFromSnapshot(ctx)
	if !listed && r.useWatchList {
		var err error
		w, err = r.streamList(ctx)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			// As in client-go, the LIST is the answer to a streaming list
			// that failed: this is no failure of the Reflector, and the
			// watch error handler does not hear of it. The next cycle
			// tries streaming again.
			logger.V(4).Info("Data couldn't be fetched in watchlist mode. Falling back to regular list. This is expected if watchlist is not supported or disabled in kube-apiserver.",
				"reflector", r.name, "err", err)
			r.stats.setNextList(relistIdxStreamFallback)
		case w == nil:
			return nil // stopped
		default:
			listed = true
		}
	}
	if !listed {
		if err := r.list(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	logger.V(2).Info("Caches populated", "type", r.typeDescription, "reflector", r.name)
	return r.watchWithResync(ctx, w)
}

// list makes one (possibly paged) LIST and hands its objects to the store
// as one list (see list_sink.go), page by page as they arrive.
func (r *Reflector) list(ctx context.Context) error {
	source := listSource{relist: r.LastSyncResourceVersion() != ""}
	rv := r.relistResourceVersion()
	pageSize := r.listPageSize(rv)
	if source.relist && r.storeRelistsPageByPage() && !r.disableChunking && r.WatchListPageSize == 0 {
		// A store that applies relists page by page saves memory only
		// when they come in pages, so they are paged even where the
		// watch cache could serve them unpaged.
		pageSize = reflectorDefaultPageSize
	}
	trace := utiltrace.New("Reflector ListAndWatch", utiltrace.Field{Key: "name", Value: r.name})
	defer trace.LogIfLong(10 * time.Second)

	start := r.clock.Now()
	r.metrics.listStarted()
	r.stats.listStarting()
	sink, count, listRV, paged, err := r.listPages(ctx, source, reflectorListOptions(rv, pageSize), pageSize)
	if isExpiredError(err) || isTooLargeResourceVersionError(err) {
		// The version asked for is gone (or not there yet): ask for the
		// latest data instead, so that the Reflector makes progress.
		r.setLastSyncResourceVersionUnavailable(true)
		sink, count, listRV, paged, err = r.listPages(ctx, source, reflectorListOptions(r.relistResourceVersion(), pageSize), pageSize)
	}
	trace.Step("Objects listed", utiltrace.Field{Key: "error", Value: err}, utiltrace.Field{Key: "count", Value: count})
	if err != nil {
		var refused *listSinkError
		if errors.As(err, &refused) {
			return err
		}
		return fmt.Errorf("failed to list %v: %w", r.typeDescription, err)
	}
	r.mu.Lock()
	if rv == "0" && paged {
		r.paginatedResult = true
	}
	r.lastSyncResourceVersionUnavailable = false
	r.mu.Unlock()

	err = r.syncAt(listRV, func() (err error) {
		count, err = sink.end(ctx, listRV)
		return err
	})
	if err != nil {
		return fmt.Errorf("unable to sync list result: %w", err)
	}
	trace.Step("SyncWith done")
	r.stats.listSucceeded(r.clock.Now())
	r.metrics.listDone(r.clock.Since(start).Seconds(), count)
	return nil
}

// storeRelistsPageByPage reports whether the store applies relists page by
// page (see listTaker).
func (r *Reflector) storeRelistsPageByPage() bool {
	t, ok := r.store.(listTaker)
	return ok && t.relistsPageByPage()
}

// listPages makes one list with options (pageSize is the limit when options
// has none; 0 means unpaged) into a new list of the store (see
// list_sink.go), following continue tokens when the server pages the answer
// and handing each page's objects over as it arrives. When a continue token
// has expired, the list starts over, as a new list of the store, with one
// unpaged request at the original resourceVersion. It returns the list,
// still to be ended at its resourceVersion, the number of objects handed
// over, that resourceVersion and whether the answer came in more than one
// page. Errors of the store are *listSinkError.
//
// Difference from client-go: should the answer to the restarted request
// still come in pages (a ListWatch that sets a limit itself), they are
// followed rather than the rest of the list silently dropped.
func (r *Reflector) listPages(ctx context.Context, source listSource, options metav1.ListOptions, pageSize int64) (listSink, int, string, bool, error) {
	if options.Limit == 0 {
		options.Limit = pageSize
	}
	wantRV, wantMatch := options.ResourceVersion, options.ResourceVersionMatch
	sink := r.beginList(source)
	count := 0
	var listRV string
	paged, restarted := false, false
	var page []interface{}
	for {
		if err := ctx.Err(); err != nil {
			return nil, count, "", paged, err
		}
		obj, err := r.listerWatcher.ListWithContext(ctx, options)
		if err != nil {
			if options.Continue == "" || !apierrors.IsResourceExpired(err) || restarted {
				return nil, count, "", paged, err
			}
			// The continue token expired: list again from the start in
			// one request; what was handed over is dropped.
			restarted = true
			count, listRV = 0, ""
			options.Limit, options.Continue = 0, ""
			options.ResourceVersion, options.ResourceVersionMatch = wantRV, wantMatch
			sink = r.beginList(source)
			continue
		}
		var next, pageRV string
		page, pageRV, next, err = r.appendListPage(ctx, page[:0], obj)
		obj = nil // the page's array is garbage once its items are copied out
		if err != nil {
			return nil, count, "", paged, err
		}
		if options.Continue == "" {
			listRV = pageRV
		}
		for i, item := range page {
			// The store keeps what it needs of item; a duplicate of what
			// it holds already is garbage from here on.
			page[i] = nil
			if err := sink.put(item); err != nil {
				clear(page)
				return nil, count, "", paged, &listSinkError{err: err}
			}
			count++
		}
		if err := sink.pageEnd(ctx); err != nil {
			return nil, count, "", paged, &listSinkError{err: err}
		}
		if next == "" {
			return sink, count, listRV, paged, nil
		}
		options.Continue = next
		options.ResourceVersion, options.ResourceVersionMatch = "", ""
		paged = true
	}
}

// appendListPage appends the items of the list object obj to items and
// returns them with obj's resourceVersion and continue token.
func (r *Reflector) appendListPage(ctx context.Context, items []interface{}, obj kruntime.Object) ([]interface{}, string, string, error) {
	if isNilObject(obj) {
		return items, "", "", errors.New("the list call returned no object")
	}
	listMeta, err := meta.ListAccessor(obj)
	if err != nil {
		return items, "", "", fmt.Errorf("unable to understand list result of type %T: %w", obj, err)
	}
	if unsupported, gvk := isUnsupportedTableListObject(obj); unsupported {
		return items, "", "", fmt.Errorf("unsupported list gvk: %v, type: %v", gvk, r.typeDescription)
	}
	objs, err := meta.ExtractListWithAlloc(obj)
	if err != nil {
		return items, "", "", fmt.Errorf("unable to understand list result of type %T: %w", obj, err)
	}
	if items == nil {
		items = make([]interface{}, 0, len(objs))
	}
	for i, o := range objs {
		if isNilObject(o) {
			utilruntime.HandleErrorWithContext(ctx, nil, "List result holds an empty item; skipping it", "reflector", r.name, "index", i)
			continue
		}
		items = append(items, o)
	}
	return items, listMeta.GetResourceVersion(), listMeta.GetContinue(), nil
}

// streamList makes a streaming list (a watch with SendInitialEvents) and
// replaces the store's content with the objects received up to the bookmark
// that marks the end of the initial events. It returns the watch, still
// open, for the watch loop to continue with; (nil, nil) when ctx ended; an
// error when the stream failed or stayed silent, in which case the caller
// falls back to LIST. A stream the server closed before that bookmark is
// opened again.
func (r *Reflector) streamList(ctx context.Context) (watch.Interface, error) {
	trace := utiltrace.New("Reflector WatchList", utiltrace.Field{Key: "name", Value: r.name})
	defer trace.LogIfLong(10 * time.Second)

	for {
		if ctx.Err() != nil {
			return nil, nil
		}
		store, finish := r.newStreamListStore(ctx)
		options := metav1.ListOptions{
			ResourceVersion:      r.rewatchResourceVersion(),
			AllowWatchBookmarks:  true,
			SendInitialEvents:    ptr.To(true),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			TimeoutSeconds:       r.watchTimeoutSeconds(),
		}
		start := r.clock.Now()
		r.metrics.listStarted()
		r.stats.listStarting()
		w, err := r.listerWatcher.WatchWithContext(ctx, options)
		if err == nil && w == nil {
			err = errors.New("the watch call returned neither a watch nor an error")
		}
		if err != nil {
			if w != nil {
				w.Stop() // a misbehaving Watcher may return both
			}
			if ctx.Err() != nil {
				return nil, nil
			}
			retry, stopped := r.streamListRetry(ctx, err)
			if stopped {
				return nil, nil
			}
			if retry {
				continue
			}
			return nil, err
		}
		session := reflectorWatchSession{
			r:         r,
			store:     store,
			streaming: true,
		}
		ended, err := session.run(ctx, start, w, nil)
		if err != nil {
			if errors.Is(err, errorStopRequested) {
				return nil, nil
			}
			var incomplete *reflectorIncompleteStreamError
			if errors.As(err, &incomplete) {
				return nil, err // it went silent
			}
			retry, stopped := r.streamListRetry(ctx, err)
			if stopped {
				return nil, nil
			}
			if retry {
				continue
			}
			return nil, &reflectorIncompleteStreamError{name: r.name, events: session.events, err: err}
		}
		if !ended {
			// The server closed the stream, after at least one event or a
			// second, before the initial events were complete (a watch
			// timeout, a restarted server): open it again at once from
			// the same resource version, as client-go does.
			r.loggerFor(ctx).V(2).Info("Streaming list closed before the end of its initial events; opening it again",
				"reflector", r.name, "type", r.typeDescription, "events", session.events)
			continue
		}

		trace.Step("Objects streamed", utiltrace.Field{Key: "events", Value: session.events})
		r.setLastSyncResourceVersionUnavailable(false)
		var count int
		err = r.syncAt(session.streamRV, func() (err error) {
			count, err = finish(session.streamRV)
			return err
		})
		if err != nil {
			w.Stop()
			return nil, fmt.Errorf("unable to sync watch-list result: %w", err)
		}
		trace.Step("SyncWith done")
		r.stats.listSucceeded(r.clock.Now())
		r.metrics.listDone(r.clock.Since(start).Seconds(), count)
		return w, nil
	}
}

// reflectorIncompleteStreamError is the error of a streaming list whose
// watch ended with an error that is not retried, or received no event for
// the Reflector's initialEventsTimeout, before the bookmark that ends the
// initial events arrived. The Reflector then falls back to LIST for that
// cycle.
type reflectorIncompleteStreamError struct {
	name string
	// events is the number of events received before it ended.
	events int
	// silentFor, when positive, is how long the stream went without an
	// event before the Reflector stopped it.
	silentFor time.Duration
	// err is the error the watch ended with; nil when it went silent.
	err error
}

// Error implements error.
func (e *reflectorIncompleteStreamError) Error() string {
	const what = "without the initial-events-end bookmark; falling back to LIST"
	if e.silentFor > 0 {
		return fmt.Sprintf("reflector %s: streaming list stayed silent for %v after %d event(s) %s", e.name, e.silentFor, e.events, what)
	}
	return fmt.Sprintf("reflector %s: streaming list ended with an error after %d event(s) %s: %v", e.name, e.events, what, e.err)
}

// Unwrap returns the error the watch ended with, if any.
func (e *reflectorIncompleteStreamError) Unwrap() error { return e.err }

// streamListRetry decides what a streaming list does after err, as
// client-go does: retry after a backoff (refused connection, 429), retry at
// once from the latest data (expired or too large resource version), or give
// up (retry false), after which the Reflector falls back to LIST. stopped is
// true when ctx ended during the backoff. The watch error handler hears of a
// refused connection or a 429 (kinformer extension; a LIST would fail with
// them too), not of the rest, which a LIST also handles by itself.
func (r *Reflector) streamListRetry(ctx context.Context, err error) (retry, stopped bool) {
	switch {
	case isWatchErrorRetriable(err):
		r.loggerFor(ctx).V(2).Info("watch-list failed - backing off", "reflector", r.name, "type", r.typeDescription, "err", err)
		r.reportWatchFailure(ctx, err)
		if !r.sleep(ctx, r.backoffDelay(err)) {
			return false, true
		}
		return true, false
	case isExpiredError(err) || isTooLargeResourceVersionError(err):
		r.loggerFor(ctx).V(4).Info("watch-list resource version unavailable - streaming the latest data", "reflector", r.name, "type", r.typeDescription, "err", err)
		r.setLastSyncResourceVersionUnavailable(true)
		r.stats.setNextList(relistIdxExpired)
		return true, false
	}
	return false, false
}

// watchWithResync runs the watch loop, with the resync timer beside it when
// a resync period is set.
func (r *Reflector) watchWithResync(ctx context.Context, w watch.Interface) error {
	if r.resyncPeriod <= 0 {
		return r.watchLoop(ctx, w, nil)
	}
	resyncErr := make(chan error, 1)
	resyncCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.resyncLoop(resyncCtx, resyncErr)
	}()
	defer func() {
		cancel()
		wg.Wait()
	}()
	return r.watchLoop(ctx, w, resyncErr)
}

// resyncLoop calls the store's Resync every resync period (when ShouldResync
// allows) until ctx ends or Resync fails; the failure goes to errc, which
// ends the watch.
func (r *Reflector) resyncLoop(ctx context.Context, errc chan<- error) {
	t := r.clock.NewTimer(r.resyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if r.ShouldResync == nil || r.ShouldResync() {
			r.loggerFor(ctx).V(4).Info("Forcing resync", "reflector", r.name)
			if err := r.store.Resync(); err != nil {
				errc <- err
				return
			}
		}
		t.Reset(r.resyncPeriod)
	}
}

// reflectorWatchStep is what the watch loop does after a watch ended.
type reflectorWatchStep int

const (
	// watchStepResume opens a new watch from the last resource version.
	watchStepResume reflectorWatchStep = iota
	// watchStepBackoffResume waits a backoff delay, then resumes.
	watchStepBackoffResume
	// watchStepRelist ends the cycle: Run relists after its backoff.
	watchStepRelist
	// watchStepStop ends the cycle because the context is done.
	watchStepStop
)

// nextWatchStep classifies how a watch ended (err is nil for a normal
// close). internalRetry tells whether another internal error may be retried.
func nextWatchStep(err error, internalRetry bool) reflectorWatchStep {
	switch {
	case err == nil:
		return watchStepResume
	case errors.Is(err, errorStopRequested):
		return watchStepStop
	case isExpiredError(err):
		return watchStepRelist
	case apierrors.IsTooManyRequests(err):
		return watchStepBackoffResume
	case apierrors.IsInternalError(err) && internalRetry:
		return watchStepResume
	case isWatchIdleTimeout(err):
		return watchStepResume
	}
	return watchStepRelist
}

// watchLoop consumes w (when not nil; it comes from a streaming list) and
// then watches from the last resource version, again after every normal
// close, until ctx ends or a relist is needed. It always stops the watches
// it consumes.
func (r *Reflector) watchLoop(ctx context.Context, w watch.Interface, resyncErr <-chan error) error {
	logger := r.loggerFor(ctx)
	retry := NewRetryWithDeadline(r.MaxInternalErrorRetryDuration, reflectorInternalErrorQuietPeriod, apierrors.IsInternalError, r.clock)
	// reopened: a watch was opened before in this cycle, so the next one
	// is a restart.
	reopened := false
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()
	for {
		if ctx.Err() != nil {
			return nil
		}
		start := r.clock.Now()
		propagateRV := true
		if w == nil {
			rv := r.LastSyncResourceVersion()
			options := metav1.ListOptions{
				ResourceVersion:     rv,
				TimeoutSeconds:      r.watchTimeoutSeconds(),
				AllowWatchBookmarks: true,
			}
			// From "" or "0" the server first sends synthetic ADDED events
			// in no particular resource version order: the resource
			// version only counts once they are over.
			propagateRV = rv != "" && rv != "0"
			var err error
			w, err = r.listerWatcher.WatchWithContext(ctx, options)
			if err == nil && w == nil {
				err = errors.New("the watch call returned neither a watch nor an error")
			}
			if err != nil {
				if w != nil {
					w.Stop() // a misbehaving Watcher may return both
				}
				w = nil
				if ctx.Err() != nil {
					return nil
				}
				if isWatchErrorRetriable(err) {
					logger.V(4).Info("Watch failed - backing off", "reflector", r.name, "type", r.typeDescription, "err", err)
					r.reportWatchFailure(ctx, err)
					if !r.sleep(ctx, r.backoffDelay(err)) {
						return nil
					}
					continue
				}
				r.stats.setNextList(relistIdxWatchError)
				return err
			}
		}
		r.metrics.watchStarted()
		if reopened {
			r.stats.watchRestarts.Add(1)
		}
		reopened = true
		session := reflectorWatchSession{
			r:           r,
			store:       r.store,
			propagateRV: propagateRV,
		}
		_, err := session.run(ctx, start, w, resyncErr)
		w = nil // run stopped it
		retry.After(err)
		step := nextWatchStep(err, apierrors.IsInternalError(err) && retry.ShouldRetry())
		switch step {
		case watchStepResume:
			if err != nil {
				logger.V(2).Info("Resuming watch", "reflector", r.name, "type", r.typeDescription, "err", err)
				r.reportWatchFailure(ctx, err)
			}
			continue
		case watchStepStop:
			return nil
		case watchStepBackoffResume:
			logger.V(2).Info("Watch ended - backing off before resuming", "reflector", r.name, "type", r.typeDescription, "err", err)
			r.reportWatchFailure(ctx, err)
			if !r.sleep(ctx, r.backoffDelay(err)) {
				return nil
			}
			continue
		}
		if isExpiredError(err) {
			logger.V(4).Info("Watch closed", "reflector", r.name, "type", r.typeDescription, "err", err)
		} else {
			logger.Info("Warning: watch ended with error", "reflector", r.name, "type", r.typeDescription, "err", err)
		}
		r.reportWatchFailure(ctx, err)
		r.stats.watchEndedForRelist(err)
		return nil
	}
}

// errorStopRequested ends a watch session when the context is done.
var errorStopRequested = errors.New("stop requested")

// reflectorEventStore is where a watch session puts objects: the
// Reflector's store, or the accumulator of a streaming list.
type reflectorEventStore interface {
	Add(obj interface{}) error
	Update(obj interface{}) error
	Delete(obj interface{}) error
}

// reflectorWatchSession consumes one watch.
type reflectorWatchSession struct {
	r     *Reflector
	store reflectorEventStore
	// streaming: the session collects a streaming list and ends, leaving
	// the watch open, at the bookmark that ends the initial events; the
	// resource version reached goes to streamRV, not to the Reflector.
	streaming bool
	streamRV  string
	// propagateRV: every event's resource version counts, not only those
	// after the first non-ADDED event.
	propagateRV bool
	// events is the number of events run applied (set when it returns).
	events int
}

// run applies the events of w to the session's store until w closes, an
// error event arrives, errc delivers an error, ctx ends (errorStopRequested),
// or, when streaming, the initial events end (ended true; w is left open).
// In every other case w is stopped. A watch that closes within a second
// without an event yields a *VeryShortWatchError. A streaming session that
// receives no event for the Reflector's initialEventsTimeout ends with a
// *reflectorIncompleteStreamError. A plain session that received a periodic
// bookmark and then nothing for the Reflector's watchIdleTimeout ends with a
// *WatchIdleTimeoutError.
func (s *reflectorWatchSession) run(ctx context.Context, start time.Time, w watch.Interface, errc <-chan error) (ended bool, err error) {
	r := s.r
	bookmarks, _ := s.store.(ReflectorBookmarkStore)
	var rvUpdater ResourceVersionUpdater
	if !s.streaming {
		rvUpdater, _ = s.store.(ResourceVersionUpdater)
	}

	// silence, when not nil, ends the session once nothing arrived for its
	// limit: while streaming, the bound of a stream that went silent
	// (initialEventsTimeout); on a plain watch, the liveness deadline,
	// armed by the first periodic bookmark (armsWatchIdleTimeout). While
	// streaming, lastEvent is when the last event (of any kind) arrived,
	// and the ticker warns about a long wait when the bound is off or
	// longer.
	var silence *silenceTimer
	defer func() { silence.stop() }()
	var tick <-chan time.Time
	var lastEvent time.Time
	if s.streaming {
		if r.initialEventsTimeout > 0 {
			silence = newSilenceTimer(r.clock, r.initialEventsTimeout)
		}
		if tc, ok := r.clock.(clock.WithTicker); ok && (r.initialEventsTimeout <= 0 || r.initialEventsTimeout > reflectorInitialEventsWarnInterval) {
			ticker := tc.NewTicker(reflectorInitialEventsWarnInterval)
			defer ticker.Stop()
			tick = ticker.C()
		}
	}

	keepOpen := false
	events := 0
	defer func() {
		s.events = events
		if !keepOpen {
			w.Stop()
		}
	}()

	pastInitialAdds := false
	results := w.ResultChan()
	for {
		select {
		case <-ctx.Done():
			return false, errorStopRequested
		case err := <-errc:
			return false, err
		case <-tick:
			r.warnInitialEventsPending(ctx, start, lastEvent)
			continue
		case <-silence.C():
			quiet, expired := silence.expired()
			if !expired {
				continue
			}
			if s.streaming {
				return false, &reflectorIncompleteStreamError{name: r.name, events: events, silentFor: quiet}
			}
			r.metrics.watchEnded(r.clock.Since(start).Seconds(), events, false)
			return false, &WatchIdleTimeoutError{Name: r.name, Timeout: silence.limit, ResourceVersion: r.LastSyncResourceVersion()}
		case event, ok := <-results:
			if ok {
				// Anything that arrives, even what is then rejected,
				// shows that the stream is alive.
				silence.observed()
				if s.streaming {
					lastEvent = r.clock.Now()
				}
			}
			if !ok {
				duration := r.clock.Since(start)
				short := events == 0 && duration < reflectorShortWatch
				if !s.streaming {
					r.metrics.watchEnded(duration.Seconds(), events, short)
				}
				if short {
					return false, &VeryShortWatchError{Name: r.name}
				}
				r.loggerFor(ctx).V(4).Info("Watch close", "reflector", r.name, "type", r.typeDescription, "totalItems", events)
				return false, nil
			}
			if event.Type == watch.Error {
				return false, r.watchErrorEvent(event.Object)
			}
			objMeta, ok := r.acceptEvent(ctx, event)
			if !ok {
				continue // logged and counted; it counts as no event
			}
			r.stats.eventReceived(r.clock.Now())
			rv := objMeta.GetResourceVersion()
			initialEventsEnd := false
			switch event.Type {
			case watch.Added:
				if err := s.store.Add(event.Object); err != nil {
					utilruntime.HandleErrorWithContext(ctx, err, "Unable to add watch event object to store", "reflector", r.name, "object", event.Object)
				}
			case watch.Modified:
				pastInitialAdds = true
				if err := s.store.Update(event.Object); err != nil {
					utilruntime.HandleErrorWithContext(ctx, err, "Unable to update watch event object to store", "reflector", r.name, "object", event.Object)
				}
			case watch.Deleted:
				pastInitialAdds = true
				if err := s.store.Delete(event.Object); err != nil {
					utilruntime.HandleErrorWithContext(ctx, err, "Unable to delete watch event object from store", "reflector", r.name, "object", event.Object)
				}
			case watch.Bookmark:
				pastInitialAdds = true
				initialEventsEnd = objMeta.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
				if bookmarks != nil {
					if err := bookmarks.Bookmark(rv); err != nil {
						utilruntime.HandleErrorWithContext(ctx, err, "Unable to send bookmark event to store", "reflector", r.name, "object", event.Object)
					}
				}
			}
			if rv != "" && (s.propagateRV || pastInitialAdds) {
				if s.streaming {
					s.streamRV = rv
				} else {
					r.setLastSyncResourceVersion(rv)
					if rvUpdater != nil {
						rvUpdater.UpdateResourceVersion(rv)
					}
				}
			}
			events++
			if silence == nil && r.armsWatchIdleTimeout(s.streaming, event.Type, initialEventsEnd) {
				silence = newSilenceTimer(r.clock, r.watchIdleTimeout)
			}
			if initialEventsEnd && s.streaming {
				keepOpen = true
				r.loggerFor(ctx).V(4).Info("Exiting watch because received the bookmark that marks the end of initial events stream",
					"reflector", r.name, "totalItems", events, "duration", r.clock.Since(start))
				return true, nil
			}
		}
	}
}

// warnInitialEventsPending logs a warning while a streaming list has not
// received its end bookmark and no event arrived for a while.
func (r *Reflector) warnInitialEventsPending(ctx context.Context, start, lastEvent time.Time) {
	logger := r.loggerFor(ctx)
	if lastEvent.IsZero() {
		logger.Info("Warning: event bookmark expired", "reflector", r.name,
			"err", fmt.Sprintf("%s: awaiting required bookmark event for initial events stream, no events received for %v", r.name, r.clock.Since(start)))
		return
	}
	if idle := r.clock.Since(lastEvent); idle >= reflectorInitialEventsWarnInterval {
		logger.Info("Warning: event bookmark expired", "reflector", r.name,
			"err", fmt.Sprintf("%s: hasn't received required bookmark event marking the end of initial events stream, received last event %v ago", r.name, idle))
	}
}

// watchErrorEventToError turns the object of a watch ERROR event into an
// error (a *StatusError for a Status).
func watchErrorEventToError(obj kruntime.Object) error {
	if isNilObject(obj) {
		return errors.New("watch error event without a status")
	}
	return apierrors.FromObject(obj)
}

// isNilObject reports whether obj is nil or a nil pointer.
func isNilObject(obj interface{}) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// reflectorBackoff is the Reflector's retry delay: a wait.Backoff that starts
// over after resetAfter without a failure. It is safe for concurrent use.
//
// Difference from client-go: client-go's delay (wait.Backoff.DelayWithReset)
// starts over every resetAfter counted from when it last started over, even
// while failures continue; kinformer's counts from the end of the last
// delay, so a server that stays unreachable keeps being retried at the cap.
type reflectorBackoff struct {
	mu         sync.Mutex
	initial    wait.Backoff
	current    wait.Backoff
	resetAfter time.Duration
	clock      clock.PassiveClock
	quietSince time.Time // end of the last delay handed out
}

func newReflectorBackoff(b wait.Backoff, resetAfter time.Duration, c clock.PassiveClock) *reflectorBackoff {
	return &reflectorBackoff{initial: b, current: b, resetAfter: resetAfter, clock: c}
}

// next returns the next delay.
func (b *reflectorBackoff) next() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	if !b.quietSince.IsZero() && now.Sub(b.quietSince) > b.resetAfter {
		b.current = b.initial
	}
	d := b.current.Step()
	b.quietSince = now.Add(d)
	return d
}

// VeryShortWatchError is the error of a watch that closed within a second
// of being opened without delivering an event, which usually means the
// server cannot serve it. The Reflector relists after it.
type VeryShortWatchError struct {
	// Name of the Reflector
	Name string
}

// Error implements error.
func (e *VeryShortWatchError) Error() string {
	return fmt.Sprintf("very short watch: %s: Unexpected watch close - watch lasted less than a second and no items received", e.Name)
}

// isExpiredError reports a 410: the resource version asked for is no longer
// available (reason Expired, or Gone from servers older than 1.18).
func isExpiredError(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// isTooLargeResourceVersionError reports that the resource version asked for
// is newer than the server has seen, in the forms servers use (a status
// cause since 1.18.6; a Timeout with a message before).
func isTooLargeResourceVersionError(err error) bool {
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return true
	}
	if !apierrors.IsTimeout(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status == nil {
		return false
	}
	details := status.Status().Details
	if details == nil {
		return false
	}
	const tooLarge = "Too large resource version"
	for _, cause := range details.Causes {
		if cause.Message == tooLarge {
			return true
		}
	}
	return strings.Contains(status.Status().Message, tooLarge)
}

// isWatchErrorRetriable reports errors after which the watch is reopened
// from the same resource version after a backoff, without a relist: the
// server is unreachable (connection refused) or overloaded (429).
func isWatchErrorRetriable(err error) bool {
	return utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err)
}

// unsupportedTableGVKs are the Table kinds of meta.k8s.io, which a Reflector
// cannot store.
var unsupportedTableGVKs = map[schema.GroupVersionKind]bool{
	metav1beta1.SchemeGroupVersion.WithKind("Table"): true,
	metav1.SchemeGroupVersion.WithKind("Table"):      true,
}

// isUnsupportedTableObject reports an unstructured meta.k8s.io Table.
func isUnsupportedTableObject(obj kruntime.Object) bool {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u == nil || u.GetKind() != "Table" {
		return false
	}
	return unsupportedTableGVKs[u.GroupVersionKind()]
}

// isUnsupportedTableListObject reports an unstructured list whose kind is a
// meta.k8s.io Table, with that kind.
func isUnsupportedTableListObject(obj kruntime.Object) (bool, schema.GroupVersionKind) {
	u, ok := obj.(*unstructured.UnstructuredList)
	if !ok || u == nil {
		return false, schema.GroupVersionKind{}
	}
	gvk := u.GroupVersionKind()
	return unsupportedTableGVKs[gvk], gvk
}
