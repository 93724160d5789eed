package cache

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
// wants to keep the state before takes a copy (reflectorState is a value).
func (s *reflectorState) step(in *reflectorInput, out []reflectorAction) []reflectorAction {
	if in.kind == inStop {
		return s.stop(out)
	}
	switch s.phase {
	case phaseIdle, phaseStopped:
		// A Reflector stopped by the caller's context may be run again
		// with another.
		if in.kind == inStart {
			return s.startCycle(in.now, out)
		}
	case phaseResuming:
		switch in.kind {
		case inSnapshotLoaded:
			s.freshList = true
			s.listStart = in.now
			s.events = in.count
			out = s.syncAt(originSnapshot, in.rv, out)
			return out
		case inSnapshotMissing:
			if in.err != nil {
				out = append(out,
					note(noteLogSnapshotRejected, in.err),
					note(noteReport, in.err))
			}
			return s.fetch(in.now, out)
		}
	case phaseStreamOpening:
		switch in.kind {
		case inOpened:
			s.phase = phaseStreaming
			s.openedStream()
			return out
		case inOpenFailed:
			return s.streamFailed(in.err, in.now, out)
		}
	case phaseStreaming:
		return s.stepStreaming(in, out)
	case phaseListing:
		switch in.kind {
		case inListed:
			return s.listed(in, out)
		case inListFailed:
			return s.listFailed(in.err, out)
		}
	case phaseSyncing:
		switch in.kind {
		case inSynced:
			return s.synced(in, out)
		case inSyncFailed:
			return s.syncFailed(in.err, in.now, out)
		}
	case phaseWatchOpening:
		switch in.kind {
		case inOpened:
			s.phase = phaseWatching
			out = s.openedWatch(out)
			return out
		case inOpenFailed:
			if isWatchErrorRetriable(in.err) {
				out = append(out,
					note(noteLogWatchOpenBackoff, in.err),
					note(noteReport, in.err),
					reflectorAction{kind: actBackoff, err: in.err})
				s.phase, s.then = phaseBackoff, phaseWatchOpening
				return out
			}
			out = append(out, reflectorAction{kind: actNote, note: noteNextList, reason: relistIdxWatchError})
			return s.endCycle(in.err, out)
		}
	case phaseWatching:
		return s.stepWatching(in, out)
	case phaseBackoff:
		if in.kind == inBackoffDone {
			if s.then == phaseStreamOpening {
				return s.openStream(in.now, out)
			}
			return s.openWatch(in.now, out)
		}
	}
	out = append(out, reflectorAction{kind: actNote, note: noteLogUnexpectedInput, phase: s.phase, input: in.kind})
	return out
}

func note(n reflectorNote, err error) reflectorAction {
	return reflectorAction{kind: actNote, note: n, err: err}
}

// startCycle begins a cycle: from the snapshot when one is pending, else
// with a streaming list or a LIST.
func (s *reflectorState) startCycle(now time.Time, out []reflectorAction) []reflectorAction {
	s.watchedBefore = false
	s.internalStart, s.internalLatest = time.Time{}, time.Time{}
	if s.resumePending {
		s.resumePending = false
		s.phase = phaseResuming
		out = append(out, reflectorAction{kind: actResume})
		return out
	}
	return s.fetch(now, out)
}

// fetch gets the state from the server: by streaming list when on, else by
// LIST.
func (s *reflectorState) fetch(now time.Time, out []reflectorAction) []reflectorAction {
	if s.cfg.streaming {
		return s.openStream(now, out)
	}
	return s.list(now, out)
}

// list starts a LIST.
func (s *reflectorState) list(now time.Time, out []reflectorAction) []reflectorAction {
	s.phase = phaseListing
	s.listStart = now
	s.listRV = s.relistRV()
	s.listPage = s.listPageSize(s.listRV)
	s.listRetried = false
	out = append(out,
		reflectorAction{kind: actNote, note: noteListStarted},
		reflectorAction{kind: actList, rv: s.listRV, pageSize: s.listPage, relist: s.lastSyncRV != "", fresh: s.freshList})
	return out
}

