package cache

import (
	"fmt"

	"github.com/kinformer/kinformer/cache/internal/fanout"
)

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

var _ HandlerBufferReporter = (*handlerRegistration)(nil)

// fanoutBuffer is the fan-out engine's buffer for policy, or an error for a
// policy this package does not know.
func fanoutBuffer(policy HandlerBufferPolicy) (fanout.Buffer, error) {
	switch policy {
	case HandlerBufferUnbounded:
		return fanout.BufferUnbounded, nil
	case HandlerBufferCoalesceByKey:
		return fanout.BufferCoalesceByKey, nil
	}
	return 0, fmt.Errorf("unknown HandlerBufferPolicy %d", int(policy))
}
