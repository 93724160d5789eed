package cache

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// Config configures a low-level Controller (see New). The embedded Queue and
// ListerWatcher and the Process function are required.
type Config struct {
	// Queue receives what the Reflector lists and watches and is drained by
	// the controller. It is usually a RealFIFO or a DeltaFIFO; Process must
	// accept what its Pop hands out (Deltas for both of those).
	Queue

	// ListerWatcher lists and watches the objects.
	ListerWatcher

	// Process handles one popped item. Required.
	Process ProcessFunc

	// ProcessBatch, when set and when Queue implements QueueWithBatch,
	// handles batches of popped deltas (each key at most once per batch);
	// single items still go to Process, so both must do the same thing. It
	// should return a *TransactionError when only part of a batch was
	// applied. Batching is used whenever both conditions hold, whatever
	// the feature gates say. Differs from client-go v0.37.2; see
	// COMPATIBILITY.md.
	ProcessBatch ProcessBatchFunc

	// ObjectType is an example of the objects the controller handles.
	ObjectType runtime.Object

	// ObjectDescription describes the objects in log messages.
	ObjectDescription string

	// FullResyncPeriod is how often ShouldResync is consulted (0: never).
	FullResyncPeriod time.Duration

	// MinWatchTimeout is the minimum timeout of watch requests. Values below
	// the Reflector's floor (5 minutes) are raised to it; 0 uses the floor.
	MinWatchTimeout time.Duration

	// ShouldResync is asked on every resync tick whether the Queue should be
	// resynced; nil means always.
	ShouldResync ShouldResyncFunc

	// WatchErrorHandler is called whenever a list or watch fails. When set it
	// takes precedence over WatchErrorHandlerWithContext.
	WatchErrorHandler WatchErrorHandler

	// WatchErrorHandlerWithContext is called whenever a list or watch fails
	// and WatchErrorHandler is nil. When both are nil the Reflector's default
	// handler logs the error.
	WatchErrorHandlerWithContext WatchErrorHandlerWithContext

	// WatchListPageSize is the page size of the initial list and relists.
	WatchListPageSize int64

	// WatchIdleTimeout is the Reflector's watch liveness deadline, armed on
	// a watch by its first periodic bookmark (see
	// ReflectorOptions.WatchIdleTimeout); zero or negative: none.
	// kinformer extension.
	WatchIdleTimeout time.Duration
}

// controllerInternals is what a shared informer gives the controller it
// builds besides the public Config; New leaves it at its zero value.
type controllerInternals struct {
	// reflector, when not nil, is the configuration of the controller's
	// Reflector, already resolved by the informer (informerConfig.resolve);
	// the Reflector's settings in Config are then not used. nil: the
	// Reflector is configured from Config (Config.reflectorConfig).
	reflector *reflectorConfig
	// pop, when not nil, pops the Queue once into the Process functions,
	// going around the Queue's methods (informerPop); nil: the Queue's
	// PopBatch or Pop is called.
	pop func() error
}

// ShouldResyncFunc reports whether a resync should happen now. A shared
// informer uses it to honour the resync periods of its handlers. It is called
// from the Reflector's goroutine.
type ShouldResyncFunc func() bool

// ProcessFunc handles one item popped from a Queue; isInInitialList tells
// whether the item belongs to the queue's initial list.
type ProcessFunc func(obj interface{}, isInInitialList bool) error

// Controller is the low-level loop under an informer: a Reflector feeds the
// Queue from the ListerWatcher while the controller pops the Queue and hands
// every item to the configured Process function.
type Controller interface {
	// RunWithContext runs the Reflector and the processing loop until ctx is
	// canceled, then returns after both have stopped. It blocks; only the
	// first call runs, later calls log an error and return.
	RunWithContext(ctx context.Context)

	// Run is RunWithContext with a stop channel.
	Run(stopCh <-chan struct{})

	// HasSynced reports whether the Queue has delivered its initial list.
	HasSynced() bool

	// HasSyncedChecker returns the Queue's DoneChecker for the initial list,
	// usable with WaitFor without polling.
	HasSyncedChecker() DoneChecker

	// LastSyncResourceVersion returns the resource version last seen by the
	// Reflector, or "" before the controller runs.
	LastSyncResourceVersion() string
}

