package queue

import (
	"slices"
	"time"
)

// waitLocked blocks until a delta is queued or the queue is closed; it
// returns false for a closed, empty queue.
func (r *Real[D, O]) waitLocked() bool {
	for r.items.Len() == 0 {
		if r.closed.Load() {
			return false
		}
		r.cond.Wait()
	}
	return true
}

// Pop waits until a delta is queued or the queue is closed, removes the
// oldest delta and calls process with a fresh list (Ops.Box) holding just
// that delta. It returns that list and process's error, or Ops.Closed on a
// closed, empty queue.
func (r *Real[D, O]) Pop(process func(any, bool) error) (any, error) {
	var o O
	r.lock.Lock()
	defer r.lock.Unlock()
	r.initLocked()
	if !r.waitLocked() {
		return nil, o.Closed()
	}
	initial := !r.gate.IsDone()
	e := r.items.PopFront()
	deltas := o.Box([]D{e.delta})
	err := r.processLocked(e.key, 1, func() error { return process(deltas, initial) })
	return deltas, err
}

// PopBatch waits until a delta is queued or the queue is closed (then it
// returns Ops.Closed), and removes the longest run of oldest deltas that
// holds at most DefaultBatchSize deltas, no two of the same key, only
// batchable kinds (any other is popped alone), and does not mix deltas of
// the initial batch with later ones. A run of one delta goes to
// processSingle as a list of one (Ops.Box); a longer run goes to
// processBatch. It returns the function's error.
//
// The slices handed out are new for each call, unless the queue was
// configured with ReusePopBuffers: then they are valid until the function
// returns.
func (r *Real[D, O]) PopBatch(processBatch func([]D, bool) error, processSingle func(any, bool) error) error {
	var o O
	r.lock.Lock()
	defer r.lock.Unlock()
	r.initLocked()
	if !r.waitLocked() {
		return o.Closed()
	}
	initial := !r.gate.IsDone()

	limit := min(r.items.Len(), r.batchSize)
	if p := r.gate.Pending(); p > 0 {
		limit = min(limit, p)
	}
	n := 1
	if first := r.items.At(0); first.kind.Batchable() {
		for n < limit {
			e := r.items.At(n)
			if !e.kind.Batchable() || r.inRunLocked(n, e.key) {
				break
			}
			n++
		}
	}
	if n > inRunLinearLimit {
		// Forget the run's keys one by one: cheaper than clearing a set
		// that once held a full batch.
		for i := 0; i < n; i++ {
			delete(r.batchSeen, r.items.At(i).key)
		}
	}

	// A queue with ReusePopBuffers uses the shared scratch buffers unless
	// another consumer holds them (several consumers with
	// UnlockWhileProcessing break the contract, but must not corrupt each
	// other's batches). Any other queue hands out fresh slices: one
	// allocation per batch.
	shared := r.reusePopBuffers && !r.consuming
	if shared {
		r.consuming = true
		defer func() { r.consuming = false }()
	}

	if n == 1 {
		e := r.items.PopFront()
		var arg any
		if shared {
			if r.singleBox == nil {
				r.single = make([]D, 1)
				r.singleBox = o.Box(r.single)
			}
			r.single[0] = e.delta
			r.batchKeys = append(r.batchKeys[:0], e.key)
			arg = r.singleBox
			defer func() {
				var zero D
				r.single[0] = zero
				clear(r.batchKeys)
				r.batchKeys = r.batchKeys[:0]
			}()
		} else {
			arg = o.Box([]D{e.delta})
		}
		return r.processLocked(e.key, 1, func() error { return processSingle(arg, initial) })
	}

	var batch []D
	if shared {
		if cap(r.batch) < n {
			r.batch = make([]D, 0, max(n, min(2*cap(r.batch), r.batchSize)))
		}
		batch = r.batch[:n]
		r.batchKeys = slices.Grow(r.batchKeys[:0], n)[:n]
		defer func() {
			clear(batch)
			clear(r.batchKeys)
			r.batchKeys = r.batchKeys[:0]
		}()
	} else {
		batch = make([]D, n)
	}
	key := r.items.At(0).key
	for i := range batch {
		e := r.items.PopFront()
		batch[i] = e.delta
		if shared {
			r.batchKeys[i] = e.key
		}
	}
	return r.processLocked(key, n, func() error { return processBatch(batch, initial) })
}

