package reflector

import (
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
)

// step moves s to the state after in and appends the actions it calls for
// to out. It depends on nothing but s and in (no clock, no I/O), so the same
// state and input always give the same state and actions; a caller that
// wants to keep the state before takes a copy (State is a value).
func (s *State) Step(in *Input, out []Action) []Action {
	if in.Kind == InStop {
		return s.stop(out)
	}
	switch s.phase {
	case PhaseIdle, PhaseStopped:
		// A Reflector stopped by the caller's context may be run again
		// with another.
		if in.Kind == InStart {
			return s.startCycle(in.Now, out)
		}
	case PhaseResuming:
		switch in.Kind {
		case InSnapshotLoaded:
			s.freshList = true
			s.listStart = in.Now
			s.events = in.Count
			out = s.syncAt(OriginSnapshot, in.RV, out)
			return out
		case InSnapshotMissing:
			if in.Err != nil {
				out = append(out,
					note(NoteLogSnapshotRejected, in.Err),
					note(NoteReport, in.Err))
			}
			return s.fetch(in.Now, out)
		}
	case PhaseStreamOpening:
		switch in.Kind {
		case InOpened:
			s.phase = PhaseStreaming
			s.openedStream()
			return out
		case InOpenFailed:
			return s.streamFailed(in.Err, in.Now, out)
		}
	case PhaseStreaming:
		return s.stepStreaming(in, out)
	case PhaseListing:
		switch in.Kind {
		case InListed:
			return s.listed(in, out)
		case InListFailed:
			return s.listFailed(in.Err, out)
		}
	case PhaseSyncing:
		switch in.Kind {
		case InSynced:
			return s.synced(in, out)
		case InSyncFailed:
			return s.syncFailed(in.Err, in.Now, out)
		}
	case PhaseWatchOpening:
		switch in.Kind {
		case InOpened:
			s.phase = PhaseWatching
			out = s.openedWatch(out)
			return out
		case InOpenFailed:
			if isWatchErrorRetriable(in.Err) {
				out = append(out,
					note(NoteLogWatchOpenBackoff, in.Err),
					note(NoteReport, in.Err),
					Action{Kind: ActBackoff, Err: in.Err})
				s.phase, s.then = PhaseBackoff, PhaseWatchOpening
				return out
			}
			out = append(out, Action{Kind: ActNote, Note: NoteNextList, Reason: ListReasonWatchError})
			return s.endCycle(in.Err, out)
		}
	case PhaseWatching:
		return s.stepWatching(in, out)
	case PhaseBackoff:
		if in.Kind == InBackoffDone {
			if s.then == PhaseStreamOpening {
				return s.openStream(in.Now, out)
			}
			return s.openWatch(in.Now, out)
		}
	}
	out = append(out, Action{Kind: ActNote, Note: NoteLogUnexpectedInput, Phase: s.phase, Input: in.Kind})
	return out
}

func note(n Note, err error) Action {
	return Action{Kind: ActNote, Note: n, Err: err}
}

// startCycle begins a cycle: from the snapshot when one is pending, else
// with a streaming list or a LIST.
func (s *State) startCycle(now time.Time, out []Action) []Action {
	s.watchedBefore = false
	s.internalStart, s.internalLatest = time.Time{}, time.Time{}
	if s.resumePending {
		s.resumePending = false
		s.phase = PhaseResuming
		out = append(out, Action{Kind: ActResume})
		return out
	}
	return s.fetch(now, out)
}

// fetch gets the state from the server: by streaming list when on, else by
// LIST.
func (s *State) fetch(now time.Time, out []Action) []Action {
	if s.cfg.Streaming {
		return s.openStream(now, out)
	}
	return s.list(now, out)
}

// list starts a LIST.
func (s *State) list(now time.Time, out []Action) []Action {
	s.phase = PhaseListing
	s.listStart = now
	s.listRV = s.relistRV()
	s.listPage = s.listPageSize(s.listRV)
	s.listRetried = false
	out = append(out,
		Action{Kind: ActNote, Note: NoteListStarted},
		Action{Kind: ActList, RV: s.listRV, PageSize: s.listPage, Relist: s.lastSyncRV != "", Fresh: s.freshList})
	return out
}

