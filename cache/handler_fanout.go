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