// New returns a Controller for the given configuration. The Config is
// copied; later changes to c have no effect. A configuration without Queue,
// ListerWatcher or Process is reported by RunWithContext, which then returns
// at once.
func New(c *Config) Controller {
	var config Config
	if c != nil {
		config = *c
	}
	return newController(config, controllerInternals{})
}

// newController returns a controller for config and what a shared informer
// adds to it; both are fixed from here on.
func newController(config Config, internals controllerInternals) *controller {
	return &controller{config: config, internals: internals}
}

// controller implements Controller.
type controller struct {
	config    Config
	internals controllerInternals

	mu        sync.RWMutex
	reflector *Reflector
	ran       bool
}

// Run implements Controller.
func (c *controller) Run(stopCh <-chan struct{}) {
	c.RunWithContext(wait.ContextForChannel(stopCh))
}

// RunWithContext implements Controller. A panic raised by Process (for
// example in an event handler of NewInformerWithOptions) propagates out of
// RunWithContext once the Reflector goroutine has stopped, so nothing is left
// running. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (c *controller) RunWithContext(ctx context.Context) {
	logger := klog.FromContext(ctx)
	if err := c.configError(); err != nil {
		logger.Error(err, "Controller cannot run")
		return
	}
	c.mu.Lock()
	if c.ran {
		c.mu.Unlock()
		logger.Error(nil, "Controller was already run; RunWithContext may be called only once")
		return
	}
	c.ran = true
	var cfg reflectorConfig
	if c.internals.reflector != nil {
		cfg = *c.internals.reflector
		cfg.logger = &logger
	} else {
		cfg = c.config.reflectorConfig(&logger)
	}
	r := newReflector(c.config.ListerWatcher, c.config.ObjectType, c.config.Queue, cfg)
	c.reflector = r
	c.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// Closing the queue is what wakes a processing loop blocked in Pop.
	closed := make(chan struct{})
	stopClose := context.AfterFunc(ctx, func() {
		defer close(closed)
		c.config.Queue.Close()
	})

	var wg sync.WaitGroup
	wg.Go(func() { r.RunWithContext(ctx) })

	panicked, panicValue := c.processLoop(ctx)

	cancel()
	wg.Wait()
	if !stopClose() {
		<-closed
	}
	if panicked {
		panic(panicValue)
	}
}

func (c *controller) configError() error {
	switch {
	case c.config.Queue == nil:
		return errors.New("controller Config has no Queue")
	case c.config.ListerWatcher == nil:
		return errors.New("controller Config has no ListerWatcher")
	case c.config.Process == nil:
		return errors.New("controller Config has no Process function")
	}
	return nil
}

// processLoop pops the queue until it is closed or ctx is done. A panic in
// the process functions is recovered and reported to the caller, which
// re-raises it after cleaning up.
func (c *controller) processLoop(ctx context.Context) (panicked bool, value any) {
	logger := klog.FromContext(ctx)
	defer func() {
		if r := recover(); r != nil {
			logger.Error(nil, "Process function panicked; stopping the controller", "panic", r, "stack", string(debug.Stack()))
			panicked, value = true, r
		}
	}()
	batchQueue, batching := c.config.Queue.(QueueWithBatch)
	batching = batching && c.config.ProcessBatch != nil
	process := PopProcessFunc(c.config.Process)
	for ctx.Err() == nil {
		var err error
		if c.internals.pop != nil {
			err = c.internals.pop()
		} else if batching {
			err = batchQueue.PopBatch(c.config.ProcessBatch, process)
		} else {
			_, err = c.config.Queue.Pop(process)
		}
		if errors.Is(err, ErrFIFOClosed) {
			return false, nil
		}
		if err != nil {
			logger.Error(err, "Processing popped items failed", "objectType", fmt.Sprintf("%T", c.config.ObjectType))
		}
	}
	return false, nil
}

// HasSynced implements Controller.
func (c *controller) HasSynced() bool {
	if c.config.Queue == nil {
		return false
	}
	return c.config.Queue.HasSynced()
}

// HasSyncedChecker implements Controller.
func (c *controller) HasSyncedChecker() DoneChecker {
	if c.config.Queue == nil {
		return neverDoneChecker{name: "controller without queue"}
	}
	return c.config.Queue.HasSyncedChecker()
}

