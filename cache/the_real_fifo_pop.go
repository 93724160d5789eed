package cache

import (
	"slices"
	"time"
)

// waitLocked blocks until a delta is queued or the queue is closed; it
// returns false for a closed, empty queue.
func (f *RealFIFO) waitLocked() bool {
	for f.items.len() == 0 {
		if f.closed.Load() {
			return false
		}
		f.cond.Wait()
	}
	return true
}

// Pop waits until a delta is queued or the queue is closed, removes the oldest
// delta and calls process with a fresh Deltas holding just that delta. It
// returns that Deltas and process's error (the delta is not requeued), or
// ErrFIFOClosed on a closed, empty queue. process runs with the queue locked
// unless UnlockWhileProcessing is in effect and fewer than two batches wait.
func (f *RealFIFO) Pop(process PopProcessFunc) (interface{}, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	if !f.waitLocked() {
		return nil, ErrFIFOClosed
	}
	initial := !f.gate.isDone()
	e := f.items.popFront()
	var deltas interface{} = Deltas{e.delta}
	err := f.processLocked(e.key, 1, func() error { return process(deltas, initial) })
	return deltas, err
}

// PopBatch waits until a delta is queued or the queue is closed (then it
// returns ErrFIFOClosed), and removes the longest run of oldest deltas that
//
//   - holds at most the batch size (1000) deltas,
//   - holds no two deltas of the same key,
//   - holds only per-object deltas (Added, Updated, Deleted, Replaced, Sync):
//     a ReplacedAll, SyncAll or Bookmark delta is always popped alone, and
//   - does not mix deltas of the initial batch with later ones.
//
// A run of one delta goes to processSingle as a Deltas of length one; a
// longer run goes to processBatch. It returns the function's error; popped
// deltas are not requeued. The functions run with the queue locked unless
// UnlockWhileProcessing is in effect and fewer than two batches wait.
//
// The slice passed to processBatch, and the Deltas passed to processSingle,
// are new for each call and belong to the caller from then on: the functions
// may keep them, and the queue never touches them again (as in client-go).
// The queue a shared informer builds for itself reuses them instead, since it
// alone consumes it.
func (f *RealFIFO) PopBatch(processBatch ProcessBatchFunc, processSingle PopProcessFunc) error {
	f.lock.Lock()
	defer f.lock.Unlock()
	f.initLocked()
	if !f.waitLocked() {
		return ErrFIFOClosed
	}
	initial := !f.gate.isDone()

	limit := min(f.items.len(), f.batchSize)
	if p := f.gate.pending; p > 0 {
		limit = min(limit, p)
	}
	n := 1
	if first := f.items.at(0); deltaTypeBatchable(first.delta.Type) {
		for n < limit {
			e := f.items.at(n)
			if !deltaTypeBatchable(e.delta.Type) || f.inRunLocked(n, e.key) {
				break
			}
			n++
		}
	}
	if n > inRunLinearLimit {
		// Forget the run's keys one by one: cheaper than clearing a set
		// that once held a full batch.
		for i := 0; i < n; i++ {
			delete(f.batchSeen, f.items.at(i).key)
		}
	}

	// An informer's own queue uses the shared scratch buffers unless another
	// consumer holds them (several consumers with UnlockWhileProcessing
	// break the contract, but must not corrupt each other's batches). Any
	// other queue hands out fresh slices: one allocation per batch.
	shared := f.reusePopBuffers && !f.consuming
	if shared {
		f.consuming = true
		defer func() { f.consuming = false }()
	}

	if n == 1 {
		e := f.items.popFront()
		var arg interface{}
		if shared {
			if f.singleBox == nil {
				f.single = make(Deltas, 1)
				f.singleBox = f.single
			}
			f.single[0] = e.delta
			f.batchKeys = append(f.batchKeys[:0], e.key)
			arg = f.singleBox
			defer func() {
				f.single[0] = Delta{}
				clear(f.batchKeys)
				f.batchKeys = f.batchKeys[:0]
			}()
		} else {
			arg = Deltas{e.delta}
		}
		return f.processLocked(e.key, 1, func() error { return processSingle(arg, initial) })
	}

	var batch []Delta
	if shared {
		if cap(f.batch) < n {
			f.batch = make([]Delta, 0, max(n, min(2*cap(f.batch), f.batchSize)))
		}
		batch = f.batch[:n]
		f.batchKeys = slices.Grow(f.batchKeys[:0], n)[:n]
		defer func() {
			clear(batch)
			clear(f.batchKeys)
			f.batchKeys = f.batchKeys[:0]
		}()
	} else {
		batch = make([]Delta, n)
	}
	key := f.items.at(0).key
	for i := range batch {
		e := f.items.popFront()
		batch[i] = e.delta
		if shared {
			f.batchKeys[i] = e.key
		}
	}
	return f.processLocked(key, n, func() error { return processBatch(batch, initial) })
}

