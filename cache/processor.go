package cache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache/synctrack"
)

// notificationKind tells which handler method a notification is for.
type notificationKind uint8

const (
	notifyAdd notificationKind = iota + 1
	notifyUpdate
	notifyDelete
)

// notification is one event for a handler. It is stored by value in the
// buffers, so queuing it allocates nothing beyond amortised slice growth.
type notification struct {
	kind notificationKind
	// initial marks an add that belongs to the initial list.
	initial bool
	// resync marks an update whose old and new resource versions are equal
	// (a resync or an unchanged object in a relist); it only goes to
	// listeners that are due for a resync.
	resync bool
	oldObj interface{}
	newObj interface{}
}

// notificationBatch collects the notifications of one popped batch. It is
// the ResourceEventHandler the shared informer's deltaApplier reports to;
// the collected batch is then handed to every listener at once.
type notificationBatch struct {
	notes []notification
	// hasResync is true if any note is a resync note.
	hasResync bool
	// detector, when not nil, is given every added or updated object, as
	// the objects the handlers will see (see NewCacheMutationDetector).
	detector MutationDetector
}

func (b *notificationBatch) OnAdd(obj interface{}, isInInitialList bool) {
	if b.detector != nil {
		b.detector.AddObject(obj)
	}
	b.notes = append(b.notes, notification{kind: notifyAdd, initial: isInInitialList, newObj: obj})
}

func (b *notificationBatch) OnUpdate(oldObj, newObj interface{}) {
	// Equal resource versions mean nothing changed (a resync, or an
	// unchanged object seen again by a relist).
	resync := false
	if n, err := meta.Accessor(newObj); err == nil {
		if o, err := meta.Accessor(oldObj); err == nil {
			resync = n.GetResourceVersion() == o.GetResourceVersion()
		}
	}
	b.hasResync = b.hasResync || resync
	if b.detector != nil {
		b.detector.AddObject(newObj)
	}
	b.notes = append(b.notes, notification{kind: notifyUpdate, resync: resync, oldObj: oldObj, newObj: newObj})
}

func (b *notificationBatch) OnDelete(obj interface{}) {
	b.notes = append(b.notes, notification{kind: notifyDelete, oldObj: obj})
}

// reset empties the batch for reuse, dropping object references and, after
// an unusually large batch, the backing array.
func (b *notificationBatch) reset() {
	if cap(b.notes) > 4096 {
		b.notes = nil
	} else {
		clear(b.notes)
		b.notes = b.notes[:0]
	}
	b.hasResync = false
}

// sharedProcessor fans notifications out to the listeners of one informer.
// Distribution never blocks: every listener has an unbounded buffer and its
// own goroutine.
type sharedProcessor struct {
	clock clock.Clock

	// mu guards everything below. distribute holds it for reading; adding,
	// removing, resync bookkeeping and stopping hold it for writing.
	mu        sync.RWMutex
	listeners []*processorListener
	running   bool
	stopped   bool
	// synced is set once the informer has synced; every listener's sync
	// tracker has been told so (see upstreamHasSynced).
	synced bool

	// wg counts running listener goroutines.
	wg sync.WaitGroup

	// panics counts recovered handler panics of all listeners.
	panics atomic.Int64

	// handlerMetrics, guarded by mu, times the handlers when not nil (see
	// SetHandlerMetricsProvider).
	handlerMetrics HandlerMetricsProvider
}

// addListener registers l and starts it if the processor runs. A listener
// added to a stopped processor is stopped at once.
func (p *sharedProcessor) addListener(l *processorListener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		l.stop()
		l.markFinished()
		return
	}
	p.listeners = append(p.listeners, l)
	if p.handlerMetrics != nil {
		l.setLatencyMetric(p.handlerMetrics)
	}
	if p.synced {
		// The caller has announced (Start) every initial notification.
		l.syncTracker.UpstreamHasSynced()
	}
	if p.running {
		p.startLocked(l)
	}
}