// openStream requests a streaming list.
func (s *State) openStream(now time.Time, out []Action) []Action {
	s.phase = PhaseStreamOpening
	s.listStart, s.watchStart = now, now
	out = append(out,
		Action{Kind: ActNote, Note: NoteListStarted},
		Action{Kind: ActStream, RV: s.streamRVToAsk(), Relist: s.lastSyncRV != "", Fresh: s.freshList})
	return out
}

// openedStream starts the bookkeeping of a stream just opened.
func (s *State) openedStream() {
	s.lastArrival = time.Time{}
	s.events, s.streamRV = 0, ""
	s.propagateRV, s.pastInitialAdds, s.idleArmed = false, false, false
}

// openWatch requests a watch from the last resourceVersion. From "" or "0"
// the server first sends synthetic ADDED events in no particular
// resourceVersion order: their resourceVersions only count once they are
// over.
func (s *State) openWatch(now time.Time, out []Action) []Action {
	s.phase = PhaseWatchOpening
	s.watchStart = now
	rv := s.lastSyncRV
	s.propagateRV = rv != "" && rv != "0"
	out = append(out, Action{Kind: ActWatch, RV: rv})
	return out
}

// openedWatch starts the bookkeeping of a watch just opened (or of the watch
// a streaming list continues into).
func (s *State) openedWatch(out []Action) []Action {
	out = append(out, Action{Kind: ActNote, Note: NoteWatchStarted, Restart: s.watchedBefore})
	s.watchedBefore = true
	s.lastArrival = time.Time{}
	s.events = 0
	s.pastInitialAdds, s.idleArmed = false, false
	return out
}

// stop ends everything: the open stream or watch is stopped and the cycle
// ends without error.
func (s *State) stop(out []Action) []Action {
	switch s.phase {
	case PhaseStreaming, PhaseWatching:
		out = append(out, Action{Kind: ActStopWatch})
	case PhaseSyncing:
		if s.syncing == OriginStream {
			out = append(out, Action{Kind: ActStopWatch})
		}
	}
	if s.phase != PhaseIdle && s.phase != PhaseStopped {
		out = append(out, Action{Kind: ActEndCycle})
	}
	s.phase = PhaseStopped
	return out
}

// endCycle ends the cycle with err (nil: Run relists after its backoff).
func (s *State) endCycle(err error, out []Action) []Action {
	s.phase = PhaseIdle
	out = append(out, Action{Kind: ActEndCycle, Err: err})
	return out
}

// listed handles the last page of a LIST.
func (s *State) listed(in *Input, out []Action) []Action {
	if s.listRV == "0" && in.Paged {
		s.pagedSource = true
	}
	s.rvUnavailable = false
	out = s.syncAt(OriginList, in.RV, out)
	return out
}

// syncAt hands a complete list (from origin) to the store at rv. rv is
// published first: the store may process the list, and an informer report
// synced, before the hand-over returns, and a caller that waited for that
// must read the resourceVersion its cache holds. The previous one is kept,
// to be restored should the store refuse the list.
func (s *State) syncAt(origin Origin, rv string, out []Action) []Action {
	s.phase, s.syncing = PhaseSyncing, origin
	s.previousRV, s.lastSyncRV = s.lastSyncRV, rv
	return append(out,
		Action{Kind: ActPublishRV, RV: rv},
		Action{Kind: ActSync, RV: rv, Origin: origin})
}

// listFailed handles a failed LIST: one retry at "" when the server refused
// the resourceVersion (expired or too new), so that the Reflector makes
// progress; otherwise the cycle ends with the error.
func (s *State) listFailed(err error, out []Action) []Action {
	if !s.listRetried && (IsExpired(err) || IsTooLargeResourceVersion(err)) {
		s.rvUnavailable = true
		s.listRetried = true
		if IsTooLargeResourceVersion(err) {
			s.freshList = true
		}
		out = append(out, Action{Kind: ActList, RV: s.relistRV(), PageSize: s.listPage, Relist: s.lastSyncRV != "", Retry: true, Fresh: s.freshList})
		return out
	}
	var refused *SinkError
	if !errors.As(err, &refused) {
		err = fmt.Errorf("failed to list %v: %w", s.cfg.TypeDescription, err)
	}
	return s.endCycle(err, out)
}

