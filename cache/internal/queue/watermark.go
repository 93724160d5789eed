package queue

// watermark tracks, for an informer's Keyed queue, the resourceVersion up to
// which every change the queue received has been popped: the informer's
// cache records it as its watermark once the pop is applied. Keys pop in the
// order in which they were first queued, not in watch order (a@10, b@11,
// a@12 pop as a@10+a@12, then b@11), so the version of the newest change
// popped is not a watermark: with b@11 still queued, the watermark after
// popping a is 10.
//
// Each complete list starts a new epoch: a mark of that epoch is the
// server's truth once popped, and replaces the cache's watermark even when
// it is lower (after an etcd restore, or a bogus version that pinned it);
// marks of the same epoch only move it forward. All fields are guarded by
// the queue's lock.
type watermark struct {
	// received is the newest change queued: a watch event's object, or the
	// version of a complete list.
	received wmMark
	// before holds, for every queued key, received as it was when the key
	// was queued: every change older than the key's oldest queued delta.
	before map[string]wmMark
	// popped is the watermark once the pop in progress is applied.
	popped wmMark
	// epoch counts the lists queued.
	epoch uint64
	// appliedEpoch is the newest epoch whose mark the cache has taken.
	appliedEpoch uint64
}

// wmMark is a resourceVersion and the list epoch it belongs to.
type wmMark struct {
	rv    string
	epoch uint64
}

// queued records that d is appended to key's deltas (first is true when
// key was not queued).
func queuedMark[D any, O Ops[D]](w *watermark, o O, key string, d D, first bool) {
	if first {
		w.before[key] = w.received
	}
	switch o.Kind(d) {
	case Added, Updated, Deleted:
		obj := o.Object(d)
		if _, _, tomb := o.AsTombstone(obj); tomb {
			return
		}
		if m, err := o.Meta(obj); err == nil {
			if rv := m.GetResourceVersion(); rv != "" {
				w.received.rv = rv
			}
		}
	}
}

// listed records that a list current at rv was queued: a new epoch.
func (w *watermark) listed(rv string) {
	if rv != "" {
		w.epoch++
		w.received = wmMark{rv: rv, epoch: w.epoch}
	}
}

// pop records that key was popped; head is the key now first in the queue
// ("" when it is empty).
func (w *watermark) pop(key, head string, empty bool) {
	delete(w.before, key)
	if empty {
		w.popped = w.received
		return
	}
	w.popped = w.before[head]
}

// take returns the watermark once the pop in progress is applied, and
// whether it starts a newer list epoch than the cache has seen (the cache
// must then take it even when it is lower); it records that the cache took
// that epoch.
func (w *watermark) take(m wmMark) (rv string, reset bool) {
	if m.epoch > w.appliedEpoch {
		w.appliedEpoch = m.epoch
		return m.rv, true
	}
	return m.rv, false
}

// listedLocked records, for the watermark, that a list current at
// resourceVersion was queued. When that left nothing queued (the list
// brought nothing to apply), nothing is being processed either (Pop holds
// the lock while it processes), so the informer's cache has caught up with
// the list: its watermark becomes the list's version now, as no pop will
// move it.
func (k *Keyed[D, O]) listedLocked(resourceVersion string) {
	if k.wm == nil {
		return
	}
	k.wm.listed(resourceVersion)
	if k.queue.Len() > 0 {
		return
	}
	if k.lists.SetWatermark != nil {
		k.lists.SetWatermark(k.wm.take(k.wm.received))
	}
}

// TracksWatermark reports whether the queue was configured with Watermark.
func (k *Keyed[D, O]) TracksWatermark() bool {
	return k.wm != nil
}

// PoppedWatermark returns the resourceVersion up to which every change the
// queue received is applied once the pop in progress is, and whether the
// cache must take it even when lower (it completes a list): it is only
// meaningful inside Pop's process function, and only for a queue that
// tracks its watermark.
func (k *Keyed[D, O]) PoppedWatermark() (rv string, reset bool) {
	if k.wm == nil {
		return "", false
	}
	return k.wm.take(k.wm.popped)
}
