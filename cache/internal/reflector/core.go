package reflector

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/watch"
)

// This file holds the core's types and the resourceVersions it asks for;
// step.go holds its transitions.

// Phase is where a Reflector is in its cycle.
type Phase uint8

const (
	// PhaseIdle: no cycle runs (none did yet, or the last one ended);
	// InStart begins one.
	PhaseIdle Phase = iota
	// PhaseResuming: the snapshot the first cycle starts from is loading.
	PhaseResuming
	// PhaseStreamOpening: a streaming list was requested.
	PhaseStreamOpening
	// PhaseStreaming: a streaming list is open and its end bookmark pending.
	PhaseStreaming
	// PhaseListing: a (possibly paged) LIST is in flight.
	PhaseListing
	// PhaseSyncing: a complete list (state.syncing says from where) is
	// being handed to the store.
	PhaseSyncing
	// PhaseWatchOpening: a watch was requested.
	PhaseWatchOpening
	// PhaseWatching: a watch is open.
	PhaseWatching
	// PhaseBackoff: a delay is being waited out; state.then says what
	// follows it.
	PhaseBackoff
	// PhaseStopped: the caller's context ended the last cycle; InStart
	// begins another (a new ListAndWatch call).
	PhaseStopped

	phaseCount
)

var phaseNames = [phaseCount]string{
	"idle", "resuming", "streamOpening", "streaming", "listing", "syncing",
	"watchOpening", "watching", "backoff", "stopped",
}

