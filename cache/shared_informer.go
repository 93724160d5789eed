package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache/internal/apply"
	"github.com/kinformer/kinformer/cache/internal/diag"
	"github.com/kinformer/kinformer/cache/internal/fanout"
)

// SharedInformer keeps a local cache of one kind of API object (optionally
// restricted to a namespace or by label/field selectors) in step with the
// API server and notifies any number of registered handlers of the changes.
//
// Cache: GetStore (and GetIndexer of a SharedIndexInformer) expose the cache,
// keyed by "namespace/name" (or "name" for cluster-scoped objects, see
// MetaNamespaceKeyFunc). It is eventually consistent: unless the informer is
// stopped or the connection stays broken, every state of an object on the
// server is eventually replaced in the cache by that state or a later one,
// and removed objects eventually disappear. The states an object goes
// through in the cache are a subsequence of its states on the server. Every
// read is answered from one snapshot, so List never contains a key twice.
// The UID plays no part in an object's identity: a delete and re-create under
// the same name may appear as a single update.
//
// Handlers: a handler registered before Run is told about every change of
// the cache; one registered later first gets an add (isInInitialList true)
// for every object in the cache at that moment, then every later change.
// Notifications come after the corresponding cache (and index) update, are
// delivered to one handler sequentially and in order, and independently per
// handler: every handler has its own goroutine and an unbounded buffer, so a
// slow handler delays only itself (it does, however, make its buffer grow,
// so long-running work belongs on a work queue). A delete notification
// carries the last known state, or a DeletedFinalStateUnknown when the
// deletion was only noticed by a relist.
//
// Relists: a relist (after a 410 Gone, or whenever the watch cannot resume)
// is applied atomically, as in client-go v0.37: while it runs, the cache and
// its resourceVersion stay as they were; once it is complete, the cache is
// replaced by the listed state in one step, and then handlers are told:
// first a delete (with a DeletedFinalStateUnknown) for every cached object
// the list no longer has, then an update or an add for every listed object,
// in list order. SharedIndexInformerOptions.RelistPageByPage applies
// relists page by page instead.
//
// Panics: a handler that panics does not crash the process. The panic is
// recovered and reported through utilruntime.PanicHandlers (by default the
// error "Observed a panic" with the panic value and the stack, naming the
// line that panicked), followed by an info line naming the handler; it is
// counted, the notification is skipped, and the informer and every handler,
// the panicking one included, go on.
//
// Unchanged objects: a relist keeps the cached object for every listed
// object whose resourceVersion and UID are the cached one's (except on the
// first list after resuming from a snapshot or after the server said a
// version is too large), and drops the decoded duplicate as soon as it is
// read, so that only the objects that changed are held twice while a relist
// runs. The transform (SetTransform) does not run again on such an object,
// and the update handlers get for it carries the same object as old and
// new. With UseDeltaFIFO, relists hold and pass the listed objects as
// decoded.
//
// Panics and unchanged objects differ from client-go v0.37.2; see
// COMPATIBILITY.md.
//
// All methods are safe for concurrent use.
type SharedInformer interface {
	// AddEventHandler registers handler with the informer's default resync
	// period. It returns the registration, which tells whether the handler
	// has synced and removes it again, or an error if the informer has
	// stopped or handler is nil.
	AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error)
	// AddEventHandlerWithResyncPeriod registers handler with its own resync
	// period; zero means no resyncs for this handler. A resync delivers an
	// update for every cached object to the handler without contacting the
	// server. An informer created with a zero resync period never resyncs.
	// Otherwise the effective period is at least one second and at least
	// the informer's resync check period (see
	// NewSharedIndexInformerWithOptions), and actual resyncs may come later
	// than the period because they are checked on a timer.
	AddEventHandlerWithResyncPeriod(handler ResourceEventHandler, resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error)
	// AddEventHandlerWithOptions is AddEventHandlerWithResyncPeriod with the
	// optional parameters in a struct.
	AddEventHandlerWithOptions(handler ResourceEventHandler, options HandlerOptions) (ResourceEventHandlerRegistration, error)
	// RemoveEventHandler unregisters a handler: it receives no notification
	// after the one in progress, if any. It does not wait for that one (use
	// ShutDownEventHandler). Removing an unknown or already removed handler
	// is a no-op; a registration of a foreign type is an error.
	RemoveEventHandler(handle ResourceEventHandlerRegistration) error
	// GetStore returns the informer's cache. Use it for reading only.
	GetStore() Store
	// GetController returns a Controller whose Run methods do nothing and
	// whose other methods report the informer's state.
	GetController() Controller
	// Run runs the informer until stopCh is closed and returns once all its
	// goroutines, including those of the handlers, have stopped. An
	// informer can be run only once.
	Run(stopCh <-chan struct{})
	// RunWithContext is Run with a context.
	RunWithContext(ctx context.Context)
	// HasSynced reports whether the cache has been filled by a complete
	// initial list. It does not tell whether a handler has processed it:
	// use the registration's HasSynced for that.
	HasSynced() bool
	// HasSyncedChecker is HasSynced as a DoneChecker, for waiting without
	// polling.
	HasSyncedChecker() DoneChecker
	// LastSyncResourceVersion returns the resource version of the last list
	// or watch event seen, or "" before Run. It does not move while a list
	// is in progress; it may be ahead of the cache, which applies what was
	// seen later (the cache's own resourceVersion, a watermark, is
	// GetStore().LastStoreSyncResourceVersion()).
	LastSyncResourceVersion() string

	// SetWatchErrorHandler sets the function called whenever a list or
	// watch fails (the informer then backs off and retries). The last call
	// wins; after Run it returns an error. The handler should return
	// quickly. The handler is called for every list and watch failure,
	// including watches refused by the connection or ended by 410 Gone
	// (see WatchErrorHandlerWithContext). Differs from client-go v0.37.2;
	// see COMPATIBILITY.md.
	SetWatchErrorHandler(handler WatchErrorHandler) error

	// SetWatchErrorHandlerWithContext is SetWatchErrorHandler for a handler
	// that also receives a context.
	SetWatchErrorHandlerWithContext(handler WatchErrorHandlerWithContext) error

	// SetTransform sets a function applied exactly once to every object
	// received from the server, before it is stored and before handlers see
	// it, e.g. to drop unneeded fields. A relist does not apply it to an
	// object it finds unchanged (same resourceVersion as the cached one):
	// the cached object is kept. After Run it returns an error.
	SetTransform(handler TransformFunc) error

	// IsStopped reports whether the informer has stopped. A stopped
	// informer accepts no handlers and cannot be run again.
	IsStopped() bool
}