// upstreamHasSynced tells every listener's sync tracker, now and at
// registration for later listeners, that the informer has synced. It must be
// called only after every notification of the initial list has been
// distributed (and so announced to the trackers).
//
// This is done here rather than by the listeners' goroutines, so that a
// listener that never goes idle (a busy or blocked handler) still syncs as
// soon as it has processed its initial list, as in client-go.
func (p *sharedProcessor) upstreamHasSynced() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.synced = true
	for _, l := range p.listeners {
		l.syncTracker.UpstreamHasSynced()
	}
}

func (p *sharedProcessor) startLocked(l *processorListener) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		l.run()
	}()
}

// removeListener unregisters the listener behind handle and stops it. It
// returns an error for a handle that is not a listener at all; unknown or
// already removed listeners are ignored.
func (p *sharedProcessor) removeListener(handle ResourceEventHandlerRegistration) error {
	l, ok := handle.(*processorListener)
	if !ok {
		return fmt.Errorf("invalid event handler registration of type %T", handle)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, cur := range p.listeners {
		if cur != l {
			continue
		}
		last := len(p.listeners) - 1
		p.listeners[i] = p.listeners[last]
		p.listeners[last] = nil
		p.listeners = p.listeners[:last]
		l.stop()
		if !p.running {
			// Its goroutine never started, so nothing else will finish it.
			l.markFinished()
		}
		return nil
	}
	return nil
}

// isRegistered reports whether handle is a currently registered listener.
func (p *sharedProcessor) isRegistered(handle ResourceEventHandlerRegistration) bool {
	l, ok := handle.(*processorListener)
	if !ok {
		return false
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, cur := range p.listeners {
		if cur == l {
			return true
		}
	}
	return false
}

func (p *sharedProcessor) listenerCount() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.listeners)
}

// distribute hands a batch to every listener: resync notes only to the
// listeners due for a resync, all other notes to all listeners.
func (p *sharedProcessor) distribute(b *notificationBatch) {
	if len(b.notes) == 0 {
		return
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, l := range p.listeners {
		l.enqueue(b.notes, !b.hasResync || l.resyncDue)
	}
}

// run starts the registered listeners, waits for ctx, then stops all
// listeners and waits for their goroutines.
func (p *sharedProcessor) run(ctx context.Context) {
	p.mu.Lock()
	if !p.stopped {
		p.running = true
		for _, l := range p.listeners {
			p.startLocked(l)
		}
	}
	p.mu.Unlock()

	<-ctx.Done()

	p.mu.Lock()
	p.stopped = true
	p.running = false
	for _, l := range p.listeners {
		l.stop()
	}
	p.listeners = nil
	p.mu.Unlock()
	p.wg.Wait()
}

// shouldResync decides for every listener whether it is due for a resync
// now, remembers the answer for the following distributions and schedules
// the next resync of the due ones. It reports whether any listener is due.
func (p *sharedProcessor) shouldResync() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	any := false
	for _, l := range p.listeners {
		l.resyncDue = l.resyncPeriod != 0 && !now.Before(l.nextResync)
		if l.resyncDue {
			any = true
			l.nextResync = now.Add(l.resyncPeriod)
		}
	}
	return any
}

// resyncCheckPeriodChanged recomputes the effective resync period of every
// listener for a new informer resync check period.
func (p *sharedProcessor) resyncCheckPeriodChanged(logger klog.Logger, checkPeriod time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.listeners {
		l.resyncPeriod = determineResyncPeriod(logger, l.requestedResyncPeriod, checkPeriod)
	}
}

