package queue

import "sync/atomic"

// SyncGate tracks a queue's "initial batch popped" condition. All methods
// except IsDone need the owner's lock; Init must have run before Done.
type SyncGate struct {
	done chan struct{}
	// synced mirrors "done is closed" for lock-free readers.
	synced atomic.Bool
	// populated is set by the first Replace or the first Add/Update/Delete.
	populated bool
	// pending counts initial items not yet popped and processed.
	pending int
}

// Init makes the gate usable; it may be called again.
func (g *SyncGate) Init() {
	if g.done == nil {
		g.done = make(chan struct{})
	}
}

// MarkPopulated records an Add/Update/Delete: if no Replace came first, the
// initial batch is empty and the queue is synced now.
func (g *SyncGate) MarkPopulated() {
	if !g.populated {
		g.populated = true
		g.check()
	}
}

// FirstReplace records a Replace; only the first one (before any
// Add/Update/Delete) sets the size of the initial batch to n.
func (g *SyncGate) FirstReplace(n int) {
	if !g.populated {
		g.populated = true
		g.pending = n
		g.check()
	}
}

// Consumed records that n initial items were popped and processed.
func (g *SyncGate) Consumed(n int) {
	if g.pending > 0 {
		g.pending -= min(n, g.pending)
		g.check()
	}
}

// Pending returns the number of initial items not yet popped and processed.
func (g *SyncGate) Pending() int { return g.pending }

func (g *SyncGate) check() {
	if g.populated && g.pending == 0 && !g.synced.Load() {
		g.synced.Store(true)
		close(g.done)
	}
}

// IsDone reports whether the initial batch was popped and processed. It
// needs no lock.
func (g *SyncGate) IsDone() bool {
	return g.synced.Load()
}

// Done returns the channel closed once IsDone is true.
func (g *SyncGate) Done() <-chan struct{} {
	return g.done
}
