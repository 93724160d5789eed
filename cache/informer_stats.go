package cache

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
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

// InformerStatus is a snapshot of one informer's state, for diagnostics (see
// GetInformerStatus). The values are read one after the other while the
// informer runs, so they need not be mutually consistent.
type InformerStatus struct {
	// Type is the Go type of the informer's objects, e.g. "*v1.Pod".
	Type string
	// Description describes the objects as the Reflector logs them: the
	// group/version/resource for dynamic and metadata informers, else the
	// ObjectDescription given at construction (may be empty).
	Description string
	// Name is the informer's metrics name (see InformerName), or "".
	Name string
	// Resource is the informer's group/version/resource when known (the
	// informers of kinformer's factories know it), else zero.
	Resource schema.GroupVersionResource

	// Started and Stopped tell whether Run was called and has returned.
	Started, Stopped bool
	// Synced is HasSynced.
	Synced bool
	// LastSyncResourceVersion is the informer's LastSyncResourceVersion.
	LastSyncResourceVersion string
	// StoreSize is the number of objects in the cache.
	StoreSize int
	// QueueDepth is the number of entries waiting in the queue between the
	// Reflector and the processing loop (keys for a DeltaFIFO, deltas for
	// a RealFIFO); 0 before Run.
	QueueDepth int
	// DeltasProcessed counts the deltas the processing loop applied to the
	// cache. A list counts one per listed object plus one per cached
	// object it deleted, with either queue and whether it was applied at
	// once or page by page (SharedIndexInformerOptions.RelistPageByPage);
	// bookmarks count with the RealFIFO.
	DeltasProcessed uint64
	// Lists counts the lists made so far by reason; every reason of
	// RelistReasons is present.
	Lists map[RelistReason]uint64
	// WatchRestarts counts the watches reopened from the last resource
	// version without a relist (after a normal close, a 429, a refused
	// connection or a retried internal error).
	WatchRestarts uint64
	// LastWatchEvent is when the last watch event or bookmark arrived; zero
	// if none did.
	LastWatchEvent time.Time
	// LastList is when the last list succeeded; zero if none did.
	LastList time.Time
	// LastError is the last list or watch failure (every failure the watch
	// error handler sees), nil if there was none; LastErrorTime is when it
	// happened. It is kept after the informer recovers: compare with
	// LastList.
	LastError     error
	LastErrorTime time.Time
	// BadData counts the objects and events from the server the Reflector
	// could not store (no object, wrong type, no metadata, undecodable
	// frame, ...); each was logged and skipped.
	BadData uint64
	// HandlerPanics counts the panics recovered from this informer's
	// handlers, including handlers removed since.
	HandlerPanics int64
	// Handlers describes the registered handlers, in registration order.
	Handlers []HandlerStatus
}

// HandlerStatus is a snapshot of one registered event handler.
type HandlerStatus struct {
	// Name is the handler's name: its type or the functions it is made of.
	// Two registrations of the same handler type have the same name.
	Name string
	// Pending is the number of notifications queued for the handler and
	// not yet handled, including the remainder of the batch it is working
	// through.
	Pending int
	// Panics counts the panics recovered from this handler.
	Panics int64
	// Synced is the registration's HasSynced.
	Synced bool
}

// GetInformerStatus returns a snapshot of informer's state. It reports false
// for informers not built by this package (a NewTypedSharedIndexInformer
// wrapper around one of ours is fine). Safe to call at any time, concurrently
// with everything; it takes the cache's and the queue's locks briefly.
func GetInformerStatus(informer SharedInformer) (InformerStatus, bool) {
	s := sharedOf(informer)
	if s == nil {
		return InformerStatus{}, false
	}
	return s.status(), true
}

// status returns a snapshot of the informer's state.
func (s *sharedIndexInformer) status() InformerStatus {
	st := InformerStatus{
		Type:                    fmt.Sprintf("%T", s.objectType),
		Description:             s.config.objectDescription,
		Name:                    s.config.identifier.Name(),
		Resource:                s.config.identifier.GroupVersionResource(),
		Synced:                  s.HasSynced(),
		LastSyncResourceVersion: s.LastSyncResourceVersion(),
		StoreSize:               storeSize(s.indexer),
		DeltasProcessed:         s.stats.deltas.Load(),
		Lists:                   make(map[RelistReason]uint64, len(relistReasons)),
		WatchRestarts:           s.stats.watchRestarts.Load(),
		HandlerPanics:           s.processor.panics.Load(),
	}
	for i, reason := range relistReasons {
		st.Lists[reason] = s.stats.lists[i].Load()
	}
	if ns := s.stats.lastEvent.Load(); ns != 0 {
		st.LastWatchEvent = time.Unix(0, ns)
	}
	if ns := s.stats.lastList.Load(); ns != 0 {
		st.LastList = time.Unix(0, ns)
	}
	st.LastError, st.LastErrorTime = s.stats.lastError()

	s.startedLock.Lock()
	st.Started, st.Stopped = s.started, s.stopped
	queue := s.queue
	ctrl := s.controller
	s.startedLock.Unlock()
	if queue != nil {
		st.QueueDepth = queueDepth(queue)
	}
	if ctrl != nil {
		st.BadData = ctrl.badDataTotal()
	}
	st.Handlers = s.processor.handlerStatuses()
	return st
}

// storeSize returns the number of objects in a store of this package without
// listing them, else len(ListKeys()).
func storeSize(store Store) int {
	switch c := store.(type) {
	case *cache:
		return c.tsm.size()
	case nil:
		return 0
	}
	return len(store.ListKeys())
}

// queueDepth returns the number of entries queued in q, or 0 for a queue of
// another package.
func queueDepth(q Queue) int {
	switch f := q.(type) {
	case *RealFIFO:
		f.lock.Lock()
		defer f.lock.Unlock()
		return f.items.len()
	case *DeltaFIFO:
		f.lock.Lock()
		defer f.lock.Unlock()
		return f.queue.len()
	}
	return 0
}

// SetHandlerMetricsProvider makes informer time every notification its
// handlers (registered now or later) handle, into the histograms provider
// returns; a nil provider stops the timing. A later call replaces the
// provider for handlers registered afterwards and for those registered
// before. Without a provider, handlers are not timed at all (no clock
// reads). SharedIndexInformerOptions.HandlerMetricsProvider sets the first
// provider at construction. It fails for informers not built by this
// package. Safe for concurrent use, also while the informer runs.
func SetHandlerMetricsProvider(informer SharedInformer, provider HandlerMetricsProvider) error {
	s := sharedOf(informer)
	if s == nil {
		return fmt.Errorf("cannot time the handlers of an informer of type %T: only informers of this package support it", informer)
	}
	s.processor.setHandlerMetrics(provider)
	return nil
}

// InformerSource is implemented by the informer factories of this module
// (informers, dynamicinformer and metadatainformer): it hands out the
// informers built so far, for diagnostics and metrics (see
// GetInformerStatus). Client-go's factory interfaces do not include it; the
// factories' concrete types do.
type InformerSource interface {
	// ListInformers returns every informer the factory has built so far
	// (started or not), in a stable order. Safe for concurrent use.
	ListInformers() []SharedIndexInformer
}