// String names the phase in logs and tests.
func (p Phase) String() string {
	if p < phaseCount {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// Origin says where the list being synced came from.
type Origin uint8

const (
	// OriginList: a LIST, paged or not.
	OriginList Origin = iota
	// OriginStream: a streaming list, completed by its end bookmark.
	OriginStream
	// OriginSnapshot: the snapshot loaded before the first list.
	OriginSnapshot
)

// Config is what the core's decisions depend on besides its
// state. The driver sets it at the start of every cycle, from the
// Reflector's configuration and its exported fields (which client-go's users
// may set before Run).
type Config struct {
	// Name is the Reflector's name; the errors the core makes carry it.
	Name string
	// TypeDescription describes the stored type in the error of a failed
	// LIST.
	TypeDescription string
	// Streaming: streaming lists are on (the WatchListClient feature and a
	// client that supports them).
	Streaming bool
	// DisableChunking: LIST requests are never paged
	// (ListWatch.DisableChunking).
	DisableChunking bool
	// PageSize is Reflector.WatchListPageSize (0: the core decides).
	PageSize int64
	// PageByPage: the store applies relists page by page, so relists are
	// paged even where the watch cache could answer them whole.
	PageByPage bool
	// IdleTimeout is the watch liveness deadline (<= 0: none).
	IdleTimeout time.Duration
	// MaxInternalRetry is Reflector.MaxInternalErrorRetryDuration.
	MaxInternalRetry time.Duration
}

// State is the whole state of a Reflector's core. It holds no
// pointers to anything shared, so a copy is an independent state: Step moves
// the state it is called on, and tests copy their fixtures first. Its zero
// value is a Reflector that has not run and has no snapshot to resume from.
// A State belongs to one goroutine at a time.
type State struct {
	cfg Config

	phase Phase
	// then is what follows PhaseBackoff: PhaseStreamOpening or
	// PhaseWatchOpening.
	then Phase
	// syncing is where the list of PhaseSyncing comes from.
	syncing Origin

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

// NewState is the state of a Reflector that has not run; resume says the
// first cycle starts from a snapshot (ActResume) before it lists.
func NewState(resume bool) State {
	return State{resumePending: resume}
}

// SetConfig sets what the next steps decide by; the driver calls it at the
// start of every cycle.
func (s *State) SetConfig(cfg Config) { s.cfg = cfg }

// Phase is where the cycle is.
func (s *State) Phase() Phase { return s.phase }

// Events is the number of events the open stream or watch delivered (for a
// snapshot being synced, its number of objects).
func (s *State) Events() int { return s.events }

// InputKind is the kind of an Input.
type InputKind uint8

const (
	// InStart: a list-and-watch cycle begins.
	InStart InputKind = iota
	// InStop: the caller's context ended.
	InStop
	// InSnapshotLoaded: the snapshot was loaded (rv, count objects).
	InSnapshotLoaded
	// InSnapshotMissing: there is no snapshot (err nil) or it was rejected.
	InSnapshotMissing
	// InListed: the LIST returned its last page (rv, paged).
	InListed
	// InListFailed: the LIST failed (err).
	InListFailed
	// InOpened: the streaming list or watch requested is open.
	InOpened
	// InOpenFailed: it could not be opened (err).
	InOpenFailed
	// InEvent: an event the store accepted (eventType, rv,
	// initialEventsEnd), already applied to the store.
	InEvent
	// InBadData: an event that could not be stored was dropped.
	InBadData
	// InErrorEvent: an ERROR event, or a frame the client could not decode
	// (err).
	InErrorEvent
	// InClosed: the server closed the stream or watch.
	InClosed
	// InIdleTimeout: the armed liveness deadline of the watch expired.
	InIdleTimeout
	// InStreamSilent: the streaming list received nothing for the bound of
	// its initial events.
	InStreamSilent
	// InStreamWarnTick: time to warn that a streaming list still waits for
	// its end bookmark.
	InStreamWarnTick
	// InResyncFailed: the store's Resync failed (err).
	InResyncFailed
	// InBackoffDone: the delay of PhaseBackoff ran out.
	InBackoffDone
	// InSynced: the store took the list (count objects).
	InSynced
	// InSyncFailed: the store refused the list (err).
	InSyncFailed

	inputKindCount
)

var inputNames = [inputKindCount]string{
	"start", "stop", "snapshotLoaded", "snapshotMissing", "listed", "listFailed",
	"opened", "openFailed", "event", "badData", "errorEvent", "closed",
	"idleTimeout", "streamSilent", "streamWarnTick", "resyncFailed",
	"backoffDone", "synced", "syncFailed",
}

// String names the input kind in logs and tests.
func (k InputKind) String() string {
	if k < inputKindCount {
		return inputNames[k]
	}
	return fmt.Sprintf("input(%d)", int(k))
}

// Input is one thing that happened to a Reflector.
//
// The driver fills one in for every outcome of an action and hands it to
// State.Step; fields a kind does not name are zero.
type Input struct {
	// Kind says what happened.
	Kind InputKind
	// Now is when it happened, on the Reflector's clock.
	Now time.Time
	// Err is the failure of a *Failed input, an ERROR event's error, or
	// the reason a snapshot was rejected.
	Err error
	// RV is the resourceVersion of InSnapshotLoaded, InListed and InEvent
	// ("" when the event's object has none).
	RV string
	// EventType and InitialEventsEnd describe an InEvent; InitialEventsEnd
	// marks the bookmark that ends a streaming list's initial events.
	EventType        watch.EventType
	InitialEventsEnd bool
	// Paged: the LIST of InListed came in more than one page.
	Paged bool
	// Count is the number of objects of InSnapshotLoaded and InSynced.
	Count int
	// Bad describes the event of InBadData.
	Bad *BadEvent
}

// ActionKind is the kind of an Action.
type ActionKind uint8

const (
	// ActResume: load the snapshot; answered by InSnapshotLoaded or
	// InSnapshotMissing.
	ActResume ActionKind = iota
	// ActList: LIST at rv in pages of pageSize (0: unpaged), into a new
	// list of the store (relist: the store held a state before); answered
	// by InListed or InListFailed. retry: the same list again at "" after
	// the server refused rv (no new list is counted).
	ActList
	// ActStream: open a streaming list from rv into a new list of the store;
	// answered by InOpened or InOpenFailed.
	ActStream
	// ActWatch: open a watch from rv; answered by InOpened or InOpenFailed.
	ActWatch
	// ActBackoff: wait the backoff delay after err (the server's
	// Retry-After when longer); answered by InBackoffDone or InStop.
	ActBackoff
	// ActSync: end the list (origin) at rv; answered by InSynced or
	// InSyncFailed.
	ActSync
	// ActPublishRV: rv is the resourceVersion the store is brought to
	// (LastSyncResourceVersion, the resourceVersion metric).
	ActPublishRV
	// ActEventApplied: an event reached the store (or the list a
	// streaming list fills); the observer records its arrival. rv, when not
	// empty, is the resourceVersion the store is now at: it is published
	// (as ActPublishRV) and told to a VersionUpdater store.
	ActEventApplied
	// ActArmIdle: start the watch's liveness deadline.
	ActArmIdle
	// ActStopWatch: stop the open stream or watch.
	ActStopWatch
	// ActEndCycle: the cycle is over; Engine.RunCycle returns err.
	ActEndCycle
	// ActNote: tell the observer (note says what).
	ActNote
)

// Note is what an ActNote tells the observer.
type Note uint8

const (
	// NoteListStarted: a LIST or streaming list starts (counted under the
	// reason of the next list).
	NoteListStarted Note = iota
	// NoteListDone: a list reached the store (count objects, in dur).
	NoteListDone
	// NoteWatchStarted: a watch is open (restart: not the first of the
	// cycle).
	NoteWatchStarted
	// NoteWatchEnded: a watch ended (dur, count events, short).
	NoteWatchEnded
	// NoteNextList: the reason of the next list is Reason.
	NoteNextList
	// NoteRelistAfter: the next list follows a watch that ended with err.
	NoteRelistAfter
	// NoteReport: err goes to the watch error handler (and the
	// diagnostics' last error).
	NoteReport
	// NoteBadData: the server sent data the Reflector cannot store (bad),
	// dropped.
	NoteBadData
	// The rest are log lines, one note each; the observer words them.
	// NoteLogCachesPopulated: a list reached the store, the cache is populated.
	NoteLogCachesPopulated
	// NoteLogStreamFallback: a streaming list failed (Err), this cycle lists instead.
	NoteLogStreamFallback
	// NoteLogStreamReopen: a streaming list closed before its end bookmark (Count events) is opened again.
	NoteLogStreamReopen
	// NoteLogStreamBackoff: a streaming list failed (Err) and is retried after a backoff.
	NoteLogStreamBackoff
	// NoteLogStreamLatest: the resourceVersion of a streaming list is unavailable (Err), it streams the latest data.
	NoteLogStreamLatest
	// NoteLogStreamComplete: a streaming list is complete (Count events in Dur).
	NoteLogStreamComplete
	// NoteLogInitialEventsPending: a streaming list still waits for its end bookmark (Since, LastArrival).
	NoteLogInitialEventsPending
	// NoteLogWatchOpenBackoff: a watch could not be opened (Err) and is retried after a backoff.
	NoteLogWatchOpenBackoff
	// NoteLogWatchClose: the server closed a watch (Count events).
	NoteLogWatchClose
	// NoteLogWatchResume: a watch that ended with Err is reopened without a relist.
	NoteLogWatchResume
	// NoteLogWatchBackoff: a watch ended with a 429 (Err) and is reopened after a backoff.
	NoteLogWatchBackoff
	// NoteLogWatchExpired: a watch ended with 410 (Err), a relist follows.
	NoteLogWatchExpired
	// NoteLogWatchEndedWithError: a watch ended with Err, a relist follows.
	NoteLogWatchEndedWithError
	// NoteLogSnapshotRejected: the snapshot could not be loaded (Err), the cycle lists.
	NoteLogSnapshotRejected
	// NoteLogSnapshotRefused: the store refused the snapshot (Err), the cycle lists.
	NoteLogSnapshotRefused
	// NoteLogResumed: the snapshot (Count objects at RV) reached the store.
	NoteLogResumed
	// NoteLogUnexpectedInput: an input (Input) the phase (Phase) does not expect was ignored.
	NoteLogUnexpectedInput
)

// Action is one thing for the driver or the observer to do.
//
// The fields a kind (or a note) does not name are zero.
type Action struct {
	// Kind says what to do.
	Kind ActionKind
	// Note says what an ActNote tells.
	Note Note
	// RV is the resourceVersion of a request, of ActSync and ActPublishRV,
	// and the one an ActEventApplied moves the store to ("": none).
	RV string
	// Err is the failure a note is about, the one an ActBackoff waits
	// after, or the one an ActEndCycle returns.
	Err error
	// PageSize, Relist, Retry and Fresh describe an ActList (Relist and
	// Fresh an ActStream too). Fresh: the list must not keep cached
	// objects in place of listed ones (see State.freshList).
	PageSize int64
	Relist   bool
	Retry    bool
	Fresh    bool
	// Origin is where the list of ActSync comes from.
	Origin Origin
	// Count, Dur, Short, Restart and Reason are the numbers of notes.
	Count   int
	Dur     time.Duration
	Short   bool
	Restart bool
	Reason  ListReason
	// Since and LastArrival are the times of NoteLogInitialEventsPending
	// (LastArrival 0: nothing arrived yet).
	Since       time.Duration
	LastArrival time.Duration
	// Bad is the event of NoteBadData.
	Bad *BadEvent
	// Phase and Input name the pair of NoteLogUnexpectedInput.
	Phase Phase
	Input InputKind
}

// The resourceVersions the core asks for.

// relistRV is the resourceVersion of the next LIST: "0" for the first one
// (any data, servable from the watch cache), the last resourceVersion
// reached for a relist (data at least that new, so the store never goes back
// in time), and "" (the latest data, a consistent read) after the server
// said that version is expired or too new.
func (s *State) relistRV() string {
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
func (s *State) streamRVToAsk() string {
	if s.rvUnavailable {
		return ""
	}
	return s.lastSyncRV
}

// listPageSize decides the limit of the LIST requests of a list at rv (0:
// unpaged).
func (s *State) listPageSize(rv string) int64 {
	switch {
	case s.cfg.DisableChunking:
		return 0
	case s.cfg.PageSize != 0:
		return s.cfg.PageSize
	case s.pagedSource:
		// The first list came back paged: the server does not serve lists
		// from a watch cache for this resource, keep paging.
		return DefaultPageSize
	case s.cfg.PageByPage && s.lastSyncRV != "":
		// A store that applies relists page by page saves memory only
		// when they come in pages.
		return DefaultPageSize
	case rv != "" && rv != "0":
		// Unpaged lists at a given resourceVersion can be served by the
		// watch cache; paged ones would all go to etcd.
		return 0
	}
	return DefaultPageSize
}
