package fanout

import "fmt"

// Buffer says how a listener holds the notifications that wait for a
// handler still busy with earlier ones.
type Buffer int

const (
	// BufferUnbounded keeps every Notification, in order: a handler sees
	// every change, and a handler that stays blocked makes its buffer grow
	// without bound.
	BufferUnbounded Buffer = iota

	// BufferCoalesceByKey keeps at most the latest state per object (per
	// Config.KeyOf key): while a Notification for an object waits, a newer
	// one for the same object is merged into it instead of being queued
	// behind it. Objects are delivered oldest first, by when their key
	// became pending, and the buffer holds at most two entries per object
	// (a delete and a re-creation's add). The merge rules:
	//
	//   - add, then updates: one add (Initial kept) of the newest state;
	//   - update, then updates: one update from the old object of the
	//     first to the newest;
	//   - add, then delete, of an object whose add was never delivered:
	//     nothing at all (an initial add dropped this way still counts as
	//     processed for HasSynced);
	//   - update(s), then delete: the delete;
	//   - delete, then delete: one delete, with a real final state
	//     preferred over a placeholder (Config.IsFinalStateUnknown);
	//   - delete, then add (re-created): the delete, then the add (merged
	//     with later updates as above); a delete before that add was
	//     delivered drops the add and keeps the first delete;
	//   - Resync updates merge like updates (the merged one is a Resync
	//     only when all were).
	BufferCoalesceByKey
)

// newBuffer returns the buffer of a listener with buffer b: nil for
// BufferUnbounded (the listener's own slices), a coalescingBuffer for
// BufferCoalesceByKey, and an error for any other value.
func (p *Processor) newBuffer(b Buffer) (*coalescingBuffer, error) {
	switch b {
	case BufferUnbounded:
		return nil, nil
	case BufferCoalesceByKey:
		return newCoalescingBuffer(p.keyOf, p.isFinalStateUnknown), nil
	}
	return nil, fmt.Errorf("unknown buffer %d", int(b))
}

// coalescingBuffer is the buffer of a BufferCoalesceByKey listener:
// one entry per key with pending notifications, in a list ordered by when
// the key became pending. Guarded by the listener's mu.
type coalescingBuffer struct {
	keyOf               func(obj any) (string, error)
	isFinalStateUnknown func(obj any) bool

	entries    map[string]*coalesceEntry
	head, tail *coalesceEntry
	// notes counts the pending notifications (an entry holds one or two).
	notes int
}

// coalesceEntry holds a key's pending notifications: first, and second
// when first is a delete followed by a re-creation's add.
type coalesceEntry struct {
	key        string
	first      Notification
	second     Notification
	hasSecond  bool
	prev, next *coalesceEntry
}

// newCoalescingBuffer returns an empty buffer that merges notifications
// under keyOf's keys (nil: none has a key) and tells placeholders of an
// unknown final state with isFinalStateUnknown (nil: none is).
func newCoalescingBuffer(keyOf func(obj any) (string, error), isFinalStateUnknown func(obj any) bool) *coalescingBuffer {
	return &coalescingBuffer{keyOf: keyOf, isFinalStateUnknown: isFinalStateUnknown, entries: map[string]*coalesceEntry{}}
}

// keyOfNotification is the key n is coalesced under, or "" when it has
// none (such notifications are queued on their own).
func (b *coalescingBuffer) keyOfNotification(n *Notification) string {
	if b.keyOf == nil {
		return ""
	}
	obj := n.NewObj
	if n.Kind == Delete {
		obj = n.OldObj
	}
	key, err := b.keyOf(obj)
	if err != nil {
		return ""
	}
	return key
}

func (b *coalescingBuffer) pushBack(e *coalesceEntry) {
	e.prev, e.next = b.tail, nil
	if b.tail != nil {
		b.tail.next = e
	} else {
		b.head = e
	}
	b.tail = e
}

func (b *coalescingBuffer) unlink(e *coalesceEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		b.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		b.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

// add merges n into the buffer. dropped is called for an initial-list add
// that is merged away without being delivered.
func (b *coalescingBuffer) add(n Notification, dropped func(Notification)) {
	key := b.keyOfNotification(&n)
	e := b.entries[key]
	if e == nil || key == "" {
		e = &coalesceEntry{key: key, first: n}
		if key != "" {
			b.entries[key] = e
		}
		b.pushBack(e)
		b.notes++
		return
	}
	if e.hasSecond {
		// first is a delete, second the add of a re-creation.
		if n.Kind == Delete {
			if e.second.Initial {
				dropped(e.second)
			}
			e.second = Notification{}
			e.hasSecond = false
			b.notes--
			return
		}
		e.second.NewObj = n.NewObj
		return
	}
	p := &e.first
	switch p.Kind {
	case Add:
		if n.Kind == Delete {
			// Never delivered: the handler need not hear of it.
			if p.Initial {
				dropped(*p)
			}
			b.remove(e)
			return
		}
		p.NewObj = n.NewObj
	case Update:
		if n.Kind == Delete {
			*p = n
			return
		}
		p.NewObj = n.NewObj
		p.Resync = p.Resync && n.Resync
	case Delete:
		if n.Kind == Delete {
			// Keep the more informative one: a real final state over a
			// placeholder of an unknown one.
			if b.isFinalStateUnknown != nil && b.isFinalStateUnknown(p.OldObj) {
				p.OldObj = n.OldObj
			}
			return
		}
		// Re-created: its add follows the delete.
		e.second = Notification{Kind: Add, Initial: n.Kind == Add && n.Initial, NewObj: n.NewObj}
		e.hasSecond = true
		b.notes++
	}
}

func (b *coalescingBuffer) remove(e *coalesceEntry) {
	b.unlink(e)
	delete(b.entries, e.key)
	b.notes--
	if e.hasSecond {
		b.notes--
	}
}

// popFront removes the oldest entry and appends its notifications to out.
func (b *coalescingBuffer) popFront(out []Notification) []Notification {
	e := b.head
	if e == nil {
		return out
	}
	b.remove(e)
	out = append(out, e.first)
	if e.hasSecond {
		out = append(out, e.second)
	}
	return out
}

// clear drops everything.
func (b *coalescingBuffer) clear() {
	clear(b.entries)
	b.head, b.tail = nil, nil
	b.notes = 0
}