// ResourceEventHandlerRegistration is the handle returned when a handler is
// registered. Pass it to the same informer's RemoveEventHandler (or to
// ShutDownEventHandler) to unregister the handler.
type ResourceEventHandlerRegistration interface {
	// HasSynced reports whether the informer has synced and the handler
	// has processed every notification of its initial list.
	HasSynced() bool

	// HasSyncedChecker is HasSynced as a DoneChecker, for waiting without
	// polling.
	HasSyncedChecker() DoneChecker
}

// HandlerOptions holds the optional parameters of
// SharedInformer.AddEventHandlerWithOptions. The zero value means defaults.
type HandlerOptions struct {
	// Logger is used for the handler's log messages instead of
	// klog.Background().
	Logger *klog.Logger

	// ResyncPeriod requests a resync period for the handler (see
	// SharedInformer.AddEventHandlerWithResyncPeriod); nil means the
	// informer's default.
	ResyncPeriod *time.Duration

	// BufferPolicy says how the handler's buffer holds notifications
	// waiting for the handler: HandlerBufferUnbounded (the zero value:
	// every notification, in order, as in client-go) or
	// HandlerBufferCoalesceByKey (the latest state per object, memory
	// bounded by the number of objects). Other values make
	// AddEventHandlerWithOptions fail. kinformer extension.
	BufferPolicy HandlerBufferPolicy
}

// SharedIndexInformer is a SharedInformer whose cache is an Indexer.
type SharedIndexInformer interface {
	SharedInformer
	// AddIndexers adds indices to the cache. It fails once the informer has
	// stopped, and for index names that exist already.
	AddIndexers(indexers Indexers) error
	// GetIndexer returns the informer's cache as an Indexer. Use it for
	// reading only.
	GetIndexer() Indexer
}

// NewSharedInformer returns a SharedInformer without indices; see
// NewSharedIndexInformerWithOptions.
func NewSharedInformer(lw ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration) SharedInformer {
	return NewSharedIndexInformer(lw, exampleObject, defaultEventHandlerResyncPeriod, Indexers{})
}

