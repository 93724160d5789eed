package cache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache/internal/reflector"
)

// observe is the Reflector's observer: it turns the notes of the core (see
// internal/reflector) into metrics, diagnostics counters (informerStats), log
// lines and calls of the watch error handler, so that each observation is
// made in one place. now is the time of the input the note answers.
//
// The log lines keep client-go's messages and keys. They are logged one
// call level up (logr's call depth), naming the driver's line that hands the
// note over rather than this function.
func (r *Reflector) observe(ctx context.Context, a *reflector.Action, now time.Time) {
	switch a.Note {
	case reflector.NoteListStarted:
		r.metrics.listStarted()
		r.stats.listStarting()
	case reflector.NoteListDone:
		r.stats.listSucceeded(now)
		r.metrics.listDone(a.Dur.Seconds(), a.Count)
	case reflector.NoteWatchStarted:
		r.metrics.watchStarted()
		if a.Restart {
			r.stats.watchRestarts.Add(1)
		}
	case reflector.NoteWatchEnded:
		r.metrics.watchEnded(a.Dur.Seconds(), a.Count, a.Short)
	case reflector.NoteNextList:
		r.stats.setNextList(relistIndex(a.Reason))
	case reflector.NoteRelistAfter:
		r.stats.watchEndedForRelist(publicReflectorError(a.Err))
	case reflector.NoteReport:
		r.reportWatchFailure(ctx, publicReflectorError(a.Err))
	case reflector.NoteBadData:
		r.badData.counts[a.Bad.Kind].Add(1)
		if a.Bad.Msg != "" {
			utilruntime.HandleErrorWithContext(klog.NewContext(ctx, r.loggerFor(ctx).WithCallDepth(1)), a.Bad.Err, a.Bad.Msg, a.Bad.KeysAndValues...)
		}
	default:
		r.logNote(ctx, a)
	}
}

// relistIndex is the index in informerStats.lists of the reason the core
// gives for the next list.
func relistIndex(reason reflector.ListReason) uint32 {
	switch reason {
	case reflector.ListReasonExpired:
		return relistIdxExpired
	case reflector.ListReasonStreamFallback:
		return relistIdxStreamFallback
	}
	return relistIdxWatchError
}

// observeEvent records the arrival of an event the store took (see
// reflector.ActEventApplied).
func (r *Reflector) observeEvent(now time.Time) {
	r.stats.eventReceived(now)
}

// logNote logs the line of a note.
func (r *Reflector) logNote(ctx context.Context, a *reflector.Action) {
	logger := r.loggerFor(ctx).WithCallDepth(2)
	switch a.Note {
	case reflector.NoteLogCachesPopulated:
		logger.V(2).Info("Caches populated", "type", r.typeDescription, "reflector", r.name)
	case reflector.NoteLogStreamFallback:
		logger.V(4).Info("Data couldn't be fetched in watchlist mode. Falling back to regular list. This is expected if watchlist is not supported or disabled in kube-apiserver.",
			"reflector", r.name, "err", a.Err)
	case reflector.NoteLogStreamReopen:
		logger.V(2).Info("Streaming list closed before the end of its initial events; opening it again",
			"reflector", r.name, "type", r.typeDescription, "events", a.Count)
	case reflector.NoteLogStreamBackoff:
		logger.V(2).Info("watch-list failed - backing off", "reflector", r.name, "type", r.typeDescription, "err", a.Err)
	case reflector.NoteLogStreamLatest:
		logger.V(4).Info("watch-list resource version unavailable - streaming the latest data", "reflector", r.name, "type", r.typeDescription, "err", a.Err)
	case reflector.NoteLogStreamComplete:
		logger.V(4).Info("Exiting watch because received the bookmark that marks the end of initial events stream",
			"reflector", r.name, "totalItems", a.Count, "duration", a.Dur)
	case reflector.NoteLogInitialEventsPending:
		var detail string
		if a.LastArrival == 0 {
			detail = fmt.Sprintf("%s: awaiting required bookmark event for initial events stream, no events received for %v", r.name, a.Since)
		} else {
			detail = fmt.Sprintf("%s: hasn't received required bookmark event marking the end of initial events stream, received last event %v ago", r.name, a.LastArrival)
		}
		logger.Info("Warning: event bookmark expired", "reflector", r.name, "err", detail)
	case reflector.NoteLogWatchOpenBackoff:
		logger.V(4).Info("Watch failed - backing off", "reflector", r.name, "type", r.typeDescription, "err", a.Err)
	case reflector.NoteLogWatchClose:
		logger.V(4).Info("Watch close", "reflector", r.name, "type", r.typeDescription, "totalItems", a.Count)
	case reflector.NoteLogWatchResume:
		logger.V(2).Info("Resuming watch", "reflector", r.name, "type", r.typeDescription, "err", a.Err)
	case reflector.NoteLogWatchBackoff:
		logger.V(2).Info("Watch ended - backing off before resuming", "reflector", r.name, "type", r.typeDescription, "err", a.Err)
	case reflector.NoteLogWatchExpired:
		logger.V(4).Info("Watch closed", "reflector", r.name, "type", r.typeDescription, "err", a.Err)
	case reflector.NoteLogWatchEndedWithError:
		logger.Info("Warning: watch ended with error", "reflector", r.name, "type", r.typeDescription, "err", a.Err)
	case reflector.NoteLogSnapshotRejected:
		utilruntime.HandleErrorWithContext(klog.NewContext(ctx, logger), a.Err, "Informer snapshot rejected; listing instead", "reflector", r.name, "type", r.typeDescription)
	case reflector.NoteLogSnapshotRefused:
		utilruntime.HandleErrorWithContext(klog.NewContext(ctx, logger), a.Err, "Snapshot could not be given to the store; listing instead", "reflector", r.name)
	case reflector.NoteLogResumed:
		logger.V(2).Info("Resuming from a snapshot instead of listing", "reflector", r.name, "type", r.typeDescription,
			"objects", a.Count, "resourceVersion", a.RV)
	case reflector.NoteLogUnexpectedInput:
		utilruntime.HandleErrorWithContext(klog.NewContext(ctx, logger), nil, "Reflector ignored an input its phase does not expect",
			"reflector", r.name, "phase", a.Phase.String(), "input", a.Input.String())
	}
}

// reportWatchFailure passes a failure the Reflector handles by itself (and
// so does not return) to a watch error handler set by the informer.
func (r *Reflector) reportWatchFailure(ctx context.Context, err error) {
	r.stats.recordError(err, r.clock.Now())
	if h := r.watchErrorHandler; h != nil {
		h(ctx, r, err)
	}
}

// handleListAndWatchError passes an error returned by ListAndWatch to the
// watch error handler, or to DefaultWatchErrorHandler when none is set.
func (r *Reflector) handleListAndWatchError(ctx context.Context, err error) {
	r.stats.recordError(err, r.clock.Now())
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