// LastSyncResourceVersion implements Controller.
func (c *controller) LastSyncResourceVersion() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.reflector == nil {
		return ""
	}
	return c.reflector.LastSyncResourceVersion()
}

// badDataTotal returns the number of objects and events the Reflector could
// not store (see InformerStatus.BadData), 0 before the controller runs.
func (c *controller) badDataTotal() uint64 {
	c.mu.RLock()
	r := c.reflector
	c.mu.RUnlock()
	if r == nil {
		return 0
	}
	return r.badDataTotal()
}

// neverDoneChecker is a DoneChecker that never completes, for controllers
// that cannot sync.
type neverDoneChecker struct{ name string }

func (n neverDoneChecker) Name() string { return n.name }

func (n neverDoneChecker) Done() <-chan struct{} { return nil }

// InformerOptions configures NewInformerWithOptions.
type InformerOptions struct {
	// Logger, if set, is used instead of klog.Background().
	Logger *klog.Logger

	// ListerWatcher lists and watches the objects. Required.
	ListerWatcher ListerWatcher

	// ObjectType is an example of the objects, e.g. &v1.Pod{}.
	ObjectType runtime.Object

	// Handler receives the notifications. It is called synchronously from
	// the processing loop; a nil Handler only keeps the store up to date.
	Handler ResourceEventHandler

	// ResyncPeriod, if non-zero, makes the handler receive an update for
	// every cached object this often, even when nothing changed.
	ResyncPeriod time.Duration

	// MinWatchTimeout is the minimum timeout of watch requests (at least 5
	// minutes are used).
	MinWatchTimeout time.Duration

	// Indexers, if set, make the returned store an Indexer with these
	// indices.
	Indexers Indexers

	// Transform, if set, is applied once to every object before it is
	// stored and before the handler sees it.
	Transform TransformFunc

	// Identifier names the informer for metrics and logs; metrics are only
	// published when it is set.
	Identifier InformerNameAndResource

	// InformerMetricsProvider provides the metrics; nil means the global
	// provider (see SetInformerMetricsProvider).
	InformerMetricsProvider InformerMetricsProvider

	// UseDeltaFIFO selects the DeltaFIFO (changes coalesced per key) instead
	// of the default RealFIFO (every change in watch order, relists applied
	// atomically). kinformer extension, not in client-go, whose informers
	// always use a RealFIFO (its InOrderInformers gate is locked on).
	UseDeltaFIFO bool
}

// NewInformerWithOptions returns a store and a Controller that keeps it in
// step with options.ListerWatcher and notifies options.Handler of every
// change. Use the store only for reading: writing to it corrupts the
// notifications. The Controller must be run for anything to happen.
func NewInformerWithOptions(options InformerOptions) (Store, Controller) {
	var store Store
	metrics := WithStoreMetrics(options.Identifier, options.InformerMetricsProvider)
	if options.Indexers == nil {
		store = NewStore(DeletionHandlingMetaNamespaceKeyFunc, metrics, withResourceVersionWatermark(nil))
	} else {
		store = NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, options.Indexers, metrics, withResourceVersionWatermark(nil))
	}
	return store, newInformer(store, options)
}

// NewInformer returns a store and a Controller that keeps it in step with lw
// and notifies h; resyncPeriod, if non-zero, makes h receive updates for all
// cached objects that often.
//
// Deprecated: Use NewInformerWithOptions instead.
func NewInformer(lw ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h ResourceEventHandler) (Store, Controller) {
	store := NewStore(DeletionHandlingMetaNamespaceKeyFunc, withResourceVersionWatermark(nil))
	return store, newInformer(store, InformerOptions{ListerWatcher: lw, ObjectType: objType, Handler: h, ResyncPeriod: resyncPeriod})
}

// NewIndexerInformer is NewInformer with an Indexer maintaining indexers.
//
// Deprecated: Use NewInformerWithOptions instead.
func NewIndexerInformer(lw ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h ResourceEventHandler, indexers Indexers) (Indexer, Controller) {
	store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, indexers, withResourceVersionWatermark(nil))
	return store, newInformer(store, InformerOptions{ListerWatcher: lw, ObjectType: objType, Handler: h, ResyncPeriod: resyncPeriod, Indexers: indexers})
}

