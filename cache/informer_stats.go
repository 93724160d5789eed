package cache

import (
	"sync"
	"sync/atomic"
	"time"
)

// RelistReason says why a Reflector made a list (a paged LIST or a streaming
// list). The values are stable: they are used as metric label values.
type RelistReason string

// The reasons a Reflector lists.
const (
	// RelistInitial is the first list of a Reflector.
	RelistInitial RelistReason = "initial"
	// RelistExpired follows a watch (or streaming list) that ended because
	// the resource version it resumed from is gone: 410 Gone / Expired,
	// typically after an etcd compaction, or one the server has not seen
	// yet.
	RelistExpired RelistReason = "expired"
	// RelistWatchError follows a watch that ended with an error other than
	// 410, or that could not be opened for a reason the Reflector does not
	// retry by itself (403, 404, ...).
	RelistWatchError RelistReason = "watch_error"
	// RelistShortWatch follows a watch that closed within a second without
	// an event (VeryShortWatchError).
	RelistShortWatch RelistReason = "short_watch"
	// RelistListError retries a list that failed (or a streaming list that
	// failed with a refused connection, 429 or an expired resource version,
	// or that the server closed before its end bookmark).
	RelistListError RelistReason = "list_error"
	// RelistStreamFallback is the LIST made after a streaming list that
	// failed or did not complete (see Reflector): it counts the fallbacks
	// from streaming lists to LIST, one per cycle that fell back.
	RelistStreamFallback RelistReason = "stream_fallback"
)

// relistReasons lists every RelistReason in the order of their indices in
// informerStats.lists.
var relistReasons = [...]RelistReason{RelistInitial, RelistExpired, RelistWatchError, RelistShortWatch, RelistListError, RelistStreamFallback}

// RelistReasons returns every RelistReason a Reflector reports, in a fixed
// order. The slice is new on every call.
func RelistReasons() []RelistReason {
	return append([]RelistReason(nil), relistReasons[:]...)
}

// Indices into informerStats.lists.
const (
	relistIdxInitial uint32 = iota
	relistIdxExpired
	relistIdxWatchError
	relistIdxShortWatch
	relistIdxListError
	relistIdxStreamFallback
)

// informerStats are the counters a Reflector and its informer keep for
// diagnostics (InformerStatus, the metrics adapter, sync errors). The hot
// path only does atomic adds and stores; nothing is allocated per event. A
// Reflector built alone has its own; a shared informer hands its own to the
// Reflector it runs, so they exist before Run and survive it.
type informerStats struct {
	// lists counts lists by reason (see relistIdx*); nextList is the
	// reason of the next list, set by whatever ends the current cycle.
	lists    [len(relistReasons)]atomic.Uint64
	nextList atomic.Uint32
	// watchRestarts counts watches reopened without a relist.
	watchRestarts atomic.Uint64
	// lastEvent is the time (UnixNano) of the last watch event or bookmark
	// received; 0 before the first.
	lastEvent atomic.Int64
	// lastList is the time (UnixNano) of the last successful list.
	lastList atomic.Int64
	// deltas counts the deltas the informer's processing loop applied.
	deltas atomic.Uint64
	// snapshotsSkipped counts the snapshots not written because the
	// objects are sensitive and no key was set, or because the cache was
	// not in one consistent state.
	snapshotsSkipped atomic.Uint64
	// transformRefused counts the objects the transform check
	// (SetTransformCheck) refused.
	transformRefused atomic.Uint64
	// started is the time (UnixNano) the informer started running; 0
	// before.
	started atomic.Int64
	// retryAfterUntil is the end (UnixNano) of the Reflector's last wait
	// that honoured a server's Retry-After; 0 before any.
	// retryAfterCapped counts the Retry-Afters longer than the maximum.
	retryAfterUntil  atomic.Int64
	retryAfterCapped atomic.Uint64
	// freshness tracks the confirmations of the cache's resourceVersion
	// (staleness.go); it tracks nothing unless built by
	// newInformerStatsFor.
	freshness freshness

	// errMu guards the fields below; errors are rare, so a mutex is fine.
	errMu     sync.Mutex
	lastErr   error
	lastErrAt time.Time
	// errSignal, when not nil, is closed at the next recorded error.
	errSignal chan struct{}
}

func newInformerStats() *informerStats {
	return &informerStats{}
}

// newInformerStatsFor returns the stats of an informer whose cache's
// watermark storeRV returns: they track the cache's staleness.
func newInformerStatsFor(storeRV func() string) *informerStats {
	s := &informerStats{}
	s.freshness.storeRV = storeRV
	return s
}

// listStarting counts a list under the reason set for it; until something
// says otherwise, the next list retries a failed one.
func (s *informerStats) listStarting() {
	idx := s.nextList.Swap(relistIdxListError)
	s.lists[idx].Add(1)
}

// listSucceeded records the time of a successful list.
func (s *informerStats) listSucceeded(now time.Time) {
	s.lastList.Store(now.UnixNano())
}

// setNextList sets the reason of the next list.
func (s *informerStats) setNextList(idx uint32) {
	s.nextList.Store(idx)
}

// watchEndedForRelist sets the reason of the list that follows a watch that
// ended with err.
func (s *informerStats) watchEndedForRelist(err error) {
	var short *VeryShortWatchError
	switch {
	case isExpiredError(err) || isTooLargeResourceVersionError(err):
		s.setNextList(relistIdxExpired)
	case asVeryShortWatch(err, &short):
		s.setNextList(relistIdxShortWatch)
	default:
		s.setNextList(relistIdxWatchError)
	}
}

func asVeryShortWatch(err error, target **VeryShortWatchError) bool {
	e, ok := err.(*VeryShortWatchError)
	if ok {
		*target = e
	}
	return ok
}

// eventReceived records the arrival of a watch event or bookmark.
func (s *informerStats) eventReceived(now time.Time) {
	s.lastEvent.Store(now.UnixNano())
}

// recordError remembers err as the last list or watch failure and wakes
// the waiters of errorSignal.
func (s *informerStats) recordError(err error, now time.Time) {
	if err == nil {
		return
	}
	s.errMu.Lock()
	s.lastErr, s.lastErrAt = err, now
	sig := s.errSignal
	s.errSignal = nil
	s.errMu.Unlock()
	if sig != nil {
		close(sig)
	}
}

// lastError returns the last failure and when it happened.
func (s *informerStats) lastError() (error, time.Time) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.lastErr, s.lastErrAt
}

// currentError returns the last failure if no list succeeded after it.
func (s *informerStats) currentError() error {
	s.errMu.Lock()
	err, at := s.lastErr, s.lastErrAt
	s.errMu.Unlock()
	if err == nil {
		return nil
	}
	if listed := s.lastList.Load(); listed != 0 && listed >= at.UnixNano() {
		return nil
	}
	return err
}

// errorSignal returns a channel closed when the next error is recorded.
func (s *informerStats) errorSignal() <-chan struct{} {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.errSignal == nil {
		s.errSignal = make(chan struct{})
	}
	return s.errSignal
}
