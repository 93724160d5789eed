package cache

import (
	"fmt"

	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache/internal/fanout"
)

// newHandlerProcessor returns the fan-out engine of an informer's handlers:
// notifications coalesce by DeletionHandlingMetaNamespaceKeyFunc's keys, a
// DeletedFinalStateUnknown is the placeholder of an unknown final state,
// clk decides resyncs, and metrics (may be nil) times the handlers.
func newHandlerProcessor(clk clock.Clock, metrics HandlerMetricsProvider) *fanout.Processor {
	return fanout.NewProcessor(fanout.Config{
		Clock:               clk,
		KeyOf:               DeletionHandlingMetaNamespaceKeyFunc,
		IsFinalStateUnknown: isDeletedFinalStateUnknown,
		HandlerLatency:      handlerLatencyOf(metrics),
	})
}

// isDeletedFinalStateUnknown reports whether obj is a
// DeletedFinalStateUnknown.
func isDeletedFinalStateUnknown(obj any) bool {
	_, ok := obj.(DeletedFinalStateUnknown)
	return ok
}

// handlerLatencyOf adapts provider (may be nil) to the fan-out engine.
func handlerLatencyOf(provider HandlerMetricsProvider) func(handlerName string) fanout.Histogram {
	if provider == nil {
		return nil
	}
	return func(handlerName string) fanout.Histogram {
		if h := provider.NewHandlerLatencyMetric(handlerName); h != nil {
			return h
		}
		return nil
	}
}

// handlerRegistration is the ResourceEventHandlerRegistration that
// AddEventHandler and its variants return: the handler's listener in the
// informer's fan-out engine.
type handlerRegistration struct {
	listener *fanout.Listener
}

// HasSynced reports whether the informer has synced and this handler has
// processed every notification of its initial list.
func (r *handlerRegistration) HasSynced() bool {
	return r.listener.HasSynced()
}

// HasSyncedChecker returns a DoneChecker that completes when HasSynced
// becomes true.
func (r *handlerRegistration) HasSyncedChecker() DoneChecker {
	return r.listener.SyncTracker()
}

// ShutdownChan returns a channel that is closed once the handler has been
// removed or its informer stopped, and it is no longer running.
func (r *handlerRegistration) ShutdownChan() <-chan struct{} {
	return r.listener.Finished()
}

// PendingNotifications implements HandlerBufferReporter.
func (r *handlerRegistration) PendingNotifications() int {
	return r.listener.Pending()
}

// listenerOf returns the listener behind handle (nil for a nil
// *handlerRegistration), or an error for a handle that is not a
// registration of this package.
func listenerOf(handle ResourceEventHandlerRegistration) (*fanout.Listener, error) {
	r, ok := handle.(*handlerRegistration)
	if !ok {
		return nil, fmt.Errorf("invalid event handler registration of type %T", handle)
	}
	if r == nil {
		return nil, nil
	}
	return r.listener, nil
}

// handlerStatuses describes the handlers of processor.
func handlerStatuses(processor *fanout.Processor) []HandlerStatus {
	statuses := processor.Statuses()
	out := make([]HandlerStatus, len(statuses))
	for i, st := range statuses {
		out[i] = HandlerStatus{Name: st.Name, Pending: st.Pending, Panics: st.Panics, Synced: st.Synced}
	}
	return out
}

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