// NewTransformingInformer is NewInformer with a transform applied once to
// every object before it is stored and before h sees it.
//
// Deprecated: Use NewInformerWithOptions instead.
func NewTransformingInformer(lw ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h ResourceEventHandler, transformer TransformFunc) (Store, Controller) {
	store := NewStore(DeletionHandlingMetaNamespaceKeyFunc, withResourceVersionWatermark(nil))
	return store, newInformer(store, InformerOptions{ListerWatcher: lw, ObjectType: objType, Handler: h, ResyncPeriod: resyncPeriod, Transform: transformer})
}

// NewTransformingIndexerInformer is NewIndexerInformer with a transform
// applied once to every object before it is stored and before h sees it.
//
// Deprecated: Use NewInformerWithOptions instead.
func NewTransformingIndexerInformer(lw ListerWatcher, objType runtime.Object, resyncPeriod time.Duration, h ResourceEventHandler, indexers Indexers, transformer TransformFunc) (Indexer, Controller) {
	store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, indexers, withResourceVersionWatermark(nil))
	return store, newInformer(store, InformerOptions{ListerWatcher: lw, ObjectType: objType, Handler: h, ResyncPeriod: resyncPeriod, Indexers: indexers, Transform: transformer})
}

// newInformer wires a queue, a delta applier for store and handler, and a
// controller.
func newInformer(store Store, options InformerOptions) Controller {
	logger := klog.Background()
	if options.Logger != nil {
		logger = *options.Logger
	}
	handler := options.Handler
	if handler == nil {
		handler = ResourceEventHandlerFuncs{}
	}
	queue := newInformerQueue(logger, informerQueueConfig{
		objectType:      options.ObjectType,
		store:           store,
		transform:       options.Transform,
		identifier:      options.Identifier,
		metricsProvider: options.InformerMetricsProvider,
		useDeltaFIFO:    options.UseDeltaFIFO,
	})
	applier := newInformerApplier(logger, queue, store, handler, options.Transform)
	return New(&Config{
		Queue:            queue,
		ListerWatcher:    options.ListerWatcher,
		ObjectType:       options.ObjectType,
		FullResyncPeriod: options.ResyncPeriod,
		MinWatchTimeout:  options.MinWatchTimeout,
		Process:          applier.Process,
		ProcessBatch:     applier.ProcessBatch,
	})
}

// informerQueueConfig is what newInformerQueue needs to build a queue.
type informerQueueConfig struct {
	objectType      runtime.Object
	store           Store
	transform       TransformFunc
	identifier      InformerNameAndResource
	metricsProvider InformerMetricsProvider
	useDeltaFIFO    bool
	// pageByPage: relists are applied page by page (see
	// SharedIndexInformerOptions.RelistPageByPage).
	pageByPage bool
}

// newInformerQueue builds the queue between Reflector and processing loop:
// by default a RealFIFO with atomic replace/resync events (as client-go with
// its default feature gates), or a DeltaFIFO that reconciles against the
// store. Either takes relists page by page when cfg.pageByPage is set.
func newInformerQueue(logger klog.Logger, cfg informerQueueConfig) Queue {
	lists := informerLists{cached: cfg.store, pageByPage: cfg.pageByPage}
	if cfg.useDeltaFIFO {
		return newInformerDeltaFIFO(DeltaFIFOOptions{
			Logger:                &logger,
			Name:                  fmt.Sprintf("DeltaFIFO %T", cfg.objectType),
			KnownObjects:          cfg.store,
			EmitDeltaTypeReplaced: true,
			Transformer:           cfg.transform,
		}, lists)
	}
	return newInformerRealFIFO(RealFIFOOptions{
		Logger:                &logger,
		Name:                  fmt.Sprintf("RealFIFO %T", cfg.objectType),
		KeyFunction:           MetaNamespaceKeyFunc,
		Transformer:           cfg.transform,
		Identifier:            cfg.identifier,
		MetricsProvider:       cfg.metricsProvider,
		AtomicEvents:          true,
		UnlockWhileProcessing: true,
		EmitDeltaTypeBookmark: true,
		reusePopBuffers:       true,
	}, lists)
}
