package cache

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache/internal/diag"
)

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
	// SnapshotsSkipped counts the times the informer stopped without
	// writing its snapshot file: because its objects are sensitive and no
	// encryption key is set (see SnapshotProtection), or because its cache
	// did not hold one consistent state at its resourceVersion (a relist
	// applied piece by piece was unfinished, see
	// SharedIndexInformerOptions.SnapshotFile).
	SnapshotsSkipped uint64
	// TransformRefused counts the objects the informer's transform returned
	// and its transform check (SharedIndexInformerOptions.TransformCheck) refused: none of them
	// reached the cache.
	TransformRefused uint64
	// StartedAt is when Run started; zero before.
	StartedAt time.Time
	// RetryAfterUntil is when the Reflector's last wait that honoured a
	// server's Retry-After (one longer than its backoff; see
	// SharedIndexInformerOptions.MaxRetryAfter) ends or ended; zero if
	// there was none. The informer waits while it is in the future.
	// RetryAfterCapped counts the Retry-Afters longer than MaxRetryAfter,
	// which the Reflector read as that maximum. kinformer extension.
	RetryAfterUntil  time.Time
	RetryAfterCapped uint64
	// ListsPausedUntil is when the pause of the informer's list admission
	// after a 429 ends (listadmission.Stats.PausedUntil); the informer's
	// lists wait while it is in the future. Zero when the informer has no
	// list admission or it never paused. kinformer extension.
	ListsPausedUntil time.Time
	// Confirmed is the time of the newest answer of the server that
	// confirmed a resourceVersion as current which the cache has reached
	// (its watermark is at or past it), and ConfirmedResourceVersion that
	// resourceVersion; zero and "" while there is none. The confirmations
	// are a bookmark (kube-apiserver's watch cache sends one about once a
	// minute on every watch, and a streaming list ends with one), a
	// complete list (stamped with the arrival of its first page) and a
	// staleness probe (see SharedIndexInformerOptions.StalenessProbeInterval);
	// a snapshot loaded at start is none. A confirmation counts from when
	// the cache has applied it, with the time the server's answer arrived,
	// so events held up between the server and the cache keep Confirmed
	// back. With UseDeltaFIFO bookmarks do not reach the cache: one counts
	// once an event or list brings the cache to it. kinformer extension.
	Confirmed                time.Time
	ConfirmedResourceVersion string
	// StalenessProbes counts the staleness probes made (LISTs of one
	// object), and StalenessProbeFailures those that failed (logged at
	// V(2); a probe's failure is not a LastError).
	StalenessProbes, StalenessProbeFailures uint64
	// ShardIgnored counts the list-and-watch cycles in which the informer,
	// which has a Shard, found the API server ignoring its shard selector
	// (see Shard and ShardSelectorIgnoredError): each of them ran degraded,
	// the whole collection crossing the wire. ShardIgnoredAt is when the
	// last of them found it out; zero if none did. kinformer extension.
	ShardIgnored   uint64
	ShardIgnoredAt time.Time
	// HandlerPanics counts the panics recovered from this informer's
	// handlers, including handlers removed since.
	HandlerPanics int64
	// Handlers describes the registered handlers, in registration order.
	Handlers []HandlerStatus
}