// synced handles a list the store took: the cycle goes on watching.
func (s *State) synced(in *Input, out []Action) []Action {
	switch s.syncing {
	case OriginSnapshot:
		out = append(out, Action{Kind: ActNote, Note: NoteLogResumed, RV: s.lastSyncRV, Count: s.events})
	default:
		s.freshList = false
		out = append(out, Action{Kind: ActNote, Note: NoteListDone, Count: in.Count, Dur: in.Now.Sub(s.listStart)})
	}
	out = append(out, Action{Kind: ActNote, Note: NoteLogCachesPopulated})
	if s.syncing == OriginStream {
		// The stream goes on as the cycle's watch.
		s.phase = PhaseWatching
		s.propagateRV = true
		s.watchStart = in.Now
		out = s.openedWatch(out)
		return out
	}
	return s.openWatch(in.Now, out)
}

// syncFailed handles a list the store refused: the previous resourceVersion
// is restored; after a snapshot or a streaming list the cycle lists, after a
// LIST it ends with the error.
func (s *State) syncFailed(err error, now time.Time, out []Action) []Action {
	s.lastSyncRV = s.previousRV
	out = append(out, Action{Kind: ActPublishRV, RV: s.lastSyncRV})
	switch s.syncing {
	case OriginSnapshot:
		out = append(out, note(NoteLogSnapshotRefused, err))
		return s.fetch(now, out)
	case OriginStream:
		// As any other failure of a streaming list, this cycle lists
		// instead.
		out = append(out, Action{Kind: ActStopWatch})
		return s.fallBack(fmt.Errorf("unable to sync watch-list result: %w", err), now, out)
	}
	return s.endCycle(fmt.Errorf("unable to sync list result: %w", err), out)
}

// stepStreaming handles what happens to an open streaming list.
func (s *State) stepStreaming(in *Input, out []Action) []Action {
	switch in.Kind {
	case InEvent:
		s.lastArrival = in.Now
		out = append(out, Action{Kind: ActEventApplied})
		if in.EventType != watch.Added {
			s.pastInitialAdds = true
		}
		if in.RV != "" && s.pastInitialAdds {
			s.streamRV = in.RV
		}
		s.events++
		if in.InitialEventsEnd {
			out = append(out, Action{Kind: ActNote, Note: NoteLogStreamComplete, Count: s.events, Dur: in.Now.Sub(s.watchStart)})
			s.rvUnavailable = false
			out = s.syncAt(OriginStream, s.streamRV, out)
		}
		return out
	case InBadData:
		s.lastArrival = in.Now
		out = append(out, Action{Kind: ActNote, Note: NoteBadData, Bad: in.Bad})
		return out
	case InErrorEvent:
		s.lastArrival = in.Now
		out = appendUndecodable(in.Err, out)
		out = append(out, Action{Kind: ActStopWatch})
		return s.streamFailed(in.Err, in.Now, out)
	case InClosed:
		out = append(out, Action{Kind: ActStopWatch})
		if s.events == 0 && in.Now.Sub(s.watchStart) < ShortWatch {
			return s.streamFailed(&ShortWatchError{Name: s.cfg.Name}, in.Now, out)
		}
		// Closed by the server before the initial events were complete (a
		// watch timeout, a restarted server): opened again at once from
		// the same resourceVersion, as client-go does.
		out = append(out, Action{Kind: ActNote, Note: NoteLogStreamReopen, Count: s.events})
		return s.openStream(in.Now, out)
	case InStreamSilent:
		out = append(out, Action{Kind: ActStopWatch})
		return s.fallBack(&IncompleteStreamError{Name: s.cfg.Name, Events: s.events, SilentFor: in.Now.Sub(s.lastArrivalOrStart())}, in.Now, out)
	case InStreamWarnTick:
		a := Action{Kind: ActNote, Note: NoteLogInitialEventsPending, Since: in.Now.Sub(s.watchStart)}
		if !s.lastArrival.IsZero() {
			a.LastArrival = in.Now.Sub(s.lastArrival)
			if a.LastArrival < InitialEventsWarnInterval {
				return out
			}
		}
		out = append(out, a)
		return out
	}
	out = append(out, Action{Kind: ActNote, Note: NoteLogUnexpectedInput, Phase: s.phase, Input: in.Kind})
	return out
}