// openStream requests a streaming list.
func (s *reflectorState) openStream(now time.Time, out []reflectorAction) []reflectorAction {
	s.phase = phaseStreamOpening
	s.listStart, s.watchStart = now, now
	out = append(out,
		reflectorAction{kind: actNote, note: noteListStarted},
		reflectorAction{kind: actStream, rv: s.streamRVToAsk(), relist: s.lastSyncRV != "", fresh: s.freshList})
	return out
}

// openedStream starts the bookkeeping of a stream just opened.
func (s *reflectorState) openedStream() {
	s.lastArrival = time.Time{}
	s.events, s.streamRV = 0, ""
	s.propagateRV, s.pastInitialAdds, s.idleArmed = false, false, false
}

// openWatch requests a watch from the last resourceVersion. From "" or "0"
// the server first sends synthetic ADDED events in no particular
// resourceVersion order: their resourceVersions only count once they are
// over.
func (s *reflectorState) openWatch(now time.Time, out []reflectorAction) []reflectorAction {
	s.phase = phaseWatchOpening
	s.watchStart = now
	rv := s.lastSyncRV
	s.propagateRV = rv != "" && rv != "0"
	out = append(out, reflectorAction{kind: actWatch, rv: rv})
	return out
}

// openedWatch starts the bookkeeping of a watch just opened (or of the watch
// a streaming list continues into).
func (s *reflectorState) openedWatch(out []reflectorAction) []reflectorAction {
	out = append(out, reflectorAction{kind: actNote, note: noteWatchStarted, restart: s.watchedBefore})
	s.watchedBefore = true
	s.lastArrival = time.Time{}
	s.events = 0
	s.pastInitialAdds, s.idleArmed = false, false
	return out
}

// stop ends everything: the open stream or watch is stopped and the cycle
// ends without error.
func (s *reflectorState) stop(out []reflectorAction) []reflectorAction {
	switch s.phase {
	case phaseStreaming, phaseWatching:
		out = append(out, reflectorAction{kind: actStopWatch})
	case phaseSyncing:
		if s.syncing == originStream {
			out = append(out, reflectorAction{kind: actStopWatch})
		}
	}
	if s.phase != phaseIdle && s.phase != phaseStopped {
		out = append(out, reflectorAction{kind: actEndCycle})
	}
	s.phase = phaseStopped
	return out
}

// endCycle ends the cycle with err (nil: Run relists after its backoff).
func (s *reflectorState) endCycle(err error, out []reflectorAction) []reflectorAction {
	s.phase = phaseIdle
	out = append(out, reflectorAction{kind: actEndCycle, err: err})
	return out
}

// listed handles the last page of a LIST.
func (s *reflectorState) listed(in *reflectorInput, out []reflectorAction) []reflectorAction {
	if s.listRV == "0" && in.paged {
		s.pagedSource = true
	}
	s.rvUnavailable = false
	out = s.syncAt(originList, in.rv, out)
	return out
}

// syncAt hands a complete list (from origin) to the store at rv. rv is
// published first: the store may process the list, and an informer report
// synced, before the hand-over returns, and a caller that waited for that
// must read the resourceVersion its cache holds. The previous one is kept,
// to be restored should the store refuse the list.
func (s *reflectorState) syncAt(origin listOrigin, rv string, out []reflectorAction) []reflectorAction {
	s.phase, s.syncing = phaseSyncing, origin
	s.previousRV, s.lastSyncRV = s.lastSyncRV, rv
	return append(out,
		reflectorAction{kind: actPublishRV, rv: rv},
		reflectorAction{kind: actSync, rv: rv, origin: origin})
}