// Staleness returns how long, at now, the cache has gone without reaching a
// resourceVersion the server confirmed as current: now minus Confirmed, or
// minus StartedAt while nothing was confirmed yet (an informer resumed from
// a snapshot, or still listing), and 0 before Run. It is a duration of
// time, not a resourceVersion difference (resourceVersions count every write
// in the cluster). Never negative. kinformer extension.
//
// It grows by one second per second and drops whenever the cache reaches a
// new confirmation, so behind a watch cache (bookmarks about once a minute)
// a healthy informer stays below about a minute and a half. On a server
// that sends no bookmarks the probe confirms instead, but its
// resourceVersion counts every write in the cluster, so the cache reaches it
// only with the resource's next event: there an informer of a resource
// nobody writes looks stale.
func (st InformerStatus) Staleness(now time.Time) time.Duration {
	since := st.Confirmed
	if since.IsZero() {
		since = st.StartedAt
	}
	if since.IsZero() || now.Before(since) {
		return 0
	}
	return now.Sub(since)
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
		Description:             s.config.ObjectDescription,
		Name:                    s.config.Identifier.Name(),
		Resource:                s.config.Identifier.GroupVersionResource(),
		Synced:                  s.HasSynced(),
		LastSyncResourceVersion: s.LastSyncResourceVersion(),
		StoreSize:               storeSize(s.indexer),
		DeltasProcessed:         s.stats.Deltas(),
		Lists:                   make(map[RelistReason]uint64, len(relistReasons)),
		WatchRestarts:           s.stats.WatchRestarts(),
		HandlerPanics:           s.processor.Panics(),
	}
	for i, reason := range relistReasons {
		st.Lists[reason] = s.stats.Lists(diag.ListReason(i))
	}
	st.LastWatchEvent = s.stats.LastEvent()
	st.LastList = s.stats.LastList()
	st.LastError, st.LastErrorTime = s.stats.LastError()
	st.SnapshotsSkipped = s.stats.SnapshotsSkipped()
	st.TransformRefused = s.stats.TransformRefused()
	st.StartedAt = s.stats.StartedAt()
	st.RetryAfterUntil = s.stats.RetryAfterUntil()
	st.RetryAfterCapped = s.stats.RetryAfterCapped()
	if c := s.stats.Freshness().LastConfirmed(); !c.At.IsZero() {
		st.Confirmed, st.ConfirmedResourceVersion = c.At, c.ResourceVersion
	}
	st.StalenessProbes, st.StalenessProbeFailures = s.stats.Freshness().Probes()
	st.ShardIgnored, st.ShardIgnoredAt = s.stats.ShardIgnored()

	s.startedLock.Lock()
	st.Started, st.Stopped = s.started, s.stopped
	admission := s.config.ListAdmission
	queue := s.queue
	ctrl := s.controller
	s.startedLock.Unlock()
	if queue != nil {
		st.QueueDepth = queueDepth(queue)
	}
	if ctrl != nil {
		st.BadData = ctrl.badDataTotal()
	}
	st.ListsPausedUntil = admission.Stats().PausedUntil
	st.Handlers = handlerStatuses(s.processor)
	return st
}

// storeSize returns the number of objects in a store of this package without
// listing them, else len(ListKeys()).
func storeSize(store Store) int {
	switch c := store.(type) {
	case ownStore:
		return c.size()
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
		return f.q.Len()
	case *DeltaFIFO:
		return f.q.Len()
	}
	return 0
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

// relistReasons lists every RelistReason at the index of the diag list
// reason it stands for.
var relistReasons = [...]RelistReason{RelistInitial, RelistExpired, RelistWatchError, RelistShortWatch, RelistListError, RelistStreamFallback}

// RelistReasons returns every RelistReason a Reflector reports, in a fixed
// order. The slice is new on every call.
func RelistReasons() []RelistReason {
	return append([]RelistReason(nil), relistReasons[:]...)
}

// The list reasons the Reflector's core notes (reflector_step.go), by their
// index in relistReasons, which is their diag.ListReason.
const (
	relistIdxExpired        = uint32(diag.ReasonExpired)
	relistIdxWatchError     = uint32(diag.ReasonWatchError)
	relistIdxStreamFallback = uint32(diag.ReasonStreamFallback)
)

// relistReasons has one entry per diag list reason: either declaration
// has a negative length, and does not compile, when the counts differ.
var (
	_ [diag.ListReasons - len(relistReasons)]struct{}
	_ [len(relistReasons) - diag.ListReasons]struct{}
)

// relistReasonAfterWatch is the reason of the list that follows a watch
// that ended with err.
func relistReasonAfterWatch(err error) diag.ListReason {
	switch _, short := err.(*VeryShortWatchError); {
	case isExpiredError(err) || isTooLargeResourceVersionError(err):
		return diag.ReasonExpired
	case short:
		return diag.ReasonShortWatch
	default:
		return diag.ReasonWatchError
	}
}
