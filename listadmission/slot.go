package listadmission

import (
	"container/heap"
	"context"
	"time"

	"k8s.io/utils/clock"
)

// Slot is one list's permission to run, handed out by Admission.Acquire and
// given back with Release. A nil *Slot (what a nil *Admission hands out)
// holds nothing: its Release does nothing, and ContextWithSlot leaves a
// context without it. A Slot belongs to the one list it admits: Release
// must not be called concurrently on the same Slot.
type Slot struct {
	a *Admission
	// epoch is the admission's epoch when the slot was handed out.
	epoch uint64
	done  bool
}

// Release gives the slot back to its Admission, which admits the next list
// waiting, if any. completed says the list completed without error, which
// raises the number of lists admitted at once after a 429 (by one, up to
// Options.MaxConcurrent). Only the first call counts; later calls, and calls
// on a nil s, do nothing.
func (s *Slot) Release(completed bool) {
	if s == nil || s.done {
		return
	}
	s.done = true
	a := s.a
	a.mu.Lock()
	defer a.mu.Unlock()
	a.inFlight--
	if completed && a.limit > 0 && a.current < a.limit {
		a.current++
	}
	a.grantLocked(a.clock.Now())
}

// slotKey is the context key under which a list's requests carry its slot,
// so that WrapTransport can tell which list a 429 answers.
type slotKey struct{}

// ContextWithSlot returns ctx carrying slot (ctx itself when slot is nil).
// A Reflector sends its list requests with such a context, so that the
// transport WrapTransport returns counts the 429s answering them (and only
// those) against the Admission the slot belongs to.
func ContextWithSlot(ctx context.Context, slot *Slot) context.Context {
	if slot == nil {
		return ctx
	}
	return context.WithValue(ctx, slotKey{}, slot)
}

// slotFrom returns the slot ctx carries for a, or nil.
func slotFrom(ctx context.Context, a *Admission) *Slot {
	slot, _ := ctx.Value(slotKey{}).(*Slot)
	if slot == nil || slot.a != a {
		return nil
	}
	return slot
}

// waiter is an informer waiting for a slot.
type waiter struct {
	priority int
	seq      uint64
	index    int
	granted  bool
	epoch    uint64 // the admission's epoch when granted
	ready    chan struct{}
}

// waitQueue is a heap of waiters: the highest priority first, then the
// earliest.
type waitQueue []*waiter

func (q waitQueue) Len() int { return len(q) }
func (q waitQueue) Less(i, j int) bool {
	if q[i].priority != q[j].priority {
		return q[i].priority > q[j].priority
	}
	return q[i].seq < q[j].seq
}
func (q waitQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *waitQueue) Push(x any) {
	w := x.(*waiter)
	w.index = len(*q)
	*q = append(*q, w)
}
func (q *waitQueue) Pop() any {
	old := *q
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	w.index = -1
	return w
}

// freeLocked reports whether one more list may run at now.
func (a *Admission) freeLocked(now time.Time) bool {
	return (a.limit < 0 || a.inFlight < a.current) && !now.Before(a.pausedUntil)
}

// takeLocked counts a slot handed out.
func (a *Admission) takeLocked() {
	a.inFlight++
	a.admitted++
	if a.inFlight > a.peak {
		a.peak = a.inFlight
	}
}

// grantLocked admits waiters, in order, while slots are free.
func (a *Admission) grantLocked(now time.Time) {
	for len(a.waiters) > 0 && a.freeLocked(now) {
		w := heap.Pop(&a.waiters).(*waiter)
		w.granted = true
		w.epoch = a.epoch
		a.takeLocked()
		close(w.ready)
	}
}

// Acquire waits for a slot for a list of the given priority (the highest
// first, then in the order of the calls) and returns it; the caller gives
// it back with Release once the list is complete or failed. It returns at
// once when a slot is free, no one waits before it and the group is not
// paused. It returns ctx's error, and no slot, when ctx ends first: the
// caller leaves the line (and a slot granted as ctx ended goes to the next
// in line). A nil a hands out a nil slot at once.
func (a *Admission) Acquire(ctx context.Context, priority int) (*Slot, error) {
	if a == nil {
		return nil, nil
	}
	a.mu.Lock()
	if len(a.waiters) == 0 && a.freeLocked(a.clock.Now()) {
		a.takeLocked()
		epoch := a.epoch
		a.mu.Unlock()
		return &Slot{a: a, epoch: epoch}, nil
	}
	a.seq++
	w := &waiter{priority: priority, seq: a.seq, ready: make(chan struct{})}
	heap.Push(&a.waiters, w)
	// Slots may be free while others wait for the end of a pause that is
	// over: whoever is first in line goes now.
	a.grantLocked(a.clock.Now())
	a.mu.Unlock()

	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		a.mu.Lock()
		if w.granted {
			a.mu.Unlock()
			return &Slot{a: a, epoch: w.epoch}, nil
		}
		// While a pause lasts, every waiter wakes at its end (or when it
		// moves) and admits whoever is first in line.
		var wake <-chan time.Time
		if now := a.clock.Now(); now.Before(a.pausedUntil) {
			if timer != nil {
				timer.Stop()
			}
			timer = a.clock.NewTimer(a.pausedUntil.Sub(now))
			wake = timer.C()
		}
		changed := a.changed
		a.mu.Unlock()

		select {
		case <-w.ready:
		case <-changed:
		case <-wake:
			a.mu.Lock()
			a.grantLocked(a.clock.Now())
			a.mu.Unlock()
		case <-ctx.Done():
			a.mu.Lock()
			if w.granted {
				// Admitted as ctx ended: the slot goes to the next.
				a.mu.Unlock()
				(&Slot{a: a}).Release(false)
				return nil, ctx.Err()
			}
			heap.Remove(&a.waiters, w.index)
			// The timer this waiter leaves may have been the one to admit
			// the others at the end of a pause.
			a.grantLocked(a.clock.Now())
			a.mu.Unlock()
			return nil, ctx.Err()
		}
	}
}