// PoppedKeys returns the keys the queue computed for deltas, when deltas is
// exactly what the PopBatch call in progress handed to its process function
// from the queue's reused buffers (the batch slice, or the list of one);
// otherwise nil. keys[i] is the key of deltas[i] ("" for the atomic kinds).
// It must only be called from within that process function, by the queue's
// only consumer goroutine; the result is valid until the function returns.
func (r *Real[D, O]) PoppedKeys(deltas []D) []string {
	n := len(deltas)
	if n == 0 || len(r.batchKeys) != n {
		return nil
	}
	first := &deltas[0]
	if n == 1 && len(r.single) == 1 && first == &r.single[0] {
		return r.batchKeys
	}
	if cap(r.batch) >= n && first == &r.batch[:1][0] {
		return r.batchKeys
	}
	return nil
}

// inRunLinearLimit is the run length up to which PopBatch finds duplicate keys
// by linear search instead of a set.
const inRunLinearLimit = 16

// inRunLocked reports whether key is among the keys of items[0:n] (the run
// being collected by PopBatch), remembering key for the next call. Short
// runs compare linearly; long ones switch to a reusable set.
func (r *Real[D, O]) inRunLocked(n int, key string) bool {
	const linearLimit = inRunLinearLimit
	if n <= linearLimit {
		for i := 0; i < n; i++ {
			if r.items.At(i).key == key {
				return true
			}
		}
		if n == linearLimit {
			if r.batchSeen == nil {
				r.batchSeen = make(map[string]struct{})
			}
			for i := 0; i <= n; i++ {
				r.batchSeen[r.items.At(i).key] = struct{}{}
			}
		}
		return false
	}
	if _, dup := r.batchSeen[key]; dup {
		return true
	}
	r.batchSeen[key] = struct{}{}
	return false
}

// processLocked runs process for count just-popped deltas (the first with key
// firstKey), with the lock released when UnlockWhileProcessing allows it,
// then updates metrics and the initial-batch accounting. Called and returns
// with r.lock held.
//
// Only deltas that were queued when the first Replace ran count towards the
// initial batch. As the queue pops in order, those are the first "pending"
// pops; the share of this pop is fixed now, before the lock may be released,
// so that a Replace arriving while an earlier delta is processed (possible
// with UnlockWhileProcessing) is not marked synced by that delta.
func (r *Real[D, O]) processLocked(firstKey string, count int, process func() error) error {
	r.drain.signalLocked()
	r.processing++
	defer func() {
		r.processing--
		r.drain.signalLocked()
	}()
	depth := r.items.Len()
	if r.metrics {
		r.queued.Set(float64(depth))
	}
	var start time.Time
	timed := r.metrics || depth > 10
	if timed {
		start = time.Now()
	}
	// Consumed must run even if process panics, and with the lock held.
	defer r.gate.Consumed(min(count, r.gate.Pending()))
	if r.unlockWhileProcessing && depth < 2*r.batchSize {
		r.lock.Unlock()
		defer r.lock.Lock()
	}
	err := process()
	if timed {
		elapsed := time.Since(start)
		if r.metrics {
			r.latency.Observe(elapsed.Seconds())
		}
		if depth > 10 && elapsed > min(time.Duration(count)*100*time.Millisecond, time.Second) {
			kv := []any{"key", firstKey, "depth", depth, "batchSize", count, "duration", elapsed, "reason", "slow event handlers blocking the queue"}
			if !r.resource.Empty() {
				kv = append(kv, "resource", r.resource)
			}
			r.logger.Info("Slow processing of popped deltas", kv...)
		}
	}
	return err
}