// listFailed handles a failed LIST: one retry at "" when the server refused
// the resourceVersion (expired or too new), so that the Reflector makes
// progress; otherwise the cycle ends with the error.
func (s *reflectorState) listFailed(err error, out []reflectorAction) []reflectorAction {
	if !s.listRetried && (isExpiredError(err) || isTooLargeResourceVersionError(err)) {
		s.rvUnavailable = true
		s.listRetried = true
		if isTooLargeResourceVersionError(err) {
			s.freshList = true
		}
		out = append(out, reflectorAction{kind: actList, rv: s.relistRV(), pageSize: s.listPage, relist: s.lastSyncRV != "", retry: true, fresh: s.freshList})
		return out
	}
	var refused *listSinkError
	if !errors.As(err, &refused) {
		err = fmt.Errorf("failed to list %v: %w", s.cfg.typeDescription, err)
	}
	return s.endCycle(err, out)
}

// synced handles a list the store took: the cycle goes on watching.
func (s *reflectorState) synced(in *reflectorInput, out []reflectorAction) []reflectorAction {
	switch s.syncing {
	case originSnapshot:
		out = append(out, reflectorAction{kind: actNote, note: noteLogResumed, rv: s.lastSyncRV, count: s.events})
	default:
		s.freshList = false
		out = append(out, reflectorAction{kind: actNote, note: noteListDone, count: in.count, dur: in.now.Sub(s.listStart)})
	}
	out = append(out, reflectorAction{kind: actNote, note: noteLogCachesPopulated})
	if s.syncing == originStream {
		// The stream goes on as the cycle's watch.
		s.phase = phaseWatching
		s.propagateRV = true
		s.watchStart = in.now
		out = s.openedWatch(out)
		return out
	}
	return s.openWatch(in.now, out)
}

// syncFailed handles a list the store refused: the previous resourceVersion
// is restored; after a snapshot or a streaming list the cycle lists, after a
// LIST it ends with the error.
func (s *reflectorState) syncFailed(err error, now time.Time, out []reflectorAction) []reflectorAction {
	s.lastSyncRV = s.previousRV
	out = append(out, reflectorAction{kind: actPublishRV, rv: s.lastSyncRV})
	switch s.syncing {
	case originSnapshot:
		out = append(out, note(noteLogSnapshotRefused, err))
		return s.fetch(now, out)
	case originStream:
		// As any other failure of a streaming list, this cycle lists
		// instead.
		out = append(out, reflectorAction{kind: actStopWatch})
		return s.fallBack(fmt.Errorf("unable to sync watch-list result: %w", err), now, out)
	}
	return s.endCycle(fmt.Errorf("unable to sync list result: %w", err), out)
}

// stepStreaming handles what happens to an open streaming list.
func (s *reflectorState) stepStreaming(in *reflectorInput, out []reflectorAction) []reflectorAction {
	switch in.kind {
	case inEvent:
		s.lastArrival = in.now
		out = append(out, reflectorAction{kind: actEventApplied})
		if in.eventType != watch.Added {
			s.pastInitialAdds = true
		}
		if in.rv != "" && s.pastInitialAdds {
			s.streamRV = in.rv
		}
		s.events++
		if in.initialEventsEnd {
			out = append(out, reflectorAction{kind: actNote, note: noteLogStreamComplete, count: s.events, dur: in.now.Sub(s.watchStart)})
			s.rvUnavailable = false
			out = s.syncAt(originStream, s.streamRV, out)
		}
		return out
	case inBadData:
		s.lastArrival = in.now
		out = append(out, reflectorAction{kind: actNote, note: noteBadData, bad: in.bad})
		return out
	case inErrorEvent:
		s.lastArrival = in.now
		out = appendUndecodable(in.err, out)
		out = append(out, reflectorAction{kind: actStopWatch})
		return s.streamFailed(in.err, in.now, out)
	case inClosed:
		out = append(out, reflectorAction{kind: actStopWatch})
		if s.events == 0 && in.now.Sub(s.watchStart) < reflectorShortWatch {
			return s.streamFailed(&VeryShortWatchError{Name: s.cfg.name}, in.now, out)
		}
		// Closed by the server before the initial events were complete (a
		// watch timeout, a restarted server): opened again at once from
		// the same resourceVersion, as client-go does.
		out = append(out, reflectorAction{kind: actNote, note: noteLogStreamReopen, count: s.events})
		return s.openStream(in.now, out)
	case inStreamSilent:
		out = append(out, reflectorAction{kind: actStopWatch})
		return s.fallBack(&reflectorIncompleteStreamError{name: s.cfg.name, events: s.events, silentFor: in.now.Sub(s.lastArrivalOrStart())}, in.now, out)
	case inStreamWarnTick:
		a := reflectorAction{kind: actNote, note: noteLogInitialEventsPending, since: in.now.Sub(s.watchStart)}
		if !s.lastArrival.IsZero() {
			a.lastArrival = in.now.Sub(s.lastArrival)
			if a.lastArrival < reflectorInitialEventsWarnInterval {
				return out
			}
		}
		out = append(out, a)
		return out
	}
	out = append(out, reflectorAction{kind: actNote, note: noteLogUnexpectedInput, phase: s.phase, input: in.kind})
	return out
}