// NewSharedIndexInformer returns a SharedIndexInformer with the given
// indices; see NewSharedIndexInformerWithOptions.
func NewSharedIndexInformer(lw ListerWatcher, exampleObject runtime.Object, defaultEventHandlerResyncPeriod time.Duration, indexers Indexers) SharedIndexInformer {
	return NewSharedIndexInformerWithOptions(lw, exampleObject, SharedIndexInformerOptions{
		ResyncPeriod: defaultEventHandlerResyncPeriod,
		Indexers:     indexers,
	})
}

// NewSharedIndexInformerWithOptions returns a SharedIndexInformer for the
// objects of lw, of the type of exampleObject. Nothing happens until it is
// run.
//
// Resyncs: with options.ResyncPeriod zero the informer never resyncs.
// Otherwise every handler with a non-zero resync period gets resyncs at a
// nominal period that is its requested period, raised to at least one second
// and to at least the informer's resync check period. The check period
// starts as options.ResyncPeriod and is lowered to the smallest period
// requested by a handler added before Run (never below one second); it is
// fixed once the informer runs.
//
// Mutation detection: when the environment variable
// KUBE_CACHE_MUTATION_DETECTOR is true at construction, every object the
// informer adds to or updates in its cache is also given to a
// CacheMutationDetector (see NewCacheMutationDetector), which runs while the
// informer runs and fails loudly when a handler or lister user modifies a
// cached object in place. It costs memory and time; it is meant for tests.
func NewSharedIndexInformerWithOptions(lw ListerWatcher, exampleObject runtime.Object, options SharedIndexInformerOptions) SharedIndexInformer {
	return newSharedIndexInformer(lw, exampleObject, newInformerConfig(options))
}

// newSharedIndexInformer returns an informer for the objects of lw, of the
// type of exampleObject, configured by config (see
// NewSharedIndexInformerWithOptions).
func newSharedIndexInformer(lw ListerWatcher, exampleObject runtime.Object, config informerConfig) *sharedIndexInformer {
	realClock := clock.RealClock{}
	s := &sharedIndexInformer{
		config:                config,
		processor:             newHandlerProcessor(realClock, config.HandlerMetricsProvider),
		handlerMetrics:        config.HandlerMetricsProvider,
		synced:                make(chan struct{}),
		listerWatcher:         lw,
		objectType:            exampleObject,
		resyncCheckPeriod:     config.ResyncPeriod,
		clock:                 realClock,
		cacheMutationDetector: NewCacheMutationDetector(fmt.Sprintf("%T", exampleObject)),
	}
	// The cache's watermark releases the callers of WaitForResourceVersion
	// and counts the confirmations it reached whenever it moves: by a watch
	// change applied, a Replace or a Bookmark.
	s.indexer = NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, config.Indexers,
		WithStoreMetrics(config.Identifier, config.InformerMetricsProvider),
		withResourceVersionWatermark(func() {
			s.stats.Freshness().WatermarkMoved()
			s.rvWaiters.Notify(s.watermark)
		}))
	s.stats = diag.NewStatsFor(s.watermark)
	return s
}

// sharedIndexInformer implements SharedIndexInformer: a controller (Reflector
// + queue + processing loop) keeps the indexer current, and a
// fanout.Processor fans the resulting notifications out to the handlers.
type sharedIndexInformer struct {
	indexer   Indexer
	processor *fanout.Processor

	// snapshotRun is the scope this run's snapshot is tied to, once the
	// snapshot was tried (see resolveSnapshotScope).
	snapshotRun atomic.Pointer[snapshotRunScope]

	// synced is closed once the controller's queue has delivered the
	// initial list.
	synced chan struct{}

	listerWatcher ListerWatcher
	objectType    runtime.Object

	// cacheMutationDetector is given every object added to or updated in
	// the cache, and runs while the informer runs. It does nothing unless
	// KUBE_CACHE_MUTATION_DETECTOR=true was set when the informer was made.
	cacheMutationDetector MutationDetector

	clock clock.Clock
	// probeTimers runs the staleness probe's timer; nil means the real
	// clock. Tests set it apart from clock so that stepping one does not
	// fire the other's timers.
	probeTimers clock.Clock

	// stats are the diagnostics counters, shared with the Reflector (see
	// GetInformerStatus).
	stats *diag.Stats

	// startedLock guards the fields below it, and config until Run: it
	// is read-only from then on.
	startedLock sync.Mutex
	config      informerConfig
	// handlerMetrics is the provider timing the handlers now (the
	// construction's HandlerMetricsProvider, then ConfigureInformer's).
	handlerMetrics    HandlerMetricsProvider
	started, stopped  bool
	controller        *controller
	queue             Queue
	resyncCheckPeriod time.Duration

	// blockDeltas is held while a popped batch is applied and distributed,
	// and while a late handler is given the cache contents, so that such a
	// handler neither misses nor duplicates a change.
	blockDeltas sync.Mutex
	applier     *apply.Applier[Delta]
	notes       apply.Notes
	// relistUnsettled, guarded by blockDeltas, is true while the cache
	// holds pieces of a relist applied piece by piece (Replaced deltas, the
	// deletions a relist derived) that a complete list has not settled yet
	// (see noteRelistPiecesLocked). Only tracked for a snapshotting informer.
	relistUnsettled bool

	// rvWaiters are the callers of WaitForResourceVersion.
	rvWaiters diag.ResourceVersionWaiters
}

