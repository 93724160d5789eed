package fanout

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// Config configures a Processor.
type Config struct {
	// Clock decides when listeners are due for a resync; nil means the
	// real clock.
	Clock clock.Clock
	// KeyOf returns the key a BufferCoalesceByKey listener merges an
	// object's notifications under (for a Delete, of its OldObj, which may
	// be a placeholder of an unknown final state); an error means the
	// notification has no key and is queued on its own. nil: no
	// notification has a key.
	KeyOf func(obj any) (string, error)
	// IsFinalStateUnknown reports whether the object of a Delete is a
	// placeholder for a final state the informer did not see; a
	// BufferCoalesceByKey listener prefers a real final state over it. nil:
	// no object is.
	IsFinalStateUnknown func(obj any) bool
	// HandlerLatency, when not nil, returns the histogram that times the
	// handler of the given name (nil: time nothing); see SetHandlerLatency.
	HandlerLatency func(handlerName string) Histogram
}

// Processor fans notifications out to the listeners of one informer.
// Distribution never blocks: every listener has its own buffer and its own
// goroutine. All methods are safe for concurrent use.
type Processor struct {
	clock               clock.Clock
	keyOf               func(obj any) (string, error)
	isFinalStateUnknown func(obj any) bool

	// mu guards everything below. Distribute holds it for reading; adding,
	// removing, resync bookkeeping and stopping hold it for writing.
	mu        sync.RWMutex
	listeners []*Listener
	running   bool
	stopped   bool
	// synced is set once the informer has synced; every listener's sync
	// tracker has been told so (see UpstreamHasSynced).
	synced bool

	// wg counts running listener goroutines.
	wg sync.WaitGroup

	// panics counts recovered handler panics of all listeners.
	panics atomic.Int64

	// handlerLatency, guarded by mu, times the handlers when not nil (see
	// SetHandlerLatency).
	handlerLatency func(handlerName string) Histogram
}

// NewProcessor returns a Processor configured by cfg, with no listener,
// not running.
func NewProcessor(cfg Config) *Processor {
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Processor{
		clock:               clk,
		keyOf:               cfg.KeyOf,
		isFinalStateUnknown: cfg.IsFinalStateUnknown,
		handlerLatency:      cfg.HandlerLatency,
	}
}

// Add registers l and starts it if the processor runs. A listener added
// to a stopped processor is stopped at once (its Finished channel is
// closed). l must have been built by this processor's NewListener, and be
// added once.
func (p *Processor) Add(l *Listener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		l.stop()
		l.markFinished()
		return
	}
	p.listeners = append(p.listeners, l)
	if p.handlerLatency != nil {
		l.setLatency(p.handlerLatency)
	}
	if p.synced {
		// The caller has announced (Start) every initial notification.
		l.syncTracker.UpstreamHasSynced()
	}
	if p.running {
		p.startLocked(l)
	}
}

// UpstreamHasSynced tells every listener's sync tracker, now and at
// registration for later listeners, that the informer has synced. It must
// be called only after every notification of the initial list has been
// distributed (and so announced to the trackers).
//
// This is done here rather than by the listeners' goroutines, so that a
// listener that never goes idle (a busy or blocked handler) still syncs as
// soon as it has processed its initial list, as in client-go.
func (p *Processor) UpstreamHasSynced() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.synced = true
	for _, l := range p.listeners {
		l.syncTracker.UpstreamHasSynced()
	}
}

func (p *Processor) startLocked(l *Listener) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		l.run()
	}()
}

// Remove unregisters l and stops it: its pending notifications are
// dropped, and once the handler call in progress (if any) returns, its
// Finished channel is closed. A listener that is not registered (removed
// already, or another processor's) is ignored.
func (p *Processor) Remove(l *Listener) {
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
		return
	}
}

// IsRegistered reports whether l is currently registered.
func (p *Processor) IsRegistered(l *Listener) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, cur := range p.listeners {
		if cur == l {
			return true
		}
	}
	return false
}

// ListenerCount returns the number of registered listeners.
func (p *Processor) ListenerCount() int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return len(p.listeners)
}

// Distribute hands notes to every listener, in order: Resync notes only to
// the listeners due for a resync (see ShouldResync), all other notes to
// all listeners. hasResync says whether any note is a Resync one. It never
// blocks on a handler, and keeps no reference to notes once it returns.
func (p *Processor) Distribute(notes []Notification, hasResync bool) {
	if len(notes) == 0 {
		return
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, l := range p.listeners {
		l.Enqueue(notes, !hasResync || l.resyncDue)
	}
}

// Run starts the registered listeners (and those added later), waits for
// ctx, then stops all listeners and waits for their goroutines: when it
// returns, no handler runs and none will. A stopped processor stays
// stopped.
func (p *Processor) Run(ctx context.Context) {
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

// ShouldResync decides for every listener whether it is due for a resync
// now, remembers the answer for the following distributions and schedules
// the next resync of the due ones. It reports whether any listener is due.
func (p *Processor) ShouldResync() bool {
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

// ResyncCheckPeriodChanged sets the effective resync period of every
// listener to effective of the period its handler asked for
// (ListenerConfig.RequestedResyncPeriod), after the informer's resync
// check period changed.
func (p *Processor) ResyncCheckPeriodChanged(effective func(requested time.Duration) time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.listeners {
		l.resyncPeriod = effective(l.requestedResyncPeriod)
	}
}

// ListenerStatus describes one registered listener.
type ListenerStatus struct {
	// Name is the listener's ListenerConfig.Name.
	Name string
	// Pending is what Listener.Pending returns.
	Pending int
	// Panics counts the listener's handler panics.
	Panics int64
	// Synced is what Listener.HasSynced returns.
	Synced bool
}

// Statuses describes the registered listeners, in registration order
// (except after a removal, which moves the last listener into the removed
// one's place).
func (p *Processor) Statuses() []ListenerStatus {
	p.mu.RLock()
	listeners := append([]*Listener(nil), p.listeners...)
	p.mu.RUnlock()
	out := make([]ListenerStatus, len(listeners))
	for i, l := range listeners {
		out[i] = ListenerStatus{
			Name:    l.name,
			Pending: l.Pending(),
			Panics:  l.ownPanics.Load(),
			Synced:  l.HasSynced(),
		}
	}
	return out
}

// Panics returns the number of handler panics recovered by all listeners
// the processor ever had.
func (p *Processor) Panics() int64 {
	return p.panics.Load()
}

// SetHandlerLatency installs newHistogram (nil: time nothing) and asks it
// for the histogram of every registered listener, and of every listener
// added later.
func (p *Processor) SetHandlerLatency(newHistogram func(handlerName string) Histogram) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handlerLatency = newHistogram
	for _, l := range p.listeners {
		l.setLatency(newHistogram)
	}
}