func (s *State) lastArrivalOrStart() time.Time {
	if s.lastArrival.IsZero() {
		return s.watchStart
	}
	return s.lastArrival
}

// streamFailed decides what a streaming list does after err, as client-go
// does: retry after a backoff (refused connection, 429), retry at once from
// the latest data (expired or too large resourceVersion), or fall back to
// LIST for this cycle. The watch error handler hears of a refused connection
// or a 429 (kinformer extension; a LIST would fail with them too), not of the
// rest, which a LIST also handles by itself.
func (s *State) streamFailed(err error, now time.Time, out []Action) []Action {
	switch {
	case isWatchErrorRetriable(err):
		out = append(out,
			note(NoteLogStreamBackoff, err),
			note(NoteReport, err),
			Action{Kind: ActBackoff, Err: err})
		s.phase, s.then = PhaseBackoff, PhaseStreamOpening
		return out
	case IsExpired(err) || IsTooLargeResourceVersion(err):
		out = append(out,
			note(NoteLogStreamLatest, err),
			Action{Kind: ActNote, Note: NoteNextList, Reason: ListReasonExpired})
		s.rvUnavailable = true
		if IsTooLargeResourceVersion(err) {
			s.freshList = true
		}
		return s.openStream(now, out)
	}
	var incomplete *IncompleteStreamError
	if !errors.As(err, &incomplete) && s.phase == PhaseStreaming {
		err = &IncompleteStreamError{Name: s.cfg.Name, Events: s.events, Err: err}
	}
	return s.fallBack(err, now, out)
}

// fallBack makes this cycle LIST after a streaming list failed. As in
// client-go, the LIST is the answer to that failure: the watch error
// handler does not hear of it, and the next cycle streams again.
func (s *State) fallBack(err error, now time.Time, out []Action) []Action {
	out = append(out,
		note(NoteLogStreamFallback, err),
		Action{Kind: ActNote, Note: NoteNextList, Reason: ListReasonStreamFallback})
	return s.list(now, out)
}

// stepWatching handles what happens to an open watch.
func (s *State) stepWatching(in *Input, out []Action) []Action {
	switch in.Kind {
	case InEvent:
		moveTo, arm := s.WatchEvent(in.Now, in.EventType, in.RV, in.InitialEventsEnd)
		out = append(out, Action{Kind: ActEventApplied, RV: moveTo})
		if arm {
			out = append(out, Action{Kind: ActArmIdle})
		}
		return out
	case InBadData:
		s.lastArrival = in.Now
		out = append(out, Action{Kind: ActNote, Note: NoteBadData, Bad: in.Bad})
		return out
	case InErrorEvent, InResyncFailed:
		if in.Kind == InErrorEvent {
			out = appendUndecodable(in.Err, out)
		}
		out = append(out, Action{Kind: ActStopWatch})
		return s.watchEnded(in.Err, in.Now, out)
	case InClosed:
		out = append(out, Action{Kind: ActStopWatch})
		dur := in.Now.Sub(s.watchStart)
		short := s.events == 0 && dur < ShortWatch
		out = append(out, Action{Kind: ActNote, Note: NoteWatchEnded, Dur: dur, Count: s.events, Short: short})
		if short {
			return s.watchEnded(&ShortWatchError{Name: s.cfg.Name}, in.Now, out)
		}
		out = append(out, Action{Kind: ActNote, Note: NoteLogWatchClose, Count: s.events})
		return s.watchEnded(nil, in.Now, out)
	case InIdleTimeout:
		out = append(out,
			Action{Kind: ActStopWatch},
			Action{Kind: ActNote, Note: NoteWatchEnded, Dur: in.Now.Sub(s.watchStart), Count: s.events})
		return s.watchEnded(&IdleTimeoutError{Name: s.cfg.Name, Timeout: s.cfg.IdleTimeout, ResourceVersion: s.lastSyncRV}, in.Now, out)
	}
	out = append(out, Action{Kind: ActNote, Note: NoteLogUnexpectedInput, Phase: s.phase, Input: in.Kind})
	return out
}

