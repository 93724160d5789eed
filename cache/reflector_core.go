package cache

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// The Reflector's core.
//
// Every decision a Reflector takes (what to request next, from which
// resourceVersion, whether a failure is retried, waited out, or ends the
// cycle, when the store's resourceVersion moves) is taken by one
// deterministic function:
//
//	state.step(input, buffer) -> actions, with state moved to the next one
//
// An input is something that happened: a request succeeded or failed, a
// watch delivered an event, was closed, went silent, a delay ran out, the
// caller stopped. An action is something to do: a request to make, a delay
// to wait, a resourceVersion to publish, a note for the observer (metrics,
// diagnostics, logs, the watch error handler). The core performs no I/O,
// reads no clock (inputs carry the time) and starts no goroutine, so tests
// drive it input by input (reflector_core_test.go). The driver
// (reflector_driver.go) performs the actions and turns their outcomes into
// the next inputs; the observer (reflector_observer.go) turns notes into
// metrics, counters, log lines and watch error handler calls.
//
// One list-and-watch cycle moves through the phases
//
//	idle ─▶ resuming ─▶ syncing ─────────────────────────┐
//	  │        └─(no snapshot)─┐                         ▼
//	  └─▶ streamOpening ─▶ streaming ─▶ syncing ─▶ watching ◀─▶ watchOpening
//	         │   ▲  (fallback) │                         ▲
//	         ▼   │             ▼                         │
//	       backoff        listing ─▶ syncing ────────────┘ (via watchOpening)
//
// and ends (back to idle, or stopped) when the watch cannot go on without a
// relist, a request failed in a way the cycle does not retry, or the caller
// stopped. Run starts the next cycle after its backoff.
//
// This file holds the core's types and the resourceVersions it asks for;
// reflector_step.go holds its transitions.

// reflectorPhase is where a Reflector is in its cycle.
type reflectorPhase uint8

const (
	// phaseIdle: no cycle runs (none did yet, or the last one ended);
	// inStart begins one.
	phaseIdle reflectorPhase = iota
	// phaseResuming: the snapshot the first cycle starts from is loading.
	phaseResuming
	// phaseStreamOpening: a streaming list was requested.
	phaseStreamOpening
	// phaseStreaming: a streaming list is open and its end bookmark pending.
	phaseStreaming
	// phaseListing: a (possibly paged) LIST is in flight.
	phaseListing
	// phaseSyncing: a complete list (state.syncing says from where) is
	// being handed to the store.
	phaseSyncing
	// phaseWatchOpening: a watch was requested.
	phaseWatchOpening
	// phaseWatching: a watch is open.
	phaseWatching
	// phaseBackoff: a delay is being waited out; state.then says what
	// follows it.
	phaseBackoff
	// phaseStopped: the caller's context ended the last cycle; inStart
	// begins another (a new ListAndWatch call).
	phaseStopped

	reflectorPhases
)

var reflectorPhaseNames = [reflectorPhases]string{
	"idle", "resuming", "streamOpening", "streaming", "listing", "syncing",
	"watchOpening", "watching", "backoff", "stopped",
}

