package fakeapi

import (
	"sync"

	"k8s.io/apimachinery/pkg/watch"
)

// Watch is a watch.Interface whose events a test delivers. Events given at construction are
// buffered, so a script needs no goroutine; Send blocks only when the consumer is more than
// the buffer behind.
type Watch struct {
	ch        chan watch.Event
	mu        sync.Mutex
	closed    bool
	stopped   chan struct{}
	stopOnce  sync.Once
	closeOnce sync.Once
}

// watchBuffer is how many events beyond the scripted ones a Watch buffers for Send.
const watchBuffer = 100

// NewWatch returns a watch that delivers events in order and then closes its result channel,
// or stays open when hold is true.
func NewWatch(events []watch.Event, hold bool) *Watch {
	w := &Watch{ch: make(chan watch.Event, len(events)+watchBuffer), stopped: make(chan struct{})}
	for _, e := range events {
		w.ch <- e
	}
	if !hold {
		w.Close()
	}
	return w
}

// ResultChan returns the channel the watch's events arrive on.
func (w *Watch) ResultChan() <-chan watch.Event { return w.ch }

// Stop records that the consumer stopped the watch (see Stopped); it may be called any number
// of times. As a server's watch does, the result channel is closed.
func (w *Watch) Stop() {
	w.stopOnce.Do(func() { close(w.stopped) })
	w.Close()
}

// Send delivers e on the watch. It reports false, delivering nothing, when the watch is closed
// or the consumer stops it while Send waits for room in the buffer.
func (w *Watch) Send(e watch.Event) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	select {
	case w.ch <- e:
		return true
	case <-w.stopped:
		return false
	}
}

// Close ends the watch as a server does when it closes the connection: the result channel is
// closed after the events already sent. It may be called any number of times.
func (w *Watch) Close() {
	w.closeOnce.Do(func() {
		w.mu.Lock()
		w.closed = true
		close(w.ch)
		w.mu.Unlock()
	})
}

// Pending returns how many events, scripted or sent, the consumer has not received yet. Once
// it is 0 after a Send, the consumer has taken that event, as an unbuffered send would have
// told.
func (w *Watch) Pending() int { return len(w.ch) }

// Stopped is closed once the consumer called Stop.
func (w *Watch) Stopped() <-chan struct{} { return w.stopped }

// IsStopped reports whether the consumer called Stop.
func (w *Watch) IsStopped() bool {
	select {
	case <-w.stopped:
		return true
	default:
		return false
	}
}
