package fakeapi

import (
	"sync"

	"k8s.io/apimachinery/pkg/watch"
)

// stream is the watch a Server hands out: send never blocks (events wait in an unbounded
// queue), and one goroutine moves them to the result channel. The goroutine ends when the
// consumer calls Stop, or after the queue drains once the server ended the watch.
type stream struct {
	mu       sync.Mutex
	queue    []watch.Event
	ending   bool
	wake     chan struct{}
	result   chan watch.Event
	stopped  chan struct{}
	stopOnce sync.Once
	// bookmarks records whether the consumer asked for bookmarks.
	bookmarks bool
}

func newStream(bookmarks bool) *stream {
	s := &stream{
		wake:      make(chan struct{}, 1),
		result:    make(chan watch.Event),
		stopped:   make(chan struct{}),
		bookmarks: bookmarks,
	}
	go s.pump()
	return s
}

// ResultChan returns the channel the events arrive on; it is closed when the watch ends.
func (s *stream) ResultChan() <-chan watch.Event { return s.result }

// Stop ends the watch from the consumer's side; it may be called any number of times.
func (s *stream) Stop() { s.stopOnce.Do(func() { close(s.stopped) }) }

// send queues events. It does nothing once the watch is ending.
func (s *stream) send(events ...watch.Event) {
	s.mu.Lock()
	if !s.ending {
		s.queue = append(s.queue, events...)
	}
	s.mu.Unlock()
	s.poke()
}

// end makes the watch close its result channel after the queued events.
func (s *stream) end() {
	s.mu.Lock()
	s.ending = true
	s.mu.Unlock()
	s.poke()
}

func (s *stream) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *stream) pump() {
	defer close(s.result)
	for {
		s.mu.Lock()
		var next watch.Event
		have := len(s.queue) > 0
		if have {
			next = s.queue[0]
			s.queue = s.queue[1:]
		}
		ending := s.ending
		s.mu.Unlock()
		if !have {
			if ending {
				return
			}
			select {
			case <-s.wake:
				continue
			case <-s.stopped:
				return
			}
		}
		select {
		case s.result <- next:
		case <-s.stopped:
			return
		}
	}
}
