package diag

import (
	"sync"
	"sync/atomic"
	"time"
)

// ListReason says why a Reflector lists. Its values index Stats' list
// counters; cache maps them one to one onto its public RelistReason.
type ListReason uint32

// The reasons a Reflector lists, in the order of the public RelistReasons.
const (
	// ReasonInitial is the first list of a Reflector.
	ReasonInitial ListReason = iota
	// ReasonExpired follows a watch that ended because the resource version
	// it resumed from is gone (or not yet known to the server).
	ReasonExpired
	// ReasonWatchError follows a watch that ended with another error.
	ReasonWatchError
	// ReasonShortWatch follows a watch that closed within a second without
	// an event.
	ReasonShortWatch
	// ReasonListError retries a list that failed.
	ReasonListError
	// ReasonStreamFallback is a LIST made after a streaming list that
	// failed or did not complete.
	ReasonStreamFallback

	// ListReasons is the number of list reasons.
	ListReasons = iota
)

// Stats are the counters a Reflector and its informer keep for diagnostics
// (the informer's status, the metrics adapter, sync errors). Recording only
// does atomic adds and stores, and allocates nothing per event; an error is
// recorded under a mutex, errors being rare. A Reflector built alone has
// its own; a shared informer hands its own to the Reflector it runs, so
// they exist before Run and survive it. All methods are safe for concurrent
// use. The zero value is ready to use and tracks no freshness (see
// NewStatsFor).
type Stats struct {
	// lists counts lists by reason; nextList is the reason of the next
	// list, set by whatever ends the current cycle.
	lists    [ListReasons]atomic.Uint64
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
	// transformRefused counts the objects the transform check refused.
	transformRefused atomic.Uint64
	// started is the time (UnixNano) the informer started running; 0
	// before.
	started atomic.Int64
	// retryAfterUntil is the end (UnixNano) of the Reflector's last wait
	// that honoured a server's Retry-After; 0 before any.
	// retryAfterCapped counts the Retry-Afters longer than the maximum.
	retryAfterUntil  atomic.Int64
	retryAfterCapped atomic.Uint64
	// shardIgnored counts the list-and-watch cycles in which the server
	// was found ignoring the shard selector; shardIgnoredAt is when
	// (UnixNano) the last of them found it out, 0 before any.
	shardIgnored   atomic.Uint64
	shardIgnoredAt atomic.Int64
	// freshness tracks the confirmations of the cache's resourceVersion
	// (freshness.go); it tracks nothing unless built by NewStatsFor.
	freshness Freshness

	// errMu guards the fields below.
	errMu     sync.Mutex
	lastErr   error
	lastErrAt time.Time
	// errSignal, when not nil, is closed at the next recorded error.
	errSignal chan struct{}
}

// NewStats returns the stats of a Reflector built alone: they track no
// freshness.
func NewStats() *Stats {
	return &Stats{}
}

// NewStatsFor returns the stats of an informer whose cache's watermark
// storeRV returns: they also track the cache's freshness.
func NewStatsFor(storeRV func() string) *Stats {
	s := &Stats{}
	s.freshness.storeRV = storeRV
	return s
}

// unixNano converts a stored UnixNano to a time: zero for 0 (never).
func unixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// Freshness returns the tracker of the confirmations of the cache's
// resourceVersion.
func (s *Stats) Freshness() *Freshness { return &s.freshness }

// ListStarting counts a list under the reason set for it (ReasonInitial
// for the first); until something says otherwise (SetNextList), the next
// list retries a failed one (ReasonListError).
func (s *Stats) ListStarting() {
	idx := s.nextList.Swap(uint32(ReasonListError))
	s.lists[idx].Add(1)
}

// Lists returns how many lists were made for reason.
func (s *Stats) Lists(reason ListReason) uint64 { return s.lists[reason].Load() }

// ListSucceeded records the time of a successful list.
func (s *Stats) ListSucceeded(now time.Time) { s.lastList.Store(now.UnixNano()) }

// LastList returns the time of the last successful list (zero: none).
func (s *Stats) LastList() time.Time { return unixNano(s.lastList.Load()) }

