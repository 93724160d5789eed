package fanout

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

// Listener delivers notifications to one handler. Producers append to a
// mutex-protected slice and wake the listener's single goroutine with a
// non-blocking send on a one-slot channel, only when it is idle; the
// goroutine swaps the whole slice out and delivers it without holding the
// lock. So a slow handler never blocks the informer or other handlers, and
// its notifications arrive in order.
//
// A Listener is built by Processor.NewListener and registered with
// Processor.Add; its methods are safe for concurrent use.
type Listener struct {
	logger  klog.Logger
	handler Handler
	name    string
	// panics is the processor's panic counter; ownPanics counts this
	// listener's.
	panics    *atomic.Int64
	ownPanics atomic.Int64
	// inFlight is the number of notifications of the batch being delivered
	// that are not handled yet (see Pending).
	inFlight atomic.Int64
	// latency, when set, times every notification (SetHandlerLatency).
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
	pending []Notification
	spare   []Notification
	// coalesce, when set (BufferCoalesceByKey), replaces pending and
	// spare; see coalesce.go.
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

// ListenerConfig is everything a Listener is built from.
type ListenerConfig struct {
	// Logger logs the handler's panics.
	Logger klog.Logger
	// Handler receives the notifications.
	Handler Handler
	// Name names the handler in logs, statuses and its latency histogram.
	Name string
	// SyncName is the name of the listener's sync tracker (see
	// SyncTracker).
	SyncName string
	// RequestedResyncPeriod is the period the handler asked for,
	// ResyncPeriod the effective one; the first resync is due ResyncPeriod
	// after Now. Zero: never.
	RequestedResyncPeriod time.Duration
	ResyncPeriod          time.Duration
	Now                   time.Time
	// Buffer is how the listener buffers notifications.
	Buffer Buffer
}

// NewListener returns a listener of p built from cfg (not registered yet:
// see Add), or an error for a Buffer it does not know.
func (p *Processor) NewListener(cfg ListenerConfig) (*Listener, error) {
	coalesce, err := p.newBuffer(cfg.Buffer)
	if err != nil {
		return nil, fmt.Errorf("handler %s: %w", cfg.Name, err)
	}
	return &Listener{
		logger:                cfg.Logger,
		handler:               cfg.Handler,
		name:                  cfg.Name,
		panics:                &p.panics,
		syncTracker:           synctrack.NewSingleFileTracker(cfg.SyncName),
		requestedResyncPeriod: cfg.RequestedResyncPeriod,
		resyncPeriod:          cfg.ResyncPeriod,
		nextResync:            cfg.Now.Add(cfg.ResyncPeriod),
		resyncDue:             true,
		coalesce:              coalesce,
		wake:                  make(chan struct{}, 1),
		finished:              make(chan struct{}),
	}, nil
}

// HasSynced reports whether the informer has synced and this handler has
// processed every notification of its initial list.
func (l *Listener) HasSynced() bool {
	return l.syncTracker.HasSynced()
}

// SyncTracker returns the tracker behind HasSynced: its Done channel is
// closed when HasSynced becomes true, and its Name is
// ListenerConfig.SyncName.
func (l *Listener) SyncTracker() *synctrack.SingleFileTracker {
	return l.syncTracker
}

// Finished returns a channel that is closed once the listener has been
// removed or its processor stopped, and its handler is no longer running.
func (l *Listener) Finished() <-chan struct{} {
	return l.finished
}

// ResyncPeriod returns the listener's effective resync period (zero:
// never). It is not synchronised with Processor.ResyncCheckPeriodChanged,
// which may change the period: callers serialise the two (an informer
// changes periods under its own lock).
func (l *Listener) ResyncPeriod() time.Duration {
	return l.resyncPeriod
}

func (l *Listener) markFinished() {
	l.finishOnce.Do(func() { close(l.finished) })
}

// Enqueue appends notes to the listener's buffer (skipping Resync notes
// unless withResync) and wakes its goroutine if it is idle. It keeps no
// reference to notes. A stopped listener drops them.
func (l *Listener) Enqueue(notes []Notification, withResync bool) {
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
			if n.Resync && !withResync {
				continue
			}
			if n.Initial {
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

// stop makes the listener drop pending notifications and deliver no more.
// The handler call in progress, if any, completes.
func (l *Listener) stop() {
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
func (l *Listener) run() {
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
func (l *Listener) deliver(batch []Notification, from int) (next int) {
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
			// function that panicked. Never re-raise (see COMPATIBILITY.md).
			ctx := klog.NewContext(context.Background(), l.logger.WithCallDepth(3))
			for _, handle := range utilruntime.PanicHandlers {
				handle(ctx, r)
			}
			l.logger.Info("Skipped the notification whose event handler panicked; delivery goes on", "handler", l.name)
			if batch[next].Initial {
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
func (l *Listener) handle(n *Notification) {
	switch n.Kind {
	case Add:
		l.handler.OnAdd(n.NewObj, n.Initial)
		if n.Initial {
			l.syncTracker.Finished()
		}
	case Update:
		l.handler.OnUpdate(n.OldObj, n.NewObj)
	case Delete:
		l.handler.OnDelete(n.OldObj)
	}
}

// enqueueCoalescingLocked is Enqueue for a BufferCoalesceByKey listener.
// Called with l.mu held; it reports whether notes were added.
func (l *Listener) enqueueCoalescingLocked(notes []Notification, withResync bool) bool {
	added := false
	for i := range notes {
		n := &notes[i]
		if n.Resync && !withResync {
			continue
		}
		if n.Initial {
			l.syncTracker.Start()
		}
		l.coalesce.add(*n, l.droppedInitial)
		added = true
	}
	return added && l.coalesce.head != nil
}

// droppedInitial accounts for an initial-list add merged away.
func (l *Listener) droppedInitial(Notification) {
	l.syncTracker.Finished()
}

// runCoalescing is run for a BufferCoalesceByKey listener: it delivers the
// oldest pending key's notifications one key at a time, so that every
// delivery carries the newest state.
func (l *Listener) runCoalescing() {
	defer l.markFinished()
	var batch []Notification
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

// Pending returns the number of notifications not yet handled: those
// waiting in the buffer (for BufferCoalesceByKey, one per object with
// changes waiting; an object deleted and re-created while waiting counts
// twice) and those taken out for delivery and not yet handled.
func (l *Listener) Pending() int {
	l.mu.Lock()
	n := len(l.pending)
	if l.coalesce != nil {
		n += l.coalesce.notes
	}
	l.mu.Unlock()
	return n + int(l.inFlight.Load())
}

// Buffered returns the number of notifications waiting in the buffer, not
// counting those taken out for delivery (see Pending).
func (l *Listener) Buffered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.pending)
	if l.coalesce != nil {
		n += l.coalesce.notes
	}
	return n
}

// handlerLatency holds a listener's latency histogram.
type handlerLatency struct {
	h Histogram
}

// setLatency asks newHistogram (may be nil) for the listener's histogram.
func (l *Listener) setLatency(newHistogram func(handlerName string) Histogram) {
	if newHistogram == nil {
		l.latency.Store(nil)
		return
	}
	if h := newHistogram(l.name); h != nil {
		l.latency.Store(&handlerLatency{h: h})
		return
	}
	l.latency.Store(nil)
}