// WatchEvent is Step for an InEvent while the phase is PhaseWatching, the
// path every event of an open watch takes, without an Input and without the
// actions buffer. It moves s exactly as Step does and returns what Step's
// actions would say: moveTo is the RV of the ActEventApplied (the
// resourceVersion the store is now at; "" when it does not move), arm
// whether an ActArmIdle follows it. The caller checks the phase first: in
// any other phase, events go through Step.
func (s *State) WatchEvent(now time.Time, eventType watch.EventType, rv string, initialEventsEnd bool) (moveTo string, arm bool) {
	s.lastArrival = now
	if eventType != watch.Added {
		s.pastInitialAdds = true
	}
	// The store's resourceVersion moves with the event unless it is empty
	// or one of the synthetic initial ADDED events of a watch from "" or
	// "0".
	if rv != "" && (s.propagateRV || s.pastInitialAdds) {
		s.lastSyncRV = rv
		moveTo = rv
	}
	s.events++
	if !s.idleArmed && s.cfg.IdleTimeout > 0 && eventType == watch.Bookmark && !initialEventsEnd {
		// A periodic bookmark shows that the server sends them on this
		// watch, so silence from now on means a stuck stream; the
		// bookmark that ends a streaming list's initial events is sent
		// once whatever the server does later and does not count.
		s.idleArmed = true
		arm = true
	}
	return moveTo, arm
}

// watchEnded decides what follows a watch that ended with err (nil: closed
// normally): open it again from the last resourceVersion, at once or after a
// backoff, or end the cycle so that Run relists.
func (s *State) watchEnded(err error, now time.Time, out []Action) []Action {
	internal := apierrors.IsInternalError(err)
	if internal {
		if s.internalStart.IsZero() || now.Sub(s.internalLatest) >= InternalErrorQuietPeriod {
			s.internalStart = now
		}
		s.internalLatest = now
	}
	switch {
	case err == nil:
		return s.openWatch(now, out)
	case IsExpired(err):
		out = append(out, note(NoteLogWatchExpired, err))
	case apierrors.IsTooManyRequests(err):
		out = append(out,
			note(NoteLogWatchBackoff, err),
			note(NoteReport, err),
			Action{Kind: ActBackoff, Err: err})
		s.phase, s.then = PhaseBackoff, PhaseWatchOpening
		return out
	case internal && s.internalRetryAllowed(now):
		out = append(out, note(NoteLogWatchResume, err), note(NoteReport, err))
		return s.openWatch(now, out)
	case isIdleTimeout(err):
		out = append(out, note(NoteLogWatchResume, err), note(NoteReport, err))
		return s.openWatch(now, out)
	default:
		out = append(out, note(NoteLogWatchEndedWithError, err))
	}
	out = append(out, note(NoteReport, err), note(NoteRelistAfter, err))
	return s.endCycle(nil, out)
}

// internalRetryAllowed reports whether a watch that ended with an internal
// error may be reopened without a relist: the run of such errors (which ends
// after a quiet minute) is younger than maxInternalRetry. A run that is too
// old is forgotten, so the next such error starts a new one.
func (s *State) internalRetryAllowed(now time.Time) bool {
	if s.cfg.MaxInternalRetry <= 0 {
		return false
	}
	if !s.internalStart.IsZero() && now.Sub(s.internalStart) <= s.cfg.MaxInternalRetry {
		return true
	}
	s.internalStart, s.internalLatest = time.Time{}, time.Time{}
	return false
}

// appendUndecodable counts as bad data the error of an ERROR event the
// client made for a frame it could not decode (see isUndecodableFrame).
func appendUndecodable(err error, out []Action) []Action {
	if isUndecodableFrame(err) {
		out = append(out, Action{Kind: ActNote, Note: NoteBadData, Bad: &BadEvent{Kind: BadDataUndecodable}})
	}
	return out
}