func (p reflectorPhase) String() string {
	if p < reflectorPhases {
		return reflectorPhaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// listOrigin says where the list being synced came from.
type listOrigin uint8

const (
	originList listOrigin = iota
	originStream
	originSnapshot
)

// reflectorCoreConfig is what the core's decisions depend on besides its
// state. The driver sets it at the start of every cycle, from the
// Reflector's configuration and its exported fields (which client-go's users
// may set before Run).
type reflectorCoreConfig struct {
	name            string
	typeDescription string
	// streaming: streaming lists are on (the WatchListClient feature and a
	// client that supports them).
	streaming bool
	// disableChunking: LIST requests are never paged
	// (ListWatch.DisableChunking).
	disableChunking bool
	// pageSize is Reflector.WatchListPageSize.
	pageSize int64
	// pageByPage: the store applies relists page by page, so relists are
	// paged even where the watch cache could answer them whole.
	pageByPage bool
	// idleTimeout is the watch liveness deadline (<= 0: none).
	idleTimeout time.Duration
	// maxInternalRetry is Reflector.MaxInternalErrorRetryDuration.
	maxInternalRetry time.Duration
}

// reflectorState is the whole state of a Reflector's core. It holds no
// pointers to anything shared, so a copy is an independent state: step moves
// the state it is called on, and tests copy their fixtures first.
type reflectorState struct {
	cfg reflectorCoreConfig

	phase reflectorPhase
	// then is what follows phaseBackoff: phaseStreamOpening or
	// phaseWatchOpening.
	then reflectorPhase
	// syncing is where the list of phaseSyncing comes from.
	syncing listOrigin

	// lastSyncRV is the resourceVersion the store was brought to.
	lastSyncRV string
	// previousRV is lastSyncRV before the list being synced; it is
	// restored when the store refuses the list.
	previousRV string
	// rvUnavailable: the server said lastSyncRV is expired or too new; the
	// next list asks for the latest data.
	rvUnavailable bool
	// pagedSource: the first list (at "0") came back in pages, so the server
	// does not serve lists from its watch cache and relists keep paging.
	pagedSource bool
	// resumePending: a snapshot is to be tried before the first list.
	resumePending bool
	// freshList: the next list must not keep cached objects in place of
	// the listed ones, even when key, UID and resourceVersion match: the
	// cache was loaded from a snapshot, or the server said the version
	// asked for is too large (an etcd restored to an earlier state), so
	// equal versions need not mean equal objects. A list the store took
	// clears it.
	freshList bool

	// list in flight: its resourceVersion and page size, whether it is the
	// retry at "" after the first answer said 410 or too large, and when it
	// (or the stream) started.
	listRV      string
	listPage    int64
	listRetried bool
	listStart   time.Time

	// The open stream or watch.
	watchStart      time.Time
	lastArrival     time.Time
	streamRV        string
	events          int
	propagateRV     bool
	pastInitialAdds bool
	idleArmed       bool
	// watchedBefore: a watch was open before in this cycle, so the next one
	// is a restart.
	watchedBefore bool

	// The run of internal server errors ending watches, for
	// maxInternalRetry: when it started and when its latest error was.
	internalStart  time.Time
	internalLatest time.Time
}

// newReflectorState is the state of a Reflector that has not run.
func newReflectorState(resume bool) reflectorState {
	return reflectorState{resumePending: resume}
}

// reflectorInputKind is the kind of a reflectorInput.
type reflectorInputKind uint8

const (
	// inStart: a list-and-watch cycle begins.
	inStart reflectorInputKind = iota
	// inStop: the caller's context ended.
	inStop
	// inSnapshotLoaded: the snapshot was loaded (rv, count objects).
	inSnapshotLoaded
	// inSnapshotMissing: there is no snapshot (err nil) or it was rejected.
	inSnapshotMissing
	// inListed: the LIST returned its last page (rv, paged).
	inListed
	// inListFailed: the LIST failed (err).
	inListFailed
	// inOpened: the streaming list or watch requested is open.
	inOpened
	// inOpenFailed: it could not be opened (err).
	inOpenFailed
	// inEvent: an event the store accepted (eventType, rv,
	// initialEventsEnd), already applied to the store.
	inEvent
	// inBadData: an event that could not be stored was dropped.
	inBadData
	// inErrorEvent: an ERROR event, or a frame the client could not decode
	// (err).
	inErrorEvent
	// inClosed: the server closed the stream or watch.
	inClosed
	// inIdleTimeout: the armed liveness deadline of the watch expired.
	inIdleTimeout
	// inStreamSilent: the streaming list received nothing for the bound of
	// its initial events.
	inStreamSilent
	// inStreamWarnTick: time to warn that a streaming list still waits for
	// its end bookmark.
	inStreamWarnTick
	// inResyncFailed: the store's Resync failed (err).
	inResyncFailed
	// inBackoffDone: the delay of phaseBackoff ran out.
	inBackoffDone
	// inSynced: the store took the list (count objects).
	inSynced
	// inSyncFailed: the store refused the list (err).
	inSyncFailed

	reflectorInputKinds
)

var reflectorInputNames = [reflectorInputKinds]string{
	"start", "stop", "snapshotLoaded", "snapshotMissing", "listed", "listFailed",
	"opened", "openFailed", "event", "badData", "errorEvent", "closed",
	"idleTimeout", "streamSilent", "streamWarnTick", "resyncFailed",
	"backoffDone", "synced", "syncFailed",
}

func (k reflectorInputKind) String() string {
	if k < reflectorInputKinds {
		return reflectorInputNames[k]
	}
	return fmt.Sprintf("input(%d)", int(k))
}

// reflectorInput is one thing that happened to a Reflector.
type reflectorInput struct {
	kind reflectorInputKind
	// now is when it happened, on the Reflector's clock.
	now time.Time
	err error
	rv  string
	// eventType and initialEventsEnd describe an inEvent.
	eventType        watch.EventType
	initialEventsEnd bool
	// paged: the LIST of inListed came in more than one page.
	paged bool
	// count is the number of objects of inSnapshotLoaded and inSynced.
	count int
	// bad describes the event of inBadData.
	bad *reflectorBadEvent
}

// reflectorActionKind is the kind of a reflectorAction.
type reflectorActionKind uint8

const (
	// actResume: load the snapshot; answered by inSnapshotLoaded or
	// inSnapshotMissing.
	actResume reflectorActionKind = iota
	// actList: LIST at rv in pages of pageSize (0: unpaged), into a new
	// list of the store (relist: the store held a state before); answered
	// by inListed or inListFailed. retry: the same list again at "" after
	// the server refused rv (no new list is counted).
	actList
	// actStream: open a streaming list from rv into a new list of the store;
	// answered by inOpened or inOpenFailed.
	actStream
	// actWatch: open a watch from rv; answered by inOpened or inOpenFailed.
	actWatch
	// actBackoff: wait the backoff delay after err (the server's
	// Retry-After when longer); answered by inBackoffDone or inStop.
	actBackoff
	// actSync: end the list (origin) at rv; answered by inSynced or
	// inSyncFailed.
	actSync
	// actPublishRV: rv is the resourceVersion the store is brought to
	// (LastSyncResourceVersion, the resourceVersion metric).
	actPublishRV
	// actEventApplied: an event reached the store (or the list a
	// streaming list fills); the observer records its arrival. rv, when not
	// empty, is the resourceVersion the store is now at: it is published
	// (as actPublishRV) and told to a ResourceVersionUpdater store.
	actEventApplied
	// actArmIdle: start the watch's liveness deadline.
	actArmIdle
	// actStopWatch: stop the open stream or watch.
	actStopWatch
	// actEndCycle: the cycle is over; ListAndWatch returns err.
	actEndCycle
	// actNote: tell the observer (note says what).
	actNote
)

// reflectorNote is what an actNote tells the observer.
type reflectorNote uint8

const (
	// noteListStarted: a LIST or streaming list starts (counted under the
	// reason of the next list).
	noteListStarted reflectorNote = iota
	// noteListDone: a list reached the store (count objects, in dur).
	noteListDone
	// noteWatchStarted: a watch is open (restart: not the first of the
	// cycle).
	noteWatchStarted
	// noteWatchEnded: a watch ended (dur, count events, short).
	noteWatchEnded
	// noteNextList: the reason of the next list is reason.
	noteNextList
	// noteRelistAfter: the next list follows a watch that ended with err.
	noteRelistAfter
	// noteReport: err goes to the watch error handler (and the
	// diagnostics' last error).
	noteReport
	// noteBadData: the server sent data the Reflector cannot store (bad),
	// dropped.
	noteBadData
	// The log lines; each names its message in reflector_observer.go.
	noteLogCachesPopulated
	noteLogStreamFallback
	noteLogStreamReopen
	noteLogStreamBackoff
	noteLogStreamLatest
	noteLogStreamComplete
	noteLogInitialEventsPending
	noteLogWatchOpenBackoff
	noteLogWatchClose
	noteLogWatchResume
	noteLogWatchBackoff
	noteLogWatchExpired
	noteLogWatchEndedWithError
	noteLogSnapshotRejected
	noteLogSnapshotRefused
	noteLogResumed
	noteLogUnexpectedInput
)

// reflectorAction is one thing for the driver or the observer to do.
type reflectorAction struct {
	kind reflectorActionKind
	note reflectorNote
	rv   string
	err  error
	// pageSize, relist, retry and fresh describe an actList (relist and
	// fresh an actStream too); fresh: see reflectorState.freshList.
	pageSize int64
	relist   bool
	retry    bool
	fresh    bool
	origin   listOrigin
	// count, dur, short, restart and reason are the numbers of notes.
	count   int
	dur     time.Duration
	short   bool
	restart bool
	reason  uint32
	// since and lastArrival are the times of noteLogInitialEventsPending.
	since       time.Duration
	lastArrival time.Duration
	// bad is the event of noteBadData.
	bad *reflectorBadEvent
	// phase and input name the pair of noteLogUnexpectedInput.
	phase reflectorPhase
	input reflectorInputKind
}

// The resourceVersions the core asks for.

// relistRV is the resourceVersion of the next LIST: "0" for the first one
// (any data, servable from the watch cache), the last resourceVersion
// reached for a relist (data at least that new, so the store never goes back
// in time), and "" (the latest data, a consistent read) after the server
// said that version is expired or too new.
func (s *reflectorState) relistRV() string {
	switch {
	case s.rvUnavailable:
		return ""
	case s.lastSyncRV == "":
		return "0"
	}
	return s.lastSyncRV
}

// streamRVToAsk is the resourceVersion of the next streaming list: the last
// one reached, or "" (the latest data) at first and after the server said
// that version is expired or too new.
func (s *reflectorState) streamRVToAsk() string {
	if s.rvUnavailable {
		return ""
	}
	return s.lastSyncRV
}

// listPageSize decides the limit of the LIST requests of a list at rv (0:
// unpaged).
func (s *reflectorState) listPageSize(rv string) int64 {
	switch {
	case s.cfg.disableChunking:
		return 0
	case s.cfg.pageSize != 0:
		return s.cfg.pageSize
	case s.pagedSource:
		// The first list came back paged: the server does not serve lists
		// from a watch cache for this resource, keep paging.
		return reflectorDefaultPageSize
	case s.cfg.pageByPage && s.lastSyncRV != "":
		// A store that applies relists page by page saves memory only
		// when they come in pages.
		return reflectorDefaultPageSize
	case rv != "" && rv != "0":
		// Unpaged lists at a given resourceVersion can be served by the
		// watch cache; paged ones would all go to etcd.
		return 0
	}
	return reflectorDefaultPageSize
}