// poppedKeys returns the keys the queue computed for deltas, when deltas is
// exactly what the PopBatch call in progress handed to its process function
// from the queue's reused buffers (the batch slice, or the Deltas of length
// one); otherwise nil. keys[i] is the key of deltas[i] ("" for the atomic
// kinds). It lets the consumer skip computing the keys again. It must only
// be called from within that process function, by the queue's only consumer
// goroutine (an informer's processing loop); the result is valid until the
// function returns.
func (f *RealFIFO) poppedKeys(deltas []Delta) []string {
	n := len(deltas)
	if n == 0 || len(f.batchKeys) != n {
		return nil
	}
	first := &deltas[0]
	if n == 1 && len(f.single) == 1 && first == &f.single[0] {
		return f.batchKeys
	}
	if cap(f.batch) >= n && first == &f.batch[:1][0] {
		return f.batchKeys
	}
	return nil
}

// inRunLinearLimit is the run length up to which PopBatch finds duplicate keys
// by linear search instead of a set.
const inRunLinearLimit = 16

// inRunLocked reports whether key is among the keys of items[0:n] (the run
// being collected by PopBatch), remembering key for the next call. Short
// runs compare linearly; long ones switch to a reusable set.
func (f *RealFIFO) inRunLocked(n int, key string) bool {
	const linearLimit = inRunLinearLimit
	if n <= linearLimit {
		for i := 0; i < n; i++ {
			if f.items.at(i).key == key {
				return true
			}
		}
		if n == linearLimit {
			if f.batchSeen == nil {
				f.batchSeen = make(map[string]struct{})
			}
			for i := 0; i <= n; i++ {
				f.batchSeen[f.items.at(i).key] = struct{}{}
			}
		}
		return false
	}
	if _, dup := f.batchSeen[key]; dup {
		return true
	}
	f.batchSeen[key] = struct{}{}
	return false
}

// processLocked runs process for count just-popped deltas (the first with key
// firstKey), with the lock released when UnlockWhileProcessing allows it,
// then updates metrics and the initial-batch accounting. Called and returns
// with f.lock held.
//
// Only deltas that were queued when the first Replace ran count towards the
// initial batch. As the queue pops in order, those are the first "pending"
// pops; the share of this pop is fixed now, before the lock may be released,
// so that a Replace arriving while an earlier delta is processed (possible
// with UnlockWhileProcessing) is not marked synced by that delta.
func (f *RealFIFO) processLocked(firstKey string, count int, process func() error) error {
	f.drain.signalLocked()
	f.processing++
	defer func() {
		f.processing--
		f.drain.signalLocked()
	}()
	depth := f.items.len()
	if f.metrics.on {
		f.metrics.queued.Set(float64(depth))
	}
	var start time.Time
	timed := f.metrics.on || depth > 10
	if timed {
		start = time.Now()
	}
	// consumed must run even if process panics, and with the lock held.
	defer f.gate.consumed(min(count, f.gate.pending))
	if f.unlockWhileProcessing && depth < 2*f.batchSize {
		f.lock.Unlock()
		defer f.lock.Lock()
	}
	err := process()
	if timed {
		elapsed := time.Since(start)
		if f.metrics.on {
			f.metrics.latency.Observe(elapsed.Seconds())
		}
		if depth > 10 && elapsed > min(time.Duration(count)*100*time.Millisecond, time.Second) {
			kv := []interface{}{"key", firstKey, "depth", depth, "batchSize", count, "duration", elapsed, "reason", "slow event handlers blocking the queue"}
			if gvr := f.identifier.GroupVersionResource(); !gvr.Empty() {
				kv = append(kv, "resource", gvr)
			}
			f.logger.Info("Slow processing of popped deltas", kv...)
		}
	}
	return err
}
