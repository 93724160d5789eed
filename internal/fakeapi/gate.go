package fakeapi

import (
	"context"
	"sync"
)

// Gate holds the calls that pass through it until the test lets them go: a BeforeList hook
// calls Pass to hold a List call (or only the calls it selects) at the moment the code under
// test makes it. Release lets one held call go, with the answer the test chooses; Open lets
// every call go, now and later. Build one with NewGate; safe for concurrent use.
type Gate struct {
	arrived  chan struct{}
	release  chan error
	open     chan struct{}
	openOnce sync.Once
}

// gateArrivals is how many arrivals a Gate buffers for Arrived.
const gateArrivals = 1000

// NewGate returns a closed gate.
func NewGate() *Gate {
	return &Gate{arrived: make(chan struct{}, gateArrivals), release: make(chan error), open: make(chan struct{})}
}

// Pass holds the calling goroutine until the test lets it go, and returns the error given to
// Release (nil once the gate is open), or ctx's error when ctx ends first. Each call signals
// Arrived when it starts to wait.
func (g *Gate) Pass(ctx context.Context) error {
	select {
	case g.arrived <- struct{}{}:
	default:
	}
	select {
	case err := <-g.release:
		return err
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Arrived receives one value for each call that came to the gate (up to 1000 not yet
// received), so a test can wait until a call is held.
func (g *Gate) Arrived() <-chan struct{} { return g.arrived }

// Release lets one held call go, with err as what its Pass returns (nil: the call goes on
// to its answer; an error: the call answers that error). It waits until a call takes it, as
// an unbuffered send does; once the gate is open it returns at once.
func (g *Gate) Release(err error) {
	select {
	case g.release <- err:
	case <-g.open:
	}
}

// Open lets every held call and every later one go, with no error. It may be called any
// number of times (for example by the test and again at its cleanup).
func (g *Gate) Open() { g.openOnce.Do(func() { close(g.open) }) }
