package cache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache/synctrack"
)

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

// PendingNotifications implements HandlerBufferReporter.
func (l *processorListener) PendingNotifications() int {
	return l.pendingCount()
}

// enqueueCoalescing is enqueue for a HandlerBufferCoalesceByKey listener.
// Called with l.mu held; it reports whether notes were added.
func (l *processorListener) enqueueCoalescingLocked(notes []notification, withResync bool) bool {
	added := false
	for i := range notes {
		n := &notes[i]
		if n.resync && !withResync {
			continue
		}
		if n.initial {
			l.syncTracker.Start()
		}
		l.coalesce.add(*n, l.droppedInitial)
		added = true
	}
	return added && l.coalesce.head != nil
}

// droppedInitial accounts for an initial-list add merged away.
func (l *processorListener) droppedInitial(notification) {
	l.syncTracker.Finished()
}

// runCoalescing is run for a HandlerBufferCoalesceByKey listener: it
// delivers the oldest pending key's notifications one key at a time, so
// that every delivery carries the newest state.
func (l *processorListener) runCoalescing() {
	defer l.markFinished()
	var batch []notification
	for {
		l.mu.Lock()
		for l.coalesce.head == nil && !l.stopped {
			l.idle = true
			l.mu.Unlock()
			<-l.wake
			l.mu.Lock()
		}
		if l.stopped {
			l.mu.Unlock()
			return
		}
		batch = l.coalesce.popFront(batch[:0])
		l.idle = false
		l.inFlight.Store(int64(len(batch)))
		l.mu.Unlock()

		for i := 0; i < len(batch); {
			i = l.deliver(batch, i)
		}
		clear(batch)
	}
}

// pendingCount is the number of notifications not yet handled.
func (l *processorListener) pendingCount() int {
	l.mu.Lock()
	n := len(l.pending)
	if l.coalesce != nil {
		n += l.coalesce.notes
	}
	l.mu.Unlock()
	return n + int(l.inFlight.Load())
}

// handlerLatency holds a listener's latency histogram.
type handlerLatency struct {
	h HistogramMetric
}

// setLatencyMetric asks provider (may be nil) for the listener's histogram.
func (l *processorListener) setLatencyMetric(provider HandlerMetricsProvider) {
	if provider == nil {
		l.latency.Store(nil)
		return
	}
	if h := provider.NewHandlerLatencyMetric(l.handlerName); h != nil {
		l.latency.Store(&handlerLatency{h: h})
		return
	}
	l.latency.Store(nil)
}
