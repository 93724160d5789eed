package cache

import "fmt"

// HandlerBufferPolicy says how a handler's buffer holds the notifications
// that wait for a handler still busy with earlier ones. It is set per
// handler with HandlerOptions.BufferPolicy. kinformer extension, not in
// client-go (whose buffers are always unbounded and in order).
type HandlerBufferPolicy int

const (
	// HandlerBufferUnbounded, the default, keeps every notification, in
	// order, as client-go does: a handler sees every change, and a handler
	// that stays blocked makes its buffer grow without bound.
	HandlerBufferUnbounded HandlerBufferPolicy = iota

	// HandlerBufferCoalesceByKey keeps at most the latest state per object
	// (per namespace/name key): while a notification for an object waits,
	// a newer one for the same object is merged into it instead of being
	// queued behind it. Objects are delivered oldest first, by when their
	// key became pending. The buffer holds at most one entry per object
	// (two for an object deleted and re-created while waiting), so its
	// memory is bounded by the number of distinct objects, however long the
	// handler is blocked. The handler then sees fewer, newer notifications:
	//
	//   - add, then updates: one add (isInInitialList kept) of the newest
	//     state;
	//   - update, then updates: one update from the state the handler knew
	//     (the old object of the first pending update) to the newest;
	//   - add, then delete, of an object whose add was never delivered:
	//     nothing at all (the handler never knew the object; an initial-
	//     list add dropped this way still counts for HasSynced);
	//   - update(s), then delete: one delete with the object the delete
	//     carries, the last known state or a DeletedFinalStateUnknown
	//     (which is always delivered, never merged away);
	//   - delete, then add (the object was re-created): the delete, then
	//     the add (merged with later updates as above); a delete of the
	//     re-created object before its add was delivered drops that add and
	//     keeps the first delete;
	//   - resync notifications (OnUpdate with equal resource versions) are
	//     merged like updates.
	//
	// Use it for handlers that reconcile towards the latest state (most
	// controllers) and must not hold an unbounded backlog.
	HandlerBufferCoalesceByKey
)

// HandlerBufferReporter is implemented by the registrations
// AddEventHandler and its variants return: PendingNotifications reports how
// many notifications are not handled yet: those waiting in the handler's
// buffer (for HandlerBufferCoalesceByKey, one per object with changes
// waiting; an object deleted and re-created while waiting counts twice) and
// those taken out for delivery and not yet handled. Safe for concurrent
// use; kinformer extension.
type HandlerBufferReporter interface {
	PendingNotifications() int
}

var _ HandlerBufferReporter = &processorListener{}

// coalescingBuffer is the buffer of a HandlerBufferCoalesceByKey listener:
// one entry per key with pending notifications, in a list ordered by when
// the key became pending. Guarded by the listener's mu.
type coalescingBuffer struct {
	entries    map[string]*coalesceEntry
	head, tail *coalesceEntry
	// notes counts the pending notifications (an entry holds one or two).
	notes int
}

// coalesceEntry holds a key's pending notifications: first, and second
// when first is a delete followed by a re-creation's add.
type coalesceEntry struct {
	key        string
	first      notification
	second     notification
	hasSecond  bool
	prev, next *coalesceEntry
}

func newCoalescingBuffer() *coalescingBuffer {
	return &coalescingBuffer{entries: map[string]*coalesceEntry{}}
}

// notificationKey is the key a notification is coalesced under, or "" when
// it has none (such notifications are queued on their own).
func notificationKey(n *notification) string {
	obj := n.newObj
	if n.kind == notifyDelete {
		obj = n.oldObj
	}
	key, err := DeletionHandlingMetaNamespaceKeyFunc(obj)
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
func (b *coalescingBuffer) add(n notification, dropped func(notification)) {
	key := notificationKey(&n)
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
		if n.kind == notifyDelete {
			if e.second.initial {
				dropped(e.second)
			}
			e.second = notification{}
			e.hasSecond = false
			b.notes--
			return
		}
		e.second.newObj = n.newObj
		return
	}
	p := &e.first
	switch p.kind {
	case notifyAdd:
		if n.kind == notifyDelete {
			// Never delivered: the handler need not hear of it.
			if p.initial {
				dropped(*p)
			}
			b.remove(e)
			return
		}
		p.newObj = n.newObj
	case notifyUpdate:
		if n.kind == notifyDelete {
			*p = n
			return
		}
		p.newObj = n.newObj
		p.resync = p.resync && n.resync
	case notifyDelete:
		if n.kind == notifyDelete {
			// Keep the more informative one: a real final state over a
			// DeletedFinalStateUnknown.
			if _, tomb := p.oldObj.(DeletedFinalStateUnknown); tomb {
				p.oldObj = n.oldObj
			}
			return
		}
		// Re-created: its add follows the delete.
		e.second = notification{kind: notifyAdd, initial: n.kind == notifyAdd && n.initial, newObj: n.newObj}
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
func (b *coalescingBuffer) popFront(out []notification) []notification {
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

// newHandlerBuffer returns the buffer of a listener with policy: nil for
// HandlerBufferUnbounded (the listener's own slices), a coalescingBuffer for
// HandlerBufferCoalesceByKey, and an error for any other value.
func newHandlerBuffer(policy HandlerBufferPolicy) (*coalescingBuffer, error) {
	switch policy {
	case HandlerBufferUnbounded:
		return nil, nil
	case HandlerBufferCoalesceByKey:
		return newCoalescingBuffer(), nil
	}
	return nil, fmt.Errorf("unknown HandlerBufferPolicy %d", int(policy))
}
