package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache/internal/diag"
)

// observe is the Reflector's observer: it turns the notes of the core (see
// reflector_core.go) into metrics, diagnostics counters (diag.Stats), log
// lines and calls of the watch error handler, so that each observation is
// made in one place. now is the time of the input the note answers.
//
// The log lines keep client-go's messages and keys. They are logged one
// call level up (logr's call depth), naming the driver's line that hands the
// note over rather than this function.
func (r *Reflector) observe(ctx context.Context, a *reflectorAction, now time.Time) {
	switch a.note {
	case noteListStarted:
		r.metrics.listStarted()
		r.stats.ListStarting()
	case noteListDone:
		r.stats.ListSucceeded(now)
		r.metrics.listDone(a.dur.Seconds(), a.count)
	case noteWatchStarted:
		r.metrics.watchStarted()
		if a.restart {
			r.stats.CountWatchRestart()
		}
	case noteWatchEnded:
		r.metrics.watchEnded(a.dur.Seconds(), a.count, a.short)
	case noteNextList:
		r.stats.SetNextList(diag.ListReason(a.reason))
	case noteRelistAfter:
		r.stats.SetNextList(relistReasonAfterWatch(a.err))
	case noteReport:
		r.reportWatchFailure(ctx, a.err)
	case noteBadData:
		r.badData.counts[a.bad.kind].Add(1)
		if a.bad.msg != "" {
			utilruntime.HandleErrorWithContext(klog.NewContext(ctx, r.loggerFor(ctx).WithCallDepth(1)), a.bad.err, a.bad.msg, a.bad.keysAndValues...)
		}
	default:
		r.logNote(ctx, a)
	}
}

// observeEvent records the arrival of an event the store took (see
// actEventApplied).
func (r *Reflector) observeEvent(now time.Time) {
	r.stats.EventReceived(now)
}

// logNote logs the line of a note.
func (r *Reflector) logNote(ctx context.Context, a *reflectorAction) {
	logger := r.loggerFor(ctx).WithCallDepth(2)
	switch a.note {
	case noteLogCachesPopulated:
		logger.V(2).Info("Caches populated", "type", r.typeDescription, "reflector", r.name)
	case noteLogStreamFallback:
		logger.V(4).Info("Data couldn't be fetched in watchlist mode. Falling back to regular list. This is expected if watchlist is not supported or disabled in kube-apiserver.",
			"reflector", r.name, "err", a.err)
	case noteLogStreamReopen:
		logger.V(2).Info("Streaming list closed before the end of its initial events; opening it again",
			"reflector", r.name, "type", r.typeDescription, "events", a.count)
	case noteLogStreamBackoff:
		logger.V(2).Info("watch-list failed - backing off", "reflector", r.name, "type", r.typeDescription, "err", a.err)
	case noteLogStreamLatest:
		logger.V(4).Info("watch-list resource version unavailable - streaming the latest data", "reflector", r.name, "type", r.typeDescription, "err", a.err)
	case noteLogStreamComplete:
		logger.V(4).Info("Exiting watch because received the bookmark that marks the end of initial events stream",
			"reflector", r.name, "totalItems", a.count, "duration", a.dur)
	case noteLogInitialEventsPending:
		var detail string
		if a.lastArrival == 0 {
			detail = fmt.Sprintf("%s: awaiting required bookmark event for initial events stream, no events received for %v", r.name, a.since)
		} else {
			detail = fmt.Sprintf("%s: hasn't received required bookmark event marking the end of initial events stream, received last event %v ago", r.name, a.lastArrival)
		}
		logger.Info("Warning: event bookmark expired", "reflector", r.name, "err", detail)
	case noteLogWatchOpenBackoff:
		logger.V(4).Info("Watch failed - backing off", "reflector", r.name, "type", r.typeDescription, "err", a.err)
	case noteLogWatchClose:
		logger.V(4).Info("Watch close", "reflector", r.name, "type", r.typeDescription, "totalItems", a.count)
	case noteLogWatchResume:
		logger.V(2).Info("Resuming watch", "reflector", r.name, "type", r.typeDescription, "err", a.err)
	case noteLogWatchBackoff:
		logger.V(2).Info("Watch ended - backing off before resuming", "reflector", r.name, "type", r.typeDescription, "err", a.err)
	case noteLogWatchExpired:
		logger.V(4).Info("Watch closed", "reflector", r.name, "type", r.typeDescription, "err", a.err)
	case noteLogWatchEndedWithError:
		logger.Info("Warning: watch ended with error", "reflector", r.name, "type", r.typeDescription, "err", a.err)
	case noteLogSnapshotRejected:
		utilruntime.HandleErrorWithContext(klog.NewContext(ctx, logger), a.err, "Informer snapshot rejected; listing instead", "reflector", r.name, "type", r.typeDescription)
	case noteLogSnapshotRefused:
		utilruntime.HandleErrorWithContext(klog.NewContext(ctx, logger), a.err, "Snapshot could not be given to the store; listing instead", "reflector", r.name)
	case noteLogResumed:
		logger.V(2).Info("Resuming from a snapshot instead of listing", "reflector", r.name, "type", r.typeDescription,
			"objects", a.count, "resourceVersion", a.rv)
	case noteLogUnexpectedInput:
		utilruntime.HandleErrorWithContext(klog.NewContext(ctx, logger), nil, "Reflector ignored an input its phase does not expect",
			"reflector", r.name, "phase", a.phase.String(), "input", a.input.String())
	}
}

