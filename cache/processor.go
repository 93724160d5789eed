package cache

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

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

// handlerStatuses describes the registered listeners.
func (p *sharedProcessor) handlerStatuses() []HandlerStatus {
	p.mu.RLock()
	listeners := append([]*processorListener(nil), p.listeners...)
	p.mu.RUnlock()
	out := make([]HandlerStatus, len(listeners))
	for i, l := range listeners {
		out[i] = HandlerStatus{
			Name:    l.handlerName,
			Pending: l.pendingCount(),
			Panics:  l.ownPanics.Load(),
			Synced:  l.HasSynced(),
		}
	}
	return out
}

// setHandlerMetrics installs provider and gives every listener its
// histogram.
func (p *sharedProcessor) setHandlerMetrics(provider HandlerMetricsProvider) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handlerMetrics = provider
	for _, l := range p.listeners {
		l.setLatencyMetric(provider)
	}
}