// processorListener delivers notifications to one handler. Producers append
// to a mutex-protected slice and wake the listener's single goroutine with a
// non-blocking send on a one-slot channel, only when it is idle; the
// goroutine swaps the whole slice out and delivers it without holding the
// lock. So a slow handler never blocks the informer or other handlers, and
// its notifications arrive in order.
//
// processorListener is the ResourceEventHandlerRegistration returned by
// AddEventHandler.
type processorListener struct {
	logger      klog.Logger
	handler     ResourceEventHandler
	handlerName string
	// panics is the processor's panic counter; ownPanics counts this
	// listener's.
	panics    *atomic.Int64
	ownPanics atomic.Int64
	// inFlight is the number of notifications of the batch being delivered
	// that are not handled yet (see pendingCount).
	inFlight atomic.Int64
	// latency, when set, times every notification (SetHandlerMetricsProvider).
	latency atomic.Pointer[handlerLatency]

	// syncTracker counts the initial-list notifications not yet processed;
	// the processor tells it when the informer has synced.
	syncTracker *synctrack.SingleFileTracker

	// Resync bookkeeping, guarded by the processor's mu.
	requestedResyncPeriod time.Duration
	resyncPeriod          time.Duration
	nextResync            time.Time
	resyncDue             bool

	mu      sync.Mutex
	pending []notification
	spare   []notification
	// coalesce, when set (HandlerBufferCoalesceByKey), replaces pending
	// and spare; see handler_buffer.go.
	coalesce *coalescingBuffer
	idle     bool
	stopped  bool
	wake     chan struct{}
	// halted mirrors stopped for the delivery loop, which checks it between
	// notifications without taking mu.
	halted atomic.Bool

	finishOnce sync.Once
	finished   chan struct{}
}

// listenerConfig is everything a processorListener is built from.
type listenerConfig struct {
	logger  klog.Logger
	handler ResourceEventHandler
	// requestedResyncPeriod is the period the handler asked for,
	// resyncPeriod the effective one (see determineResyncPeriod); the
	// first resync is due resyncPeriod after now.
	requestedResyncPeriod time.Duration
	resyncPeriod          time.Duration
	now                   time.Time
	// upstreamName names what the listener syncs with (the informer) in
	// its DoneChecker's name.
	upstreamName string
	// panics is the processor's panic counter.
	panics *atomic.Int64
	// bufferPolicy is HandlerOptions.BufferPolicy.
	bufferPolicy HandlerBufferPolicy
}

// newProcessorListener returns a listener built from cfg, or an error for a
// buffer policy it does not know.
func newProcessorListener(cfg listenerConfig) (*processorListener, error) {
	name := nameForHandler(cfg.handler)
	coalesce, err := newHandlerBuffer(cfg.bufferPolicy)
	if err != nil {
		return nil, fmt.Errorf("handler %s: %w", name, err)
	}
	return &processorListener{
		logger:                cfg.logger,
		handler:               cfg.handler,
		handlerName:           name,
		panics:                cfg.panics,
		syncTracker:           synctrack.NewSingleFileTracker(fmt.Sprintf("%s + event handler %s", cfg.upstreamName, name)),
		requestedResyncPeriod: cfg.requestedResyncPeriod,
		resyncPeriod:          cfg.resyncPeriod,
		nextResync:            cfg.now.Add(cfg.resyncPeriod),
		resyncDue:             true,
		coalesce:              coalesce,
		wake:                  make(chan struct{}, 1),
		finished:              make(chan struct{}),
	}, nil
}

// HasSynced reports whether the informer has synced and this handler has
// processed every notification of its initial list.
func (l *processorListener) HasSynced() bool {
	return l.syncTracker.HasSynced()
}

// HasSyncedChecker returns a DoneChecker that completes when HasSynced
// becomes true.
func (l *processorListener) HasSyncedChecker() DoneChecker {
	return l.syncTracker
}

// ShutdownChan returns a channel that is closed once the listener has been
// removed or its informer stopped, and its handler is no longer running.
func (l *processorListener) ShutdownChan() <-chan struct{} {
	return l.finished
}

func (l *processorListener) markFinished() {
	l.finishOnce.Do(func() { close(l.finished) })
}