// SetNextList sets the reason of the next list.
func (s *Stats) SetNextList(reason ListReason) { s.nextList.Store(uint32(reason)) }

// CountWatchRestart counts a watch reopened without a relist.
func (s *Stats) CountWatchRestart() { s.watchRestarts.Add(1) }

// WatchRestarts returns how many watches were reopened without a relist.
func (s *Stats) WatchRestarts() uint64 { return s.watchRestarts.Load() }

// EventReceived records the arrival of a watch event or bookmark.
func (s *Stats) EventReceived(now time.Time) { s.lastEvent.Store(now.UnixNano()) }

// LastEvent returns when the last watch event or bookmark arrived (zero:
// none did).
func (s *Stats) LastEvent() time.Time { return unixNano(s.lastEvent.Load()) }

// CountDeltas counts n deltas applied by the processing loop.
func (s *Stats) CountDeltas(n uint64) { s.deltas.Add(n) }

// Deltas returns how many deltas the processing loop applied.
func (s *Stats) Deltas() uint64 { return s.deltas.Load() }

// CountSnapshotSkipped counts a snapshot not written.
func (s *Stats) CountSnapshotSkipped() { s.snapshotsSkipped.Add(1) }

// SnapshotsSkipped returns how many snapshots were not written.
func (s *Stats) SnapshotsSkipped() uint64 { return s.snapshotsSkipped.Load() }

// CountTransformRefused counts an object the transform check refused.
func (s *Stats) CountTransformRefused() { s.transformRefused.Add(1) }

// TransformRefused returns how many objects the transform check refused.
func (s *Stats) TransformRefused() uint64 { return s.transformRefused.Load() }

// MarkStarted records when the informer started running.
func (s *Stats) MarkStarted(now time.Time) { s.started.Store(now.UnixNano()) }

// StartedAt returns when the informer started running (zero: not yet).
func (s *Stats) StartedAt() time.Time { return unixNano(s.started.Load()) }

// RetryAfterWait records a wait that honours a server's Retry-After and
// ends at until.
func (s *Stats) RetryAfterWait(until time.Time) { s.retryAfterUntil.Store(until.UnixNano()) }

// RetryAfterUntil returns the end of the last wait that honoured a
// Retry-After (zero: none).
func (s *Stats) RetryAfterUntil() time.Time { return unixNano(s.retryAfterUntil.Load()) }

// CountRetryAfterCapped counts a Retry-After longer than the maximum.
func (s *Stats) CountRetryAfterCapped() { s.retryAfterCapped.Add(1) }

// RetryAfterCapped returns how many Retry-Afters were longer than the
// maximum.
func (s *Stats) RetryAfterCapped() uint64 { return s.retryAfterCapped.Load() }

// CountShardIgnored counts a cycle in which the server was found ignoring
// the shard selector, at now.
func (s *Stats) CountShardIgnored(now time.Time) {
	s.shardIgnored.Add(1)
	s.shardIgnoredAt.Store(now.UnixNano())
}

// ShardIgnored returns how many cycles found the server ignoring the shard
// selector, and when the last one did (zero if none).
func (s *Stats) ShardIgnored() (uint64, time.Time) {
	return s.shardIgnored.Load(), unixNano(s.shardIgnoredAt.Load())
}

// RecordError remembers err as the last list or watch failure, at now, and
// wakes the waiters of ErrorSignal. A nil err is ignored.
func (s *Stats) RecordError(err error, now time.Time) {
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

// LastError returns the last failure and when it happened (nil and zero:
// none).
func (s *Stats) LastError() (error, time.Time) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.lastErr, s.lastErrAt
}

// CurrentError returns the last failure if no list succeeded after it,
// else nil.
func (s *Stats) CurrentError() error {
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

// ErrorSignal returns a channel closed when the next error is recorded.
// Take it before reading CurrentError, so that an error recorded in
// between still closes it.
func (s *Stats) ErrorSignal() <-chan struct{} {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.errSignal == nil {
		s.errSignal = make(chan struct{})
	}
	return s.errSignal
}