// kinformerInformer is implemented by the shared informers of this package
// and by the package's wrappers around one (the typed informer). It is the
// one way the package-level extensions that take a SharedInformer
// (GetInformerStatus, WaitForResourceVersion, ConfigureInformer, ...) reach
// the informer doing the work: see sharedOf.
type kinformerInformer interface {
	// shared returns the informer doing the work, or nil when there is
	// none (a wrapper around nil or around an informer of another package).
	shared() *sharedIndexInformer
}

// shared implements kinformerInformer.
func (s *sharedIndexInformer) shared() *sharedIndexInformer {
	return s
}

// sharedOf returns the sharedIndexInformer behind informer: itself, or the
// one inside the package's wrappers; nil for a nil informer and for one of
// another package.
func sharedOf(informer SharedInformer) *sharedIndexInformer {
	if k, ok := informer.(kinformerInformer); ok {
		return k.shared()
	}
	return nil
}

// checkedTransform returns transform preceded by prepare
// (SharedIndexInformerOptions.TransformPrepare) and followed by check
// (SharedIndexInformerOptions.TransformCheck): an object check refuses is
// counted and the transform fails with a *refusedObjectError wrapping
// check's error (a list then drops that object alone). It returns
// transform itself when transform is nil, or prepare and check both are.
func (s *sharedIndexInformer) checkedTransform(transform TransformFunc, prepare func(obj interface{}) interface{}, check func(obj interface{}) error) TransformFunc {
	if transform == nil || (prepare == nil && check == nil) {
		return transform
	}
	return func(obj interface{}) (interface{}, error) {
		if prepare != nil {
			obj = prepare(obj)
		}
		out, err := transform(obj)
		if err != nil {
			return nil, err
		}
		if check == nil {
			return out, nil
		}
		if err := check(out); err != nil {
			s.stats.CountTransformRefused()
			return nil, &refusedObjectError{err: err}
		}
		return out, nil
	}
}

// informerSyncedChecker is the DoneChecker of an informer's HasSynced.
type informerSyncedChecker struct {
	s *sharedIndexInformer
}

// Name describes the informer by its object type.
func (c informerSyncedChecker) Name() string {
	return fmt.Sprintf("SharedIndexInformer %T", c.s.objectType)
}

// Done is closed once the informer has synced.
func (c informerSyncedChecker) Done() <-chan struct{} {
	return c.s.synced
}

func (s *sharedIndexInformer) Run(stopCh <-chan struct{}) {
	s.RunWithContext(wait.ContextForChannel(stopCh))
}