// reportWatchFailure passes a failure the Reflector handles by itself (and
// so does not return) to a watch error handler set by the informer.
func (r *Reflector) reportWatchFailure(ctx context.Context, err error) {
	r.stats.RecordError(err, r.clock.Now())
	if h := r.watchErrorHandler; h != nil {
		h(ctx, r, err)
	}
}

// handleListAndWatchError passes an error returned by ListAndWatch to the
// watch error handler, or to DefaultWatchErrorHandler when none is set.
func (r *Reflector) handleListAndWatchError(ctx context.Context, err error) {
	r.stats.RecordError(err, r.clock.Now())
	if h := r.watchErrorHandler; h != nil {
		h(ctx, r, err)
		return
	}
	DefaultWatchErrorHandler(ctx, r, err)
}

// WatchErrorHandler is called with a list or watch failure of a Reflector;
// the Reflector then backs off and retries. Handlers must return quickly.
//
// Contextual logging: use WatchErrorHandlerWithContext in code that supports
// it.
type WatchErrorHandler func(r *Reflector, err error)

// WatchErrorHandlerWithContext is called with a list or watch failure of a
// Reflector; the Reflector then backs off and retries. Handlers must return
// quickly; anything expensive belongs on another goroutine.
//
// A handler set on an informer (SetWatchErrorHandler /
// SetWatchErrorHandlerWithContext) reaches its Reflector. Difference from
// client-go: such a handler is called for every failure, including those the
// Reflector handles by itself without ending its cycle (a watch that
// cannot be opened because the connection is refused or the server answers
// 429, a watch that ends with 410 Gone / Expired, an internal error that is
// retried, a very short watch, a streaming list retried after a refused
// connection or a 429), which client-go only logs at V(2)/V(4). A handler
// therefore sees why an informer is not current. As in client-go, a handler
// never hears of a streaming list that falls back to LIST (the server cannot
// stream lists, the stream failed or stayed silent): the LIST's own failure,
// if any, is what it gets. DefaultWatchErrorHandler (used when no handler is
// set) only receives the errors that end a ListAndWatch, as in client-go.
type WatchErrorHandlerWithContext func(ctx context.Context, r *Reflector, err error)

// DefaultWatchErrorHandler logs err the way client-go does: an expired or
// gone resource version at V(4), io.EOF (a normal close) not at all,
// io.ErrUnexpectedEOF at V(1), anything else as an error through
// utilruntime.HandleErrorWithContext. It accepts a nil Reflector.
//
// Difference from client-go: io.EOF and io.ErrUnexpectedEOF are also
// recognised when wrapped.
func DefaultWatchErrorHandler(ctx context.Context, r *Reflector, err error) {
	name, description := "", ""
	if r != nil {
		name, description = r.name, r.typeDescription
	}
	switch {
	case isExpiredError(err):
		// The relist asks for data at least as new as the last resource
		// version seen, so this is routine.
		klog.FromContext(ctx).V(4).Info("Watch closed", "reflector", name, "type", description, "err", err)
	case errors.Is(err, io.EOF):
	case errors.Is(err, io.ErrUnexpectedEOF):
		klog.FromContext(ctx).V(1).Info("Watch closed with unexpected EOF", "reflector", name, "type", description, "err", err)
	default:
		utilruntime.HandleErrorWithContext(ctx, err, "Failed to watch", "reflector", name, "type", description)
	}
}
