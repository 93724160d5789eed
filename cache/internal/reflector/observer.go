package reflector

import (
	"context"
	"fmt"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// observe is the Reflector's observer: it turns the notes of the core (see
// internal/reflector) into metrics, diagnostics counters (Stats), log
// lines and calls of the watch error handler, so that each observation is
// made in one place. now is the time of the input the note answers.
//
// The log lines keep client-go's messages and keys. They are logged one
// call level up (logr's call depth), naming the driver's line that hands the
// note over rather than this function.
func (e *Engine) observe(ctx context.Context, a *Action, now time.Time) {
	switch a.Note {
	case NoteListStarted:
		e.metrics.ListStarted()
		e.stats.ListStarting()
	case NoteListDone:
		e.stats.ListSucceeded(now)
		e.metrics.ListDone(a.Dur.Seconds(), a.Count)
	case NoteWatchStarted:
		e.metrics.WatchStarted()
		if a.Restart {
			e.stats.WatchRestarted()
		}
	case NoteWatchEnded:
		e.metrics.WatchEnded(a.Dur.Seconds(), a.Count, a.Short)
	case NoteNextList:
		e.stats.NextList(a.Reason)
	case NoteRelistAfter:
		e.stats.RelistAfter(a.Err)
	case NoteReport:
		if e.report != nil {
			e.report(ctx, a.Err)
		}
	case NoteBadData:
		e.badData.counts[a.Bad.Kind].Add(1)
		if a.Bad.Msg != "" {
			utilruntime.HandleErrorWithContext(klog.NewContext(ctx, e.loggerFor(ctx).WithCallDepth(1)), a.Bad.Err, a.Bad.Msg, a.Bad.KeysAndValues...)
		}
	default:
		e.logNote(ctx, a)
	}
}

// logNote logs the line of a note.
func (e *Engine) logNote(ctx context.Context, a *Action) {
	logger := e.loggerFor(ctx).WithCallDepth(2)
	switch a.Note {
	case NoteLogCachesPopulated:
		logger.V(2).Info("Caches populated", "type", e.typeDescription, "reflector", e.name)
	case NoteLogStreamFallback:
		logger.V(4).Info("Data couldn't be fetched in watchlist mode. Falling back to regular list. This is expected if watchlist is not supported or disabled in kube-apiserver.",
			"reflector", e.name, "err", a.Err)
	case NoteLogStreamReopen:
		logger.V(2).Info("Streaming list closed before the end of its initial events; opening it again",
			"reflector", e.name, "type", e.typeDescription, "events", a.Count)
	case NoteLogStreamBackoff:
		logger.V(2).Info("watch-list failed - backing off", "reflector", e.name, "type", e.typeDescription, "err", a.Err)
	case NoteLogStreamLatest:
		logger.V(4).Info("watch-list resource version unavailable - streaming the latest data", "reflector", e.name, "type", e.typeDescription, "err", a.Err)
	case NoteLogStreamComplete:
		logger.V(4).Info("Exiting watch because received the bookmark that marks the end of initial events stream",
			"reflector", e.name, "totalItems", a.Count, "duration", a.Dur)
	case NoteLogInitialEventsPending:
		var detail string
		if a.LastArrival == 0 {
			detail = fmt.Sprintf("%s: awaiting required bookmark event for initial events stream, no events received for %v", e.name, a.Since)
		} else {
			detail = fmt.Sprintf("%s: hasn't received required bookmark event marking the end of initial events stream, received last event %v ago", e.name, a.LastArrival)
		}
		logger.Info("Warning: event bookmark expired", "reflector", e.name, "err", detail)
	case NoteLogWatchOpenBackoff:
		logger.V(4).Info("Watch failed - backing off", "reflector", e.name, "type", e.typeDescription, "err", a.Err)
	case NoteLogWatchClose:
		logger.V(4).Info("Watch close", "reflector", e.name, "type", e.typeDescription, "totalItems", a.Count)
	case NoteLogWatchResume:
		logger.V(2).Info("Resuming watch", "reflector", e.name, "type", e.typeDescription, "err", a.Err)
	case NoteLogWatchBackoff:
		logger.V(2).Info("Watch ended - backing off before resuming", "reflector", e.name, "type", e.typeDescription, "err", a.Err)
	case NoteLogWatchExpired:
		logger.V(4).Info("Watch closed", "reflector", e.name, "type", e.typeDescription, "err", a.Err)
	case NoteLogWatchEndedWithError:
		logger.Info("Warning: watch ended with error", "reflector", e.name, "type", e.typeDescription, "err", a.Err)
	case NoteLogSnapshotRejected:
		utilruntime.HandleErrorWithContext(klog.NewContext(ctx, logger), a.Err, "Informer snapshot rejected; listing instead", "reflector", e.name, "type", e.typeDescription)
	case NoteLogSnapshotRefused:
		utilruntime.HandleErrorWithContext(klog.NewContext(ctx, logger), a.Err, "Snapshot could not be given to the store; listing instead", "reflector", e.name)
	case NoteLogResumed:
		logger.V(2).Info("Resuming from a snapshot instead of listing", "reflector", e.name, "type", e.typeDescription,
			"objects", a.Count, "resourceVersion", a.RV)
	case NoteLogUnexpectedInput:
		utilruntime.HandleErrorWithContext(klog.NewContext(ctx, logger), nil, "Reflector ignored an input its phase does not expect",
			"reflector", e.name, "phase", a.Phase.String(), "input", a.Input.String())
	}
}