// enqueue appends notes (skipping resync notes unless withResync) and wakes
// the goroutine if it is idle.
func (l *processorListener) enqueue(notes []notification, withResync bool) {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return
	}
	var wake bool
	if l.coalesce != nil {
		wake = l.enqueueCoalescingLocked(notes, withResync) && l.idle
	} else {
		for i := range notes {
			n := &notes[i]
			if n.resync && !withResync {
				continue
			}
			if n.initial {
				l.syncTracker.Start()
			}
			l.pending = append(l.pending, *n)
		}
		wake = l.idle && len(l.pending) > 0
	}
	if wake {
		l.idle = false
	}
	l.mu.Unlock()
	if wake {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// enqueueOne is enqueue for a single notification.
func (l *processorListener) enqueueOne(n notification) {
	l.enqueue([]notification{n}, true)
}

// stop makes the listener drop pending notifications and deliver no more.
// The handler call in progress, if any, completes.
func (l *processorListener) stop() {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return
	}
	l.stopped = true
	l.halted.Store(true)
	clear(l.pending)
	l.pending, l.spare = nil, nil
	if l.coalesce != nil {
		l.coalesce.clear()
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// run is the listener's goroutine: wait for notifications, deliver them,
// until stopped.
func (l *processorListener) run() {
	defer l.markFinished()
	if l.coalesce != nil {
		l.runCoalescing()
		return
	}
	for {
		l.mu.Lock()
		for len(l.pending) == 0 && !l.stopped {
			l.idle = true
			l.mu.Unlock()
			<-l.wake
			l.mu.Lock()
		}
		if l.stopped {
			l.mu.Unlock()
			return
		}
		batch := l.pending
		l.pending = l.spare[:0]
		l.spare = nil
		l.idle = false
		l.inFlight.Store(int64(len(batch)))
		l.mu.Unlock()

		for i := 0; i < len(batch); {
			i = l.deliver(batch, i)
		}

		clear(batch)
		l.mu.Lock()
		if !l.stopped && l.spare == nil && cap(batch) <= 8192 {
			l.spare = batch[:0]
		}
		l.mu.Unlock()
	}
}

// deliver calls the handler for batch[from:] and returns the index to go on
// from: len(batch) when done or stopped, or the index after a notification
// whose handler panicked. The panic is reported as client-go reports it,
// then logged with the handler's name, and counted; an initial-list add
// counts as processed even if it panicked, so the registration can still
// sync.
func (l *processorListener) deliver(batch []notification, from int) (next int) {
	next = from
	defer func() {
		if r := recover(); r != nil {
			l.panics.Add(1)
			l.ownPanics.Add(1)
			l.inFlight.Store(int64(len(batch) - next - 1))
			// Report it as client-go's utilruntime.HandleCrash does (the
			// process-wide PanicHandlers, whose default logs "Observed a
			// panic" with the panic value and the stack), naming the line
			// that panicked: from a PanicHandler's log call, one frame up
			// is this function, two is the runtime's panic, three is the
			// function that panicked. Unlike client-go, never re-raise.
			ctx := klog.NewContext(context.Background(), l.logger.WithCallDepth(3))
			for _, handle := range utilruntime.PanicHandlers {
				handle(ctx, r)
			}
			l.logger.Info("Skipped the notification whose event handler panicked; delivery goes on", "handler", l.handlerName)
			if batch[next].initial {
				l.syncTracker.Finished()
			}
			next++
		}
	}()
	latency := l.latency.Load()
	for ; next < len(batch); next++ {
		if l.halted.Load() {
			l.inFlight.Store(0)
			return len(batch)
		}
		if latency != nil {
			start := time.Now()
			l.handle(&batch[next])
			latency.h.Observe(time.Since(start).Seconds())
		} else {
			l.handle(&batch[next])
		}
		l.inFlight.Store(int64(len(batch) - next - 1))
	}
	return next
}

// handle calls the handler method for n.
func (l *processorListener) handle(n *notification) {
	switch n.kind {
	case notifyAdd:
		l.handler.OnAdd(n.newObj, n.initial)
		if n.initial {
			l.syncTracker.Finished()
		}
	case notifyUpdate:
		l.handler.OnUpdate(n.oldObj, n.newObj)
	case notifyDelete:
		l.handler.OnDelete(n.oldObj)
	}
}