func (s *sharedIndexInformer) RunWithContext(ctx context.Context) {
	logger := klog.FromContext(ctx)

	s.startedLock.Lock()
	if s.started {
		s.startedLock.Unlock()
		logger.Info("Warning: the sharedIndexInformer has started, run more than once is not allowed")
		return
	}
	if s.stopped {
		s.startedLock.Unlock()
		logger.Info("Warning: the sharedIndexInformer has stopped and cannot be run again")
		return
	}
	config := s.config
	settings := config.resolve(s.objectType, s.checkedTransform(config.transform, config.TransformPrepare, config.TransformCheck))
	settings.queue.store = s.indexer
	queue := newInformerQueue(logger, settings.queue)
	if _, off := s.cacheMutationDetector.(noopMutationDetector); !off {
		s.notes.Detector = s.cacheMutationDetector
	}
	s.applier = s.newApplier(logger, queue, settings.queue.transform)
	settings.reflector.clock, settings.reflector.stats = s.clock, s.stats
	settings.reflector.shouldResync = s.processor.ShouldResync
	settings.reflector.engine.ResyncPeriod = s.resyncCheckPeriod
	if config.SnapshotFile != "" {
		settings.reflector.resume = s.loadSnapshot
	}
	ctrl := newController(Config{
		Queue:         queue,
		ListerWatcher: s.listerWatcher,
		ObjectType:    s.objectType,
		Process:       s.applier.DeliverItem,
		ProcessBatch:  s.applier.Deliver,
	}, controllerInternals{reflector: &settings.reflector, pop: informerPop(queue, s.applier)})
	s.controller = ctrl
	s.queue = queue
	s.started = true
	probeTimers := s.probeTimers
	s.startedLock.Unlock()
	s.stats.MarkStarted(s.clock.Now())

	// The processor outlives the controller: it is stopped only after the
	// controller has returned, and keeps the caller's values (logger).
	processorCtx, stopProcessor := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	if s.notes.Detector != nil {
		wg.Go(func() { s.cacheMutationDetector.Run(processorCtx.Done()) })
	}
	wg.Go(func() { s.processor.Run(processorCtx) })
	if interval := settings.probeInterval; interval > 0 {
		if probeTimers == nil {
			probeTimers = clock.RealClock{}
		}
		wg.Go(func() { s.runStalenessProbe(ctx, interval, probeTimers) })
	}
	wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-queue.HasSyncedChecker().Done():
			// The queues report synced only after the last item of the
			// initial list has been processed (and so distributed).
			close(s.synced)
			s.processor.UpstreamHasSynced()
		}
	})

	defer func() {
		s.startedLock.Lock()
		s.stopped = true
		s.startedLock.Unlock()
		s.rvWaiters.Stop(ErrInformerStopped)
		s.saveSnapshot(context.WithoutCancel(ctx))
		stopProcessor()
		wg.Wait()
	}()
	ctrl.RunWithContext(ctx)
}

func (s *sharedIndexInformer) HasSynced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

func (s *sharedIndexInformer) HasSyncedChecker() DoneChecker {
	return informerSyncedChecker{s: s}
}

func (s *sharedIndexInformer) LastSyncResourceVersion() string {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	if s.controller == nil {
		return ""
	}
	return s.controller.LastSyncResourceVersion()
}

// WaitForResourceVersion implements ResourceVersionWaiter; see the
// package-level WaitForResourceVersion.
func (s *sharedIndexInformer) WaitForResourceVersion(ctx context.Context, resourceVersion string) error {
	return s.rvWaiters.Wait(ctx, resourceVersion, s.watermark)
}

func (s *sharedIndexInformer) GetStore() Store {
	return s.indexer
}

func (s *sharedIndexInformer) GetIndexer() Indexer {
	return s.indexer
}

func (s *sharedIndexInformer) AddIndexers(indexers Indexers) error {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	if s.stopped {
		return errors.New("indexer was not added because it has stopped already")
	}
	return s.indexer.AddIndexers(indexers)
}

func (s *sharedIndexInformer) GetController() Controller {
	return &dummyController{informer: s}
}

func (s *sharedIndexInformer) IsStopped() bool {
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	return s.stopped
}

// dummyController is what GetController returns: the informer runs itself,
// so Run does nothing, while the other methods report the informer's state.
type dummyController struct {
	informer *sharedIndexInformer
}

func (d *dummyController) RunWithContext(context.Context) {}

func (d *dummyController) Run(<-chan struct{}) {}

func (d *dummyController) HasSynced() bool {
	return d.informer.HasSynced()
}

func (d *dummyController) HasSyncedChecker() DoneChecker {
	return d.informer.HasSyncedChecker()
}

func (d *dummyController) LastSyncResourceVersion() string {
	return d.informer.LastSyncResourceVersion()
}

// refusedObjectError is the error of a transform whose output the informer's
// transform check refused (SharedIndexInformerOptions.TransformCheck). Such an object is dropped
// alone: a list goes on without it, and a deletion is still queued, as a
// DeletedFinalStateUnknown without object.
type refusedObjectError struct{ err error }

func (e *refusedObjectError) Error() string {
	return "object refused by the transform check: " + e.err.Error()
}

func (e *refusedObjectError) Unwrap() error { return e.err }

// isRefusedObject reports whether err is (or wraps) a refusedObjectError.
func isRefusedObject(err error) bool {
	var refused *refusedObjectError
	return errors.As(err, &refused)
}