func (s *reflectorState) lastArrivalOrStart() time.Time {
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
func (s *reflectorState) streamFailed(err error, now time.Time, out []reflectorAction) []reflectorAction {
	switch {
	case isWatchErrorRetriable(err):
		out = append(out,
			note(noteLogStreamBackoff, err),
			note(noteReport, err),
			reflectorAction{kind: actBackoff, err: err})
		s.phase, s.then = phaseBackoff, phaseStreamOpening
		return out
	case isExpiredError(err) || isTooLargeResourceVersionError(err):
		out = append(out,
			note(noteLogStreamLatest, err),
			reflectorAction{kind: actNote, note: noteNextList, reason: relistIdxExpired})
		s.rvUnavailable = true
		if isTooLargeResourceVersionError(err) {
			s.freshList = true
		}
		return s.openStream(now, out)
	}
	var incomplete *reflectorIncompleteStreamError
	if !errors.As(err, &incomplete) && s.phase == phaseStreaming {
		err = &reflectorIncompleteStreamError{name: s.cfg.name, events: s.events, err: err}
	}
	return s.fallBack(err, now, out)
}

// fallBack makes this cycle LIST after a streaming list failed. As in
// client-go, the LIST is the answer to that failure: the watch error
// handler does not hear of it, and the next cycle streams again.
func (s *reflectorState) fallBack(err error, now time.Time, out []reflectorAction) []reflectorAction {
	out = append(out,
		note(noteLogStreamFallback, err),
		reflectorAction{kind: actNote, note: noteNextList, reason: relistIdxStreamFallback})
	return s.list(now, out)
}

// stepWatching handles what happens to an open watch.
func (s *reflectorState) stepWatching(in *reflectorInput, out []reflectorAction) []reflectorAction {
	switch in.kind {
	case inEvent:
		s.lastArrival = in.now
		if in.eventType != watch.Added {
			s.pastInitialAdds = true
		}
		// One action per event, the hot path: the store's resourceVersion
		// moves with it unless it is empty or one of the synthetic initial
		// ADDED events of a watch from "" or "0".
		applied := reflectorAction{kind: actEventApplied}
		if in.rv != "" && (s.propagateRV || s.pastInitialAdds) {
			s.lastSyncRV = in.rv
			applied.rv = in.rv
		}
		out = append(out, applied)
		s.events++
		if !s.idleArmed && s.cfg.idleTimeout > 0 && in.eventType == watch.Bookmark && !in.initialEventsEnd {
			// A periodic bookmark shows that the server sends them on this
			// watch, so silence from now on means a stuck stream; the
			// bookmark that ends a streaming list's initial events is sent
			// once whatever the server does later and does not count.
			s.idleArmed = true
			out = append(out, reflectorAction{kind: actArmIdle})
		}
		return out
	case inBadData:
		s.lastArrival = in.now
		out = append(out, reflectorAction{kind: actNote, note: noteBadData, bad: in.bad})
		return out
	case inErrorEvent, inResyncFailed:
		if in.kind == inErrorEvent {
			out = appendUndecodable(in.err, out)
		}
		out = append(out, reflectorAction{kind: actStopWatch})
		return s.watchEnded(in.err, in.now, out)
	case inClosed:
		out = append(out, reflectorAction{kind: actStopWatch})
		dur := in.now.Sub(s.watchStart)
		short := s.events == 0 && dur < reflectorShortWatch
		out = append(out, reflectorAction{kind: actNote, note: noteWatchEnded, dur: dur, count: s.events, short: short})
		if short {
			return s.watchEnded(&VeryShortWatchError{Name: s.cfg.name}, in.now, out)
		}
		out = append(out, reflectorAction{kind: actNote, note: noteLogWatchClose, count: s.events})
		return s.watchEnded(nil, in.now, out)
	case inIdleTimeout:
		out = append(out,
			reflectorAction{kind: actStopWatch},
			reflectorAction{kind: actNote, note: noteWatchEnded, dur: in.now.Sub(s.watchStart), count: s.events})
		return s.watchEnded(&WatchIdleTimeoutError{Name: s.cfg.name, Timeout: s.cfg.idleTimeout, ResourceVersion: s.lastSyncRV}, in.now, out)
	}
	out = append(out, reflectorAction{kind: actNote, note: noteLogUnexpectedInput, phase: s.phase, input: in.kind})
	return out
}

// watchEnded decides what follows a watch that ended with err (nil: closed
// normally): open it again from the last resourceVersion, at once or after a
// backoff, or end the cycle so that Run relists.
func (s *reflectorState) watchEnded(err error, now time.Time, out []reflectorAction) []reflectorAction {
	internal := apierrors.IsInternalError(err)
	if internal {
		if s.internalStart.IsZero() || now.Sub(s.internalLatest) >= reflectorInternalErrorQuietPeriod {
			s.internalStart = now
		}
		s.internalLatest = now
	}
	switch {
	case err == nil:
		return s.openWatch(now, out)
	case isExpiredError(err):
		out = append(out, note(noteLogWatchExpired, err))
	case apierrors.IsTooManyRequests(err):
		out = append(out,
			note(noteLogWatchBackoff, err),
			note(noteReport, err),
			reflectorAction{kind: actBackoff, err: err})
		s.phase, s.then = phaseBackoff, phaseWatchOpening
		return out
	case internal && s.internalRetryAllowed(now):
		out = append(out, note(noteLogWatchResume, err), note(noteReport, err))
		return s.openWatch(now, out)
	case isWatchIdleTimeout(err):
		out = append(out, note(noteLogWatchResume, err), note(noteReport, err))
		return s.openWatch(now, out)
	default:
		out = append(out, note(noteLogWatchEndedWithError, err))
	}
	out = append(out, note(noteReport, err), note(noteRelistAfter, err))
	return s.endCycle(nil, out)
}

// internalRetryAllowed reports whether a watch that ended with an internal
// error may be reopened without a relist: the run of such errors (which ends
// after a quiet minute) is younger than maxInternalRetry. A run that is too
// old is forgotten, so the next such error starts a new one.
func (s *reflectorState) internalRetryAllowed(now time.Time) bool {
	if s.cfg.maxInternalRetry <= 0 {
		return false
	}
	if !s.internalStart.IsZero() && now.Sub(s.internalStart) <= s.cfg.maxInternalRetry {
		return true
	}
	s.internalStart, s.internalLatest = time.Time{}, time.Time{}
	return false
}

// appendUndecodable counts as bad data the error of an ERROR event the
// client made for a frame it could not decode (see isUndecodableFrame).
func appendUndecodable(err error, out []reflectorAction) []reflectorAction {
	if isUndecodableFrame(err) {
		out = append(out, reflectorAction{kind: actNote, note: noteBadData, bad: &reflectorBadEvent{kind: badDataUndecodable}})
	}
	return out
}
