package reflector

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// coreT0 is when the fixtures' streams, watches and lists started; inputs
// happen ten seconds later unless they say otherwise.
var coreT0 = time.Unix(1_700_000_000, 0)

func coreTooLargeError() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 504, Reason: metav1.StatusReasonTimeout,
		Message: "Too large resource version",
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}},
	}}
}

func coreDecodingError() error {
	return apierrors.FromObject(&metav1.Status{
		Status: metav1.StatusFailure, Code: 500, Reason: metav1.StatusReasonInternalError,
		Message: "unable to decode an event from the watch stream: bad frame",
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: ClientWatchDecodingCause, Message: "bad frame"}}},
	})
}

// coreInputs is the input alphabet of the core's table test: every input
// kind, and each in the variants that the core tells apart.
func coreInputs() map[string]Input {
	at := func(kind InputKind) Input {
		return Input{Kind: kind, Now: coreT0.Add(10 * time.Second)}
	}
	with := func(in Input, f func(*Input)) Input { f(&in); return in }
	failed := func(kind InputKind, err error) Input {
		return with(at(kind), func(in *Input) { in.Err = err })
	}
	event := func(t watch.EventType, rv string) Input {
		return with(at(InEvent), func(in *Input) { in.EventType, in.RV = t, rv })
	}
	return map[string]Input{
		"start":                 at(InStart),
		"stop":                  at(InStop),
		"snapshot loaded":       with(at(InSnapshotLoaded), func(in *Input) { in.RV, in.Count = "40", 3 }),
		"no snapshot":           at(InSnapshotMissing),
		"snapshot refused":      failed(InSnapshotMissing, errors.New("checksum mismatch")),
		"LIST ok":               with(at(InListed), func(in *Input) { in.RV = "50" }),
		"LIST ok in pages":      with(at(InListed), func(in *Input) { in.RV, in.Paged = "50", true }),
		"LIST 410":              failed(InListFailed, apierrors.NewResourceExpired("too old")),
		"LIST rv too large":     failed(InListFailed, coreTooLargeError()),
		"LIST 429 Retry-After":  failed(InListFailed, apierrors.NewTooManyRequests("slow down", 3)),
		"LIST 500":              failed(InListFailed, apierrors.NewInternalError(errors.New("boom"))),
		"LIST refused":          failed(InListFailed, fmt.Errorf("dial: %w", syscall.ECONNREFUSED)),
		"LIST refused by store": failed(InListFailed, &SinkError{Err: errors.New("store full")}),
		"opened":                at(InOpened),
		"open 410":              failed(InOpenFailed, apierrors.NewResourceExpired("too old")),
		"open 429":              failed(InOpenFailed, apierrors.NewTooManyRequests("slow down", 3)),
		"open refused":          failed(InOpenFailed, fmt.Errorf("dial: %w", syscall.ECONNREFUSED)),
		"open 403":              failed(InOpenFailed, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("denied"))),
		"streaming unsupported": failed(InOpenFailed, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid, Message: "sendInitialEvents is forbidden"}}),
		"ADDED":        event(watch.Added, "61"),
		"MODIFIED":     event(watch.Modified, "62"),
		"DELETED":      event(watch.Deleted, "63"),
		"bookmark":     event(watch.Bookmark, "64"),
		"end bookmark": with(event(watch.Bookmark, "65"), func(in *Input) { in.InitialEventsEnd = true }),
		"bad data": with(at(InBadData), func(in *Input) {
			in.Bad = &BadEvent{Kind: BadDataWrongType, Msg: "Unexpected watch event object type"}
		}),
		"ERROR 410":          failed(InErrorEvent, apierrors.NewResourceExpired("too old")),
		"ERROR 500":          failed(InErrorEvent, apierrors.NewInternalError(errors.New("boom"))),
		"decoding error":     failed(InErrorEvent, coreDecodingError()),
		"clean close":        at(InClosed),
		"very short close":   Input{Kind: InClosed, Now: coreT0.Add(500 * time.Millisecond)},
		"idle deadline":      at(InIdleTimeout),
		"stream silent":      at(InStreamSilent),
		"warn tick":          at(InStreamWarnTick),
		"resync failed":      failed(InResyncFailed, errors.New("resync failed")),
		"backoff done":       at(InBackoffDone),
		"synced":             with(at(InSynced), func(in *Input) { in.Count = 7 }),
		"store refused list": failed(InSyncFailed, errors.New("store full")),
	}
}

// renderActions writes actions in the table's notation.
func renderActions(actions []Action) []string {
	var out []string
	for _, a := range actions {
		var s string
		switch a.Kind {
		case ActResume:
			s = "resume"
		case ActList:
			s = fmt.Sprintf("LIST rv=%q limit=%d", a.RV, a.PageSize)
			if a.Relist {
				s += " relist"
			}
			if a.Retry {
				s += " retry"
			}
			if a.Fresh {
				s += " fresh"
			}
		case ActStream:
			s = fmt.Sprintf("stream rv=%q", a.RV)
			if a.Relist {
				s += " relist"
			}
			if a.Fresh {
				s += " fresh"
			}
		case ActWatch:
			s = fmt.Sprintf("watch rv=%q", a.RV)
		case ActBackoff:
			s = "backoff: " + a.Err.Error()
		case ActSync:
			s = fmt.Sprintf("sync %s rv=%q", [...]string{"list", "stream", "snapshot"}[a.Origin], a.RV)
		case ActPublishRV:
			s = fmt.Sprintf("publish rv=%q", a.RV)
		case ActEventApplied:
			s = "event applied"
			if a.RV != "" {
				s += fmt.Sprintf(" rv=%q", a.RV)
			}
		case ActArmIdle:
			s = "arm idle deadline"
		case ActStopWatch:
			s = "stop watch"
		case ActEndCycle:
			s = "end cycle"
			if a.Err != nil {
				s += ": " + a.Err.Error()
			}
		case ActNote:
			s = renderNote(a)
		}
		out = append(out, s)
	}
	return out
}

var coreNoteNames = map[Note]string{
	NoteListStarted: "list started", NoteListDone: "list done", NoteWatchStarted: "watch started",
	NoteWatchEnded: "watch ended", NoteNextList: "next list",
	NoteRelistAfter: "relist after", NoteReport: "report", NoteBadData: "bad data",
	NoteLogCachesPopulated: "log caches populated", NoteLogStreamFallback: "log stream fallback",
	NoteLogStreamReopen: "log stream reopen", NoteLogStreamBackoff: "log stream backoff",
	NoteLogStreamLatest: "log stream latest", NoteLogStreamComplete: "log stream complete",
	NoteLogInitialEventsPending: "log initial events pending", NoteLogWatchOpenBackoff: "log watch open backoff",
	NoteLogWatchClose: "log watch close", NoteLogWatchResume: "log watch resume",
	NoteLogWatchBackoff: "log watch backoff", NoteLogWatchExpired: "log watch expired",
	NoteLogWatchEndedWithError: "log watch ended with error", NoteLogSnapshotRejected: "log snapshot rejected",
	NoteLogSnapshotRefused: "log snapshot refused", NoteLogResumed: "log resumed",
	NoteLogUnexpectedInput: "log unexpected input",
}

func renderNote(a Action) string {
	s := "note " + coreNoteNames[a.Note]
	switch a.Note {
	case NoteNextList:
		s += ": " + a.Reason.String()
	case NoteListDone:
		s += fmt.Sprintf(": %d objects in %v", a.Count, a.Dur)
	case NoteWatchStarted:
		if a.Restart {
			s += ": restart"
		}
	case NoteWatchEnded:
		s += fmt.Sprintf(": %d events in %v", a.Count, a.Dur)
		if a.Short {
			s += ", short"
		}
	case NoteLogInitialEventsPending:
		s += fmt.Sprintf(": %v since start, %v since last event", a.Since, a.LastArrival)
	case NoteLogUnexpectedInput:
		s += fmt.Sprintf(": %s in %s", a.Input, a.Phase)
	case NoteBadData:
		s += ": " + a.Bad.Kind.String()
	}
	if a.Err != nil {
		s += ": " + a.Err.Error()
	}
	return s
}

func coreConfig(streaming bool) Config {
	return Config{Name: "core", TypeDescription: "*v1.Pod", Streaming: streaming, IdleTimeout: 2 * time.Minute}
}

// coreFixtures are the states of the core's table test, at least one in
// every phase.
func coreFixtures() map[string]State {
	listing, streaming := coreConfig(false), coreConfig(true)
	retrying := coreConfig(false)
	retrying.MaxInternalRetry = time.Minute
	return map[string]State{
		"idle, LIST":                         {cfg: listing},
		"idle, streaming":                    {cfg: streaming},
		"idle, snapshot pending":             {cfg: streaming, resumePending: true},
		"idle after a sync at 50, LIST":      {cfg: listing, lastSyncRV: "50"},
		"idle after a sync at 50, streaming": {cfg: streaming, lastSyncRV: "50"},
		"idle, 50 unavailable, streaming":    {cfg: streaming, lastSyncRV: "50", rvUnavailable: true},
		"resuming":                           {cfg: streaming, phase: PhaseResuming},
		"opening a stream":                   {cfg: streaming, phase: PhaseStreamOpening, listStart: coreT0, watchStart: coreT0},
		"opening a stream from 50":           {cfg: streaming, phase: PhaseStreamOpening, lastSyncRV: "50", listStart: coreT0, watchStart: coreT0},
		"streaming":                          {cfg: streaming, phase: PhaseStreaming, listStart: coreT0, watchStart: coreT0},
		"streaming, past initial adds":       {cfg: streaming, phase: PhaseStreaming, listStart: coreT0, watchStart: coreT0, events: 4, pastInitialAdds: true, streamRV: "60", lastArrival: coreT0.Add(9 * time.Second)},
		"listing at 0":                       {cfg: listing, phase: PhaseListing, listRV: "0", listPage: 500, listStart: coreT0},
		"listing at 50, retried at latest":   {cfg: listing, phase: PhaseListing, lastSyncRV: "50", listRV: "50", listRetried: true, rvUnavailable: true, listStart: coreT0},
		"syncing a LIST at 50":               {cfg: listing, phase: PhaseSyncing, syncing: OriginList, lastSyncRV: "50", previousRV: "30", listStart: coreT0},
		"syncing a stream at 65":             {cfg: streaming, phase: PhaseSyncing, syncing: OriginStream, lastSyncRV: "65", previousRV: "30", listStart: coreT0, watchStart: coreT0, events: 9},
		"syncing a snapshot at 40":           {cfg: streaming, phase: PhaseSyncing, syncing: OriginSnapshot, lastSyncRV: "40", events: 3},
		"opening a watch from 50":            {cfg: retrying, phase: PhaseWatchOpening, lastSyncRV: "50", propagateRV: true, watchStart: coreT0},
		"watching from 50":                   {cfg: retrying, phase: PhaseWatching, lastSyncRV: "50", propagateRV: true, watchStart: coreT0, watchedBefore: true},
		"watching from 0":                    {cfg: listing, phase: PhaseWatching, lastSyncRV: "0", watchStart: coreT0, watchedBefore: true},
		"watching from 50, deadline armed":   {cfg: listing, phase: PhaseWatching, lastSyncRV: "50", propagateRV: true, watchStart: coreT0, watchedBefore: true, idleArmed: true, events: 3},
		"watching from 50, 500s for 2m":      {cfg: retrying, phase: PhaseWatching, lastSyncRV: "50", propagateRV: true, watchStart: coreT0, watchedBefore: true, internalStart: coreT0.Add(-2 * time.Minute), internalLatest: coreT0},
		"backing off before a stream":        {cfg: streaming, phase: PhaseBackoff, then: PhaseStreamOpening, lastSyncRV: "50"},
		"backing off before a watch":         {cfg: listing, phase: PhaseBackoff, then: PhaseWatchOpening, lastSyncRV: "50"},
		"stopped":                            {cfg: listing, phase: PhaseStopped, lastSyncRV: "50"},
	}
}

// reflectorCoreRow is one row of the core's table: in fixture state, input
// leads to phase with actions (in the notation of renderActions).
type reflectorCoreRow struct {
	fixture string
	input   string
	phase   Phase
	actions []string
}

// The core's table. Every phase meets every input of coreInputs, either in
// a row (with one of that phase's fixtures) or in reflectorCoreIgnored: the
// inputs a phase never receives from the driver, which leave the state as
// it is and are reported as unexpected.
var reflectorCoreRows = []reflectorCoreRow{
	{"backing off before a stream", "backoff done", PhaseStreamOpening, []string{"note list started", "stream rv=\"50\" relist"}},
	{"backing off before a stream", "stop", PhaseStopped, []string{"end cycle"}},
	{"backing off before a watch", "backoff done", PhaseWatchOpening, []string{"watch rv=\"50\""}},
	{"backing off before a watch", "stop", PhaseStopped, []string{"end cycle"}},
	{"idle after a sync at 50, LIST", "start", PhaseListing, []string{"note list started", "LIST rv=\"50\" limit=0 relist"}},
	{"idle after a sync at 50, LIST", "stop", PhaseStopped, []string{}},
	{"idle after a sync at 50, streaming", "start", PhaseStreamOpening, []string{"note list started", "stream rv=\"50\" relist"}},
	{"idle after a sync at 50, streaming", "stop", PhaseStopped, []string{}},
	{"idle, 50 unavailable, streaming", "start", PhaseStreamOpening, []string{"note list started", "stream rv=\"\" relist"}},
	{"idle, 50 unavailable, streaming", "stop", PhaseStopped, []string{}},
	{"idle, LIST", "start", PhaseListing, []string{"note list started", "LIST rv=\"0\" limit=500"}},
	{"idle, LIST", "stop", PhaseStopped, []string{}},
	{"idle, snapshot pending", "start", PhaseResuming, []string{"resume"}},
	{"idle, snapshot pending", "stop", PhaseStopped, []string{}},
	{"idle, streaming", "start", PhaseStreamOpening, []string{"note list started", "stream rv=\"\""}},
	{"idle, streaming", "stop", PhaseStopped, []string{}},
	{"listing at 0", "LIST 410", PhaseListing, []string{"LIST rv=\"\" limit=500 retry"}},
	{"listing at 0", "LIST 429 Retry-After", PhaseIdle, []string{"end cycle: failed to list *v1.Pod: slow down"}},
	{"listing at 0", "LIST 500", PhaseIdle, []string{"end cycle: failed to list *v1.Pod: Internal error occurred: boom"}},
	{"listing at 0", "LIST ok", PhaseSyncing, []string{"publish rv=\"50\"", "sync list rv=\"50\""}},
	{"listing at 0", "LIST ok in pages", PhaseSyncing, []string{"publish rv=\"50\"", "sync list rv=\"50\""}},
	{"listing at 0", "LIST refused", PhaseIdle, []string{"end cycle: failed to list *v1.Pod: dial: connection refused"}},
	{"listing at 0", "LIST refused by store", PhaseIdle, []string{"end cycle: unable to sync list result: store full"}},
	{"listing at 0", "LIST rv too large", PhaseListing, []string{"LIST rv=\"\" limit=500 retry fresh"}},
	{"listing at 0", "stop", PhaseStopped, []string{"end cycle"}},
	{"listing at 50, retried at latest", "LIST 410", PhaseIdle, []string{"end cycle: failed to list *v1.Pod: too old"}},
	{"listing at 50, retried at latest", "LIST ok", PhaseSyncing, []string{"publish rv=\"50\"", "sync list rv=\"50\""}},
	{"listing at 50, retried at latest", "LIST rv too large", PhaseIdle, []string{"end cycle: failed to list *v1.Pod: Too large resource version"}},
	{"opening a stream", "open 403", PhaseListing, []string{"note log stream fallback: pods is forbidden: denied", "note next list: stream_fallback", "note list started", "LIST rv=\"0\" limit=500"}},
	{"opening a stream", "open 410", PhaseStreamOpening, []string{"note log stream latest: too old", "note next list: expired", "note list started", "stream rv=\"\""}},
	{"opening a stream", "open 429", PhaseBackoff, []string{"note log stream backoff: slow down", "note report: slow down", "backoff: slow down"}},
	{"opening a stream", "open refused", PhaseBackoff, []string{"note log stream backoff: dial: connection refused", "note report: dial: connection refused", "backoff: dial: connection refused"}},
	{"opening a stream", "opened", PhaseStreaming, []string{}},
	{"opening a stream", "stop", PhaseStopped, []string{"end cycle"}},
	{"opening a stream", "streaming unsupported", PhaseListing, []string{"note log stream fallback: sendInitialEvents is forbidden", "note next list: stream_fallback", "note list started", "LIST rv=\"0\" limit=500"}},
	{"opening a stream from 50", "open 403", PhaseListing, []string{"note log stream fallback: pods is forbidden: denied", "note next list: stream_fallback", "note list started", "LIST rv=\"50\" limit=0 relist"}},
	{"opening a stream from 50", "open 410", PhaseStreamOpening, []string{"note log stream latest: too old", "note next list: expired", "note list started", "stream rv=\"\" relist"}},
	{"opening a stream from 50", "streaming unsupported", PhaseListing, []string{"note log stream fallback: sendInitialEvents is forbidden", "note next list: stream_fallback", "note list started", "LIST rv=\"50\" limit=0 relist"}},
	{"opening a watch from 50", "open 403", PhaseIdle, []string{"note next list: watch_error", "end cycle: pods is forbidden: denied"}},
	{"opening a watch from 50", "open 410", PhaseIdle, []string{"note next list: watch_error", "end cycle: too old"}},
	{"opening a watch from 50", "open 429", PhaseBackoff, []string{"note log watch open backoff: slow down", "note report: slow down", "backoff: slow down"}},
	{"opening a watch from 50", "open refused", PhaseBackoff, []string{"note log watch open backoff: dial: connection refused", "note report: dial: connection refused", "backoff: dial: connection refused"}},
	{"opening a watch from 50", "opened", PhaseWatching, []string{"note watch started"}},
	{"opening a watch from 50", "stop", PhaseStopped, []string{"end cycle"}},
	{"opening a watch from 50", "streaming unsupported", PhaseIdle, []string{"note next list: watch_error", "end cycle: sendInitialEvents is forbidden"}},
	{"resuming", "no snapshot", PhaseStreamOpening, []string{"note list started", "stream rv=\"\""}},
	{"resuming", "snapshot loaded", PhaseSyncing, []string{"publish rv=\"40\"", "sync snapshot rv=\"40\""}},
	{"resuming", "snapshot refused", PhaseStreamOpening, []string{"note log snapshot rejected: checksum mismatch", "note report: checksum mismatch", "note list started", "stream rv=\"\""}},
	{"resuming", "stop", PhaseStopped, []string{"end cycle"}},
	{"stopped", "start", PhaseListing, []string{"note list started", "LIST rv=\"50\" limit=0 relist"}},
	{"stopped", "stop", PhaseStopped, []string{}},
	{"streaming", "ADDED", PhaseStreaming, []string{"event applied"}},
	{"streaming", "DELETED", PhaseStreaming, []string{"event applied"}},
	{"streaming", "ERROR 410", PhaseStreamOpening, []string{"stop watch", "note log stream latest: too old", "note next list: expired", "note list started", "stream rv=\"\""}},
	{"streaming", "ERROR 500", PhaseListing, []string{"stop watch", "note log stream fallback: reflector core: streaming list ended with an error after 0 event(s) without the initial-events-end bookmark; falling back to LIST: Internal error occurred: boom", "note next list: stream_fallback", "note list started", "LIST rv=\"0\" limit=500"}},
	{"streaming", "MODIFIED", PhaseStreaming, []string{"event applied"}},
	{"streaming", "bad data", PhaseStreaming, []string{"note bad data: object of an unexpected type"}},
	{"streaming", "bookmark", PhaseStreaming, []string{"event applied"}},
	{"streaming", "clean close", PhaseStreamOpening, []string{"stop watch", "note log stream reopen", "note list started", "stream rv=\"\""}},
	{"streaming", "decoding error", PhaseListing, []string{"note bad data: undecodable watch frame", "stop watch", "note log stream fallback: reflector core: streaming list ended with an error after 0 event(s) without the initial-events-end bookmark; falling back to LIST: unable to decode an event from the watch stream: bad frame", "note next list: stream_fallback", "note list started", "LIST rv=\"0\" limit=500"}},
	{"streaming", "end bookmark", PhaseSyncing, []string{"event applied", "note log stream complete", "publish rv=\"65\"", "sync stream rv=\"65\""}},
	{"streaming", "stop", PhaseStopped, []string{"stop watch", "end cycle"}},
	{"streaming", "stream silent", PhaseListing, []string{"stop watch", "note log stream fallback: reflector core: streaming list stayed silent for 10s after 0 event(s) without the initial-events-end bookmark; falling back to LIST", "note next list: stream_fallback", "note list started", "LIST rv=\"0\" limit=500"}},
	{"streaming", "very short close", PhaseListing, []string{"stop watch", "note log stream fallback: reflector core: streaming list ended with an error after 0 event(s) without the initial-events-end bookmark; falling back to LIST: very short watch: core: Unexpected watch close - watch lasted less than a second and no items received", "note next list: stream_fallback", "note list started", "LIST rv=\"0\" limit=500"}},
	{"streaming", "warn tick", PhaseStreaming, []string{"note log initial events pending: 10s since start, 0s since last event"}},
	{"streaming, past initial adds", "ADDED", PhaseStreaming, []string{"event applied"}},
	{"streaming, past initial adds", "ERROR 500", PhaseListing, []string{"stop watch", "note log stream fallback: reflector core: streaming list ended with an error after 4 event(s) without the initial-events-end bookmark; falling back to LIST: Internal error occurred: boom", "note next list: stream_fallback", "note list started", "LIST rv=\"0\" limit=500"}},
	{"streaming, past initial adds", "MODIFIED", PhaseStreaming, []string{"event applied"}},
	{"streaming, past initial adds", "bad data", PhaseStreaming, []string{"note bad data: object of an unexpected type"}},
	{"streaming, past initial adds", "end bookmark", PhaseSyncing, []string{"event applied", "note log stream complete", "publish rv=\"65\"", "sync stream rv=\"65\""}},
	{"streaming, past initial adds", "stream silent", PhaseListing, []string{"stop watch", "note log stream fallback: reflector core: streaming list stayed silent for 1s after 4 event(s) without the initial-events-end bookmark; falling back to LIST", "note next list: stream_fallback", "note list started", "LIST rv=\"0\" limit=500"}},
	{"streaming, past initial adds", "very short close", PhaseStreamOpening, []string{"stop watch", "note log stream reopen", "note list started", "stream rv=\"\""}},
	{"streaming, past initial adds", "warn tick", PhaseStreaming, []string{}},
	{"syncing a LIST at 50", "stop", PhaseStopped, []string{"end cycle"}},
	{"syncing a LIST at 50", "store refused list", PhaseIdle, []string{"publish rv=\"30\"", "end cycle: unable to sync list result: store full"}},
	{"syncing a LIST at 50", "synced", PhaseWatchOpening, []string{"note list done: 7 objects in 10s", "note log caches populated", "watch rv=\"50\""}},
	{"syncing a snapshot at 40", "stop", PhaseStopped, []string{"end cycle"}},
	{"syncing a snapshot at 40", "store refused list", PhaseStreamOpening, []string{"publish rv=\"\"", "note log snapshot refused: store full", "note list started", "stream rv=\"\""}},
	{"syncing a snapshot at 40", "synced", PhaseWatchOpening, []string{"note log resumed", "note log caches populated", "watch rv=\"40\""}},
	{"syncing a stream at 65", "stop", PhaseStopped, []string{"stop watch", "end cycle"}},
	{"syncing a stream at 65", "store refused list", PhaseListing, []string{"publish rv=\"30\"", "stop watch", "note log stream fallback: unable to sync watch-list result: store full", "note next list: stream_fallback", "note list started", "LIST rv=\"30\" limit=0 relist"}},
	{"syncing a stream at 65", "synced", PhaseWatching, []string{"note list done: 7 objects in 10s", "note log caches populated", "note watch started"}},
	{"watching from 0", "ADDED", PhaseWatching, []string{"event applied"}},
	{"watching from 0", "DELETED", PhaseWatching, []string{"event applied rv=\"63\""}},
	{"watching from 0", "MODIFIED", PhaseWatching, []string{"event applied rv=\"62\""}},
	{"watching from 0", "bookmark", PhaseWatching, []string{"event applied rv=\"64\"", "arm idle deadline"}},
	{"watching from 0", "clean close", PhaseWatchOpening, []string{"stop watch", "note watch ended: 0 events in 10s", "note log watch close", "watch rv=\"0\""}},
	{"watching from 50", "ADDED", PhaseWatching, []string{"event applied rv=\"61\""}},
	{"watching from 50", "DELETED", PhaseWatching, []string{"event applied rv=\"63\""}},
	{"watching from 50", "ERROR 410", PhaseIdle, []string{"stop watch", "note log watch expired: too old", "note report: too old", "note relist after: too old", "end cycle"}},
	{"watching from 50", "ERROR 500", PhaseWatchOpening, []string{"stop watch", "note log watch resume: Internal error occurred: boom", "note report: Internal error occurred: boom", "watch rv=\"50\""}},
	{"watching from 50", "MODIFIED", PhaseWatching, []string{"event applied rv=\"62\""}},
	{"watching from 50", "bad data", PhaseWatching, []string{"note bad data: object of an unexpected type"}},
	{"watching from 50", "bookmark", PhaseWatching, []string{"event applied rv=\"64\"", "arm idle deadline"}},
	{"watching from 50", "clean close", PhaseWatchOpening, []string{"stop watch", "note watch ended: 0 events in 10s", "note log watch close", "watch rv=\"50\""}},
	{"watching from 50", "decoding error", PhaseWatchOpening, []string{"note bad data: undecodable watch frame", "stop watch", "note log watch resume: unable to decode an event from the watch stream: bad frame", "note report: unable to decode an event from the watch stream: bad frame", "watch rv=\"50\""}},
	{"watching from 50", "end bookmark", PhaseWatching, []string{"event applied rv=\"65\""}},
	{"watching from 50", "idle deadline", PhaseWatchOpening, []string{"stop watch", "note watch ended: 0 events in 10s", "note log watch resume: reflector core: watch received no event or bookmark for 2m0s after a periodic bookmark; reopening it from resourceVersion \"50\"", "note report: reflector core: watch received no event or bookmark for 2m0s after a periodic bookmark; reopening it from resourceVersion \"50\"", "watch rv=\"50\""}},
	{"watching from 50", "resync failed", PhaseIdle, []string{"stop watch", "note log watch ended with error: resync failed", "note report: resync failed", "note relist after: resync failed", "end cycle"}},
	{"watching from 50", "stop", PhaseStopped, []string{"stop watch", "end cycle"}},
	{"watching from 50", "very short close", PhaseIdle, []string{"stop watch", "note watch ended: 0 events in 500ms, short", "note log watch ended with error: very short watch: core: Unexpected watch close - watch lasted less than a second and no items received", "note report: very short watch: core: Unexpected watch close - watch lasted less than a second and no items received", "note relist after: very short watch: core: Unexpected watch close - watch lasted less than a second and no items received", "end cycle"}},
	{"watching from 50, 500s for 2m", "ERROR 500", PhaseIdle, []string{"stop watch", "note log watch ended with error: Internal error occurred: boom", "note report: Internal error occurred: boom", "note relist after: Internal error occurred: boom", "end cycle"}},
	{"watching from 50, 500s for 2m", "decoding error", PhaseIdle, []string{"note bad data: undecodable watch frame", "stop watch", "note log watch ended with error: unable to decode an event from the watch stream: bad frame", "note report: unable to decode an event from the watch stream: bad frame", "note relist after: unable to decode an event from the watch stream: bad frame", "end cycle"}},
	{"watching from 50, deadline armed", "ADDED", PhaseWatching, []string{"event applied rv=\"61\""}},
	{"watching from 50, deadline armed", "bookmark", PhaseWatching, []string{"event applied rv=\"64\""}},
	{"watching from 50, deadline armed", "idle deadline", PhaseWatchOpening, []string{"stop watch", "note watch ended: 3 events in 10s", "note log watch resume: reflector core: watch received no event or bookmark for 2m0s after a periodic bookmark; reopening it from resourceVersion \"50\"", "note report: reflector core: watch received no event or bookmark for 2m0s after a periodic bookmark; reopening it from resourceVersion \"50\"", "watch rv=\"50\""}},
	{"watching from 50, deadline armed", "very short close", PhaseWatchOpening, []string{"stop watch", "note watch ended: 3 events in 500ms", "note log watch close", "watch rv=\"50\""}},
}

var reflectorCoreIgnored = map[Phase][]string{
	PhaseIdle:          {"ADDED", "DELETED", "ERROR 410", "ERROR 500", "LIST 410", "LIST 429 Retry-After", "LIST 500", "LIST ok", "LIST ok in pages", "LIST refused", "LIST refused by store", "LIST rv too large", "MODIFIED", "backoff done", "bad data", "bookmark", "clean close", "decoding error", "end bookmark", "idle deadline", "no snapshot", "open 403", "open 410", "open 429", "open refused", "opened", "resync failed", "snapshot loaded", "snapshot refused", "store refused list", "stream silent", "streaming unsupported", "synced", "very short close", "warn tick"},
	PhaseResuming:      {"ADDED", "DELETED", "ERROR 410", "ERROR 500", "LIST 410", "LIST 429 Retry-After", "LIST 500", "LIST ok", "LIST ok in pages", "LIST refused", "LIST refused by store", "LIST rv too large", "MODIFIED", "backoff done", "bad data", "bookmark", "clean close", "decoding error", "end bookmark", "idle deadline", "open 403", "open 410", "open 429", "open refused", "opened", "resync failed", "start", "store refused list", "stream silent", "streaming unsupported", "synced", "very short close", "warn tick"},
	PhaseStreamOpening: {"ADDED", "DELETED", "ERROR 410", "ERROR 500", "LIST 410", "LIST 429 Retry-After", "LIST 500", "LIST ok", "LIST ok in pages", "LIST refused", "LIST refused by store", "LIST rv too large", "MODIFIED", "backoff done", "bad data", "bookmark", "clean close", "decoding error", "end bookmark", "idle deadline", "no snapshot", "resync failed", "snapshot loaded", "snapshot refused", "start", "store refused list", "stream silent", "synced", "very short close", "warn tick"},
	PhaseStreaming:     {"LIST 410", "LIST 429 Retry-After", "LIST 500", "LIST ok", "LIST ok in pages", "LIST refused", "LIST refused by store", "LIST rv too large", "backoff done", "idle deadline", "no snapshot", "open 403", "open 410", "open 429", "open refused", "opened", "resync failed", "snapshot loaded", "snapshot refused", "start", "store refused list", "streaming unsupported", "synced"},
	PhaseListing:       {"ADDED", "DELETED", "ERROR 410", "ERROR 500", "MODIFIED", "backoff done", "bad data", "bookmark", "clean close", "decoding error", "end bookmark", "idle deadline", "no snapshot", "open 403", "open 410", "open 429", "open refused", "opened", "resync failed", "snapshot loaded", "snapshot refused", "start", "store refused list", "stream silent", "streaming unsupported", "synced", "very short close", "warn tick"},
	PhaseSyncing:       {"ADDED", "DELETED", "ERROR 410", "ERROR 500", "LIST 410", "LIST 429 Retry-After", "LIST 500", "LIST ok", "LIST ok in pages", "LIST refused", "LIST refused by store", "LIST rv too large", "MODIFIED", "backoff done", "bad data", "bookmark", "clean close", "decoding error", "end bookmark", "idle deadline", "no snapshot", "open 403", "open 410", "open 429", "open refused", "opened", "resync failed", "snapshot loaded", "snapshot refused", "start", "stream silent", "streaming unsupported", "very short close", "warn tick"},
	PhaseWatchOpening:  {"ADDED", "DELETED", "ERROR 410", "ERROR 500", "LIST 410", "LIST 429 Retry-After", "LIST 500", "LIST ok", "LIST ok in pages", "LIST refused", "LIST refused by store", "LIST rv too large", "MODIFIED", "backoff done", "bad data", "bookmark", "clean close", "decoding error", "end bookmark", "idle deadline", "no snapshot", "resync failed", "snapshot loaded", "snapshot refused", "start", "store refused list", "stream silent", "synced", "very short close", "warn tick"},
	PhaseWatching:      {"LIST 410", "LIST 429 Retry-After", "LIST 500", "LIST ok", "LIST ok in pages", "LIST refused", "LIST refused by store", "LIST rv too large", "backoff done", "no snapshot", "open 403", "open 410", "open 429", "open refused", "opened", "snapshot loaded", "snapshot refused", "start", "store refused list", "stream silent", "streaming unsupported", "synced", "warn tick"},
	PhaseBackoff:       {"ADDED", "DELETED", "ERROR 410", "ERROR 500", "LIST 410", "LIST 429 Retry-After", "LIST 500", "LIST ok", "LIST ok in pages", "LIST refused", "LIST refused by store", "LIST rv too large", "MODIFIED", "bad data", "bookmark", "clean close", "decoding error", "end bookmark", "idle deadline", "no snapshot", "open 403", "open 410", "open 429", "open refused", "opened", "resync failed", "snapshot loaded", "snapshot refused", "start", "store refused list", "stream silent", "streaming unsupported", "synced", "very short close", "warn tick"},
	PhaseStopped:       {"ADDED", "DELETED", "ERROR 410", "ERROR 500", "LIST 410", "LIST 429 Retry-After", "LIST 500", "LIST ok", "LIST ok in pages", "LIST refused", "LIST refused by store", "LIST rv too large", "MODIFIED", "backoff done", "bad data", "bookmark", "clean close", "decoding error", "end bookmark", "idle deadline", "no snapshot", "open 403", "open 410", "open 429", "open refused", "opened", "resync failed", "snapshot loaded", "snapshot refused", "store refused list", "stream silent", "streaming unsupported", "synced", "very short close", "warn tick"},
}

// TestReflectorCoreStepTable checks every row of the core's table, checks
// that the ignored pairs change nothing, and fails when a pair of a phase
// and an input has no row.
func TestReflectorCoreStepTable(t *testing.T) {
	fixtures, inputs := coreFixtures(), coreInputs()
	covered := map[Phase]map[string]bool{}
	mark := func(p Phase, input string) {
		if covered[p] == nil {
			covered[p] = map[string]bool{}
		}
		if covered[p][input] {
			return
		}
		covered[p][input] = true
	}
	for _, row := range reflectorCoreRows {
		state, ok := fixtures[row.fixture]
		if !ok {
			t.Fatalf("row %q/%q: no fixture %q", row.fixture, row.input, row.fixture)
		}
		in, ok := inputs[row.input]
		if !ok {
			t.Fatalf("row %q/%q: no input %q", row.fixture, row.input, row.input)
		}
		mark(state.phase, row.input)
		t.Run(row.fixture+"/"+row.input, func(t *testing.T) {
			next := state
			actions := next.Step(&in, nil)
			if next.phase != row.phase {
				t.Errorf("phase: got %s, want %s", next.phase, row.phase)
			}
			got := renderActions(actions)
			if strings.Join(got, "\n") != strings.Join(row.actions, "\n") {
				t.Errorf("actions:\ngot  %q\nwant %q", got, row.actions)
			}
			again := state
			if againActions := again.Step(&in, nil); again != next || strings.Join(renderActions(againActions), "\n") != strings.Join(got, "\n") {
				t.Errorf("the same state and input gave another state or other actions")
			}
		})
	}
	for phase, names := range reflectorCoreIgnored {
		for _, name := range names {
			in, ok := inputs[name]
			if !ok {
				t.Fatalf("ignored %s/%q: no such input", phase, name)
			}
			if covered[phase][name] {
				t.Errorf("%s/%q has a row and is listed as ignored", phase, name)
			}
			mark(phase, name)
			for fname, state := range fixtures {
				if state.phase != phase {
					continue
				}
				next := state
				actions := next.Step(&in, nil)
				if next != state {
					t.Errorf("%s/%q: an ignored input changed the state", fname, name)
				}
				if want := []string{fmt.Sprintf("note log unexpected input: %s in %s", in.Kind, phase)}; strings.Join(renderActions(actions), "") != want[0] {
					t.Errorf("%s/%q: got %q, want %q", fname, name, renderActions(actions), want)
				}
			}
		}
	}
	for phase := Phase(0); phase < phaseCount; phase++ {
		for name := range inputs {
			if !covered[phase][name] {
				t.Errorf("no row for phase %s and input %q", phase, name)
			}
		}
	}
}

// coreStep is one step of a core scenario: an input and the actions it must
// lead to.
type coreStep struct {
	input   Input
	actions []string
}

// runCoreScenario feeds the steps to the core from state and checks the
// actions of each; it returns the state reached.
func runCoreScenario(t *testing.T, state State, steps []coreStep) State {
	t.Helper()
	for i, step := range steps {
		actions := state.Step(&step.input, nil)
		if got := renderActions(actions); strings.Join(got, "\n") != strings.Join(step.actions, "\n") {
			t.Fatalf("step %d (%s): actions\ngot  %q\nwant %q", i, step.input.Kind, got, step.actions)
		}
	}
	return state
}

// coreAt is an input of kind at offset after coreT0.
func coreAt(kind InputKind, offset time.Duration) Input {
	return Input{Kind: kind, Now: coreT0.Add(offset)}
}

func coreEventAt(t watch.EventType, rv string, offset time.Duration) Input {
	in := coreAt(InEvent, offset)
	in.EventType, in.RV = t, rv
	return in
}

func coreErrorAt(kind InputKind, err error, offset time.Duration) Input {
	in := coreAt(kind, offset)
	in.Err = err
	return in
}

func coreListedAt(rv string, offset time.Duration) Input {
	in := coreAt(InListed, offset)
	in.RV = rv
	return in
}

// TestReflectorCoreWatchStartsFromTheListedResourceVersion: after a LIST at
// "0", or at "" after the server refused the last resourceVersion, the watch
// starts from the list's resourceVersion, and every event's resourceVersion
// counts from the first. A list that carries no resourceVersion (as fake
// clientsets answer) makes the watch start from "", whose first ADDED events
// are the server's synthetic initial state, in no resourceVersion order:
// their resourceVersions count only after the first other event.
func TestReflectorCoreWatchStartsFromTheListedResourceVersion(t *testing.T) {
	state := NewState(false)
	state.cfg = coreConfig(false)
	state = runCoreScenario(t, state, []coreStep{
		{coreAt(InStart, 0), []string{"note list started", `LIST rv="0" limit=500`}},
		{coreListedAt("50", time.Second), []string{`publish rv="50"`, `sync list rv="50"`}},
		{coreAt(InSynced, 2*time.Second), []string{"note list done: 0 objects in 2s", "note log caches populated", `watch rv="50"`}},
		{coreAt(InOpened, 3*time.Second), []string{"note watch started"}},
		{coreEventAt(watch.Added, "51", 4*time.Second), []string{`event applied rv="51"`}},
		{coreErrorAt(InErrorEvent, apierrors.NewResourceExpired("too old"), 5*time.Second), []string{
			"stop watch", "note log watch expired: too old", "note report: too old", "note relist after: too old", "end cycle"}},
		// The relist asks for the last resourceVersion, unpaged (the watch
		// cache can serve it); the server refuses it, so it asks for the
		// latest data once.
		{coreAt(InStart, 6*time.Second), []string{"note list started", `LIST rv="51" limit=0 relist`}},
		{coreErrorAt(InListFailed, apierrors.NewResourceExpired("too old"), 7*time.Second), []string{`LIST rv="" limit=0 relist retry`}},
		{coreListedAt("70", 8*time.Second), []string{`publish rv="70"`, `sync list rv="70"`}},
		{coreAt(InSynced, 9*time.Second), []string{"note list done: 0 objects in 3s", "note log caches populated", `watch rv="70"`}},
	})
	if state.rvUnavailable {
		t.Errorf("the list at the latest data succeeded, yet the last resourceVersion is still marked unavailable")
	}

	fromEmpty := NewState(false)
	fromEmpty.cfg = coreConfig(false)
	runCoreScenario(t, fromEmpty, []coreStep{
		{coreAt(InStart, 0), []string{"note list started", `LIST rv="0" limit=500`}},
		{coreListedAt("", time.Second), []string{`publish rv=""`, `sync list rv=""`}},
		{coreAt(InSynced, time.Second), []string{"note list done: 0 objects in 1s", "note log caches populated", `watch rv=""`}},
		{coreAt(InOpened, time.Second), []string{"note watch started"}},
		{coreEventAt(watch.Added, "9", 2*time.Second), []string{"event applied"}},
		{coreEventAt(watch.Added, "4", 2*time.Second), []string{"event applied"}},
		{coreEventAt(watch.Modified, "12", 2*time.Second), []string{`event applied rv="12"`}},
		{coreEventAt(watch.Added, "13", 2*time.Second), []string{`event applied rv="13"`}},
	})
}

// TestReflectorCoreArmsIdleDeadlineOnlyOnPeriodicBookmarks: the liveness
// deadline is armed by the first periodic bookmark of each watch, never by
// other events, by a streaming list's end bookmark, or when it is off.
func TestReflectorCoreArmsIdleDeadlineOnlyOnPeriodicBookmarks(t *testing.T) {
	endBookmark := coreEventAt(watch.Bookmark, "20", 2*time.Second)
	endBookmark.InitialEventsEnd = true
	synced := coreAt(InSynced, 3*time.Second)
	synced.Count = 1
	state := NewState(false)
	state.cfg = coreConfig(true)
	state = runCoreScenario(t, state, []coreStep{
		{coreAt(InStart, 0), []string{"note list started", `stream rv=""`}},
		{coreAt(InOpened, time.Second), nil},
		{coreEventAt(watch.Added, "20", 2*time.Second), []string{"event applied"}},
		{endBookmark, []string{"event applied", "note log stream complete", `publish rv="20"`, `sync stream rv="20"`}},
		{synced, []string{"note list done: 1 objects in 3s", "note log caches populated", "note watch started"}},
		{coreEventAt(watch.Modified, "21", 4*time.Second), []string{`event applied rv="21"`}},
		{coreEventAt(watch.Deleted, "22", 5*time.Second), []string{`event applied rv="22"`}},
		{coreEventAt(watch.Bookmark, "23", 65*time.Second), []string{`event applied rv="23"`, "arm idle deadline"}},
		{coreEventAt(watch.Bookmark, "24", 125*time.Second), []string{`event applied rv="24"`}},
		// A reopened watch arms its own deadline with its own first
		// periodic bookmark.
		{coreAt(InClosed, 300*time.Second), []string{"stop watch", "note watch ended: 4 events in 4m57s", "note log watch close", `watch rv="24"`}},
		{coreAt(InOpened, 301*time.Second), []string{"note watch started: restart"}},
		{coreEventAt(watch.Modified, "25", 302*time.Second), []string{`event applied rv="25"`}},
		{coreEventAt(watch.Bookmark, "26", 362*time.Second), []string{`event applied rv="26"`, "arm idle deadline"}},
	})

	off := NewState(false)
	off.cfg = coreConfig(false)
	off.cfg.IdleTimeout = 0
	off.phase, off.lastSyncRV, off.propagateRV, off.watchStart = PhaseWatching, "30", true, coreT0
	runCoreScenario(t, off, []coreStep{
		{coreEventAt(watch.Bookmark, "31", time.Minute), []string{`event applied rv="31"`}},
		{coreEventAt(watch.Bookmark, "32", 2*time.Minute), []string{`event applied rv="32"`}},
	})
}

// TestReflectorCoreInternalErrorRetryWindow: with
// MaxInternalErrorRetryDuration, watches ended by internal errors are
// reopened without a relist while the run of such errors is younger than
// that duration; a run ends after a quiet minute, and the next error starts
// a new one.
func TestReflectorCoreInternalErrorRetryWindow(t *testing.T) {
	boom := apierrors.NewInternalError(errors.New("boom"))
	state := State{cfg: coreConfig(false), phase: PhaseWatching, lastSyncRV: "50", propagateRV: true, watchStart: coreT0}
	state.cfg.MaxInternalRetry = time.Minute
	resume := []string{"stop watch", "note log watch resume: Internal error occurred: boom", "note report: Internal error occurred: boom", `watch rv="50"`}
	relist := []string{"stop watch", "note log watch ended with error: Internal error occurred: boom", "note report: Internal error occurred: boom",
		"note relist after: Internal error occurred: boom", "end cycle"}
	opened := func(offset time.Duration, restart bool) coreStep {
		if restart {
			return coreStep{coreAt(InOpened, offset), []string{"note watch started: restart"}}
		}
		return coreStep{coreAt(InOpened, offset), []string{"note watch started"}}
	}
	state = runCoreScenario(t, state, []coreStep{
		{coreErrorAt(InErrorEvent, boom, 10*time.Second), resume},
		opened(11*time.Second, false),
		{coreErrorAt(InErrorEvent, boom, 40*time.Second), resume},
		opened(41*time.Second, true),
		{coreErrorAt(InErrorEvent, boom, 71*time.Second), relist},
	})
	// A new cycle, and a quiet minute later a new run of errors.
	state.phase, state.watchStart = PhaseWatching, coreT0.Add(80*time.Second)
	runCoreScenario(t, state, []coreStep{
		{coreErrorAt(InErrorEvent, boom, 200*time.Second), resume},
	})
}

// TestReflectorCoreStreamingRetriesAndFallsBackPerCycle: a streaming list
// refused with 429 is retried after a backoff and counted as a new list; one
// whose resourceVersion is too old is retried at once from the latest data;
// one the server cannot serve falls back to LIST for that cycle only, and
// the next cycle streams again.
func TestReflectorCoreStreamingRetriesAndFallsBackPerCycle(t *testing.T) {
	unsupported := &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid, Message: "sendInitialEvents is forbidden"}}
	state := State{cfg: coreConfig(true), lastSyncRV: "50"}
	runCoreScenario(t, state, []coreStep{
		{coreAt(InStart, 0), []string{"note list started", `stream rv="50" relist`}},
		{coreErrorAt(InOpenFailed, apierrors.NewTooManyRequests("slow down", 3), time.Second), []string{
			"note log stream backoff: slow down", "note report: slow down", "backoff: slow down"}},
		{coreAt(InBackoffDone, 5*time.Second), []string{"note list started", `stream rv="50" relist`}},
		{coreErrorAt(InOpenFailed, apierrors.NewResourceExpired("too old"), 6*time.Second), []string{
			"note log stream latest: too old", "note next list: expired", "note list started", `stream rv="" relist`}},
		{coreErrorAt(InOpenFailed, unsupported, 7*time.Second), []string{
			"note log stream fallback: sendInitialEvents is forbidden", "note next list: stream_fallback", "note list started", `LIST rv="" limit=500 relist`}},
		{coreListedAt("80", 8*time.Second), []string{`publish rv="80"`, `sync list rv="80"`}},
		{coreAt(InSynced, 9*time.Second), []string{"note list done: 0 objects in 2s", "note log caches populated", `watch rv="80"`}},
		{coreAt(InStop, 10*time.Second), []string{"end cycle"}},
		{coreAt(InStart, 11*time.Second), []string{"note list started", `stream rv="80" relist`}},
	})
}

// TestReflectorCoreListsFreshAfterASnapshotOrATooLargeVersion: the first
// list after resuming from a snapshot, and the retry after the server said
// the version asked for is too large, must not keep cached objects in place
// of listed ones (equal versions need not mean equal objects then); the
// list after a list the store took may again.
func TestReflectorCoreListsFreshAfterASnapshotOrATooLargeVersion(t *testing.T) {
	resumed := NewState(true)
	resumed.cfg = coreConfig(false)
	loaded := coreAt(InSnapshotLoaded, time.Second)
	loaded.RV, loaded.Count = "40", 3
	resumed = runCoreScenario(t, resumed, []coreStep{
		{coreAt(InStart, 0), []string{"resume"}},
		{loaded, []string{`publish rv="40"`, `sync snapshot rv="40"`}},
	})
	if !resumed.freshList {
		t.Fatalf("the cache was loaded from a snapshot, yet the core does not ask for a fresh list")
	}
	state := NewState(false)
	state.cfg = coreConfig(false)
	state.lastSyncRV = "40"
	state.freshList = true
	state = runCoreScenario(t, state, []coreStep{
		{coreAt(InStart, 0), []string{"note list started", `LIST rv="40" limit=0 relist fresh`}},
		{coreListedAt("50", time.Second), []string{`publish rv="50"`, `sync list rv="50"`}},
		{coreAt(InSynced, 2*time.Second), []string{"note list done: 0 objects in 2s", "note log caches populated", `watch rv="50"`}},
		{coreAt(InOpened, 3*time.Second), []string{"note watch started"}},
		{coreErrorAt(InErrorEvent, apierrors.NewResourceExpired("too old"), 5*time.Second), []string{
			"stop watch", "note log watch expired: too old", "note report: too old", "note relist after: too old", "end cycle"}},
		{coreAt(InStart, 6*time.Second), []string{"note list started", `LIST rv="50" limit=0 relist`}},
		{coreErrorAt(InListFailed, coreTooLargeError(), 7*time.Second), []string{`LIST rv="" limit=0 relist retry fresh`}},
	})
	if !state.freshList {
		t.Errorf("the retry after a too large version is not done yet, yet the core no longer asks for a fresh list")
	}
}

// TestReflectorListPageSize checks how the core chooses the page size of
// LIST requests.
func TestReflectorListPageSize(t *testing.T) {
	cases := []struct {
		name  string
		state State
		want  int64
	}{
		{name: "first list pages by 500", want: 500},
		{name: "relist at a resource version is unpaged", state: State{lastSyncRV: "10"}, want: 0},
		{name: "relist at the latest data pages by 500", state: State{lastSyncRV: "10", rvUnavailable: true}, want: 500},
		{name: "WatchListPageSize wins", state: State{cfg: Config{PageSize: 4}, lastSyncRV: "10"}, want: 4},
		{name: "a paged first list keeps relists paged", state: State{lastSyncRV: "10", pagedSource: true}, want: 500},
		{name: "a store that relists page by page gets pages", state: State{cfg: Config{PageByPage: true}, lastSyncRV: "10"}, want: 500},
		{name: "DisableChunking turns paging off", state: State{cfg: Config{DisableChunking: true, PageSize: 4}}, want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.state.listPageSize(tc.state.relistRV()))
		})
	}
}

// TestReflectorCoreWatchEventIsStep checks that WatchEvent, the path of
// every event of an open watch, moves the state as Step does and says what
// Step's actions say, from every watching fixture and for every event.
func TestReflectorCoreWatchEventIsStep(t *testing.T) {
	fixtures, inputs := coreFixtures(), coreInputs()
	tested := 0
	for fname, state := range fixtures {
		if state.phase != PhaseWatching {
			continue
		}
		for name, in := range inputs {
			if in.Kind != InEvent {
				continue
			}
			tested++
			stepped, fast := state, state
			actions := stepped.Step(&in, nil)
			moveTo, arm := fast.WatchEvent(in.Now, in.EventType, in.RV, in.InitialEventsEnd)
			if fast != stepped {
				t.Errorf("%s/%s: WatchEvent left another state than Step", fname, name)
			}
			want := []Action{{Kind: ActEventApplied, RV: moveTo}}
			if arm {
				want = append(want, Action{Kind: ActArmIdle})
			}
			if got, wantText := renderActions(actions), renderActions(want); strings.Join(got, "\n") != strings.Join(wantText, "\n") {
				t.Errorf("%s/%s: Step gave %q, WatchEvent says %q", fname, name, got, wantText)
			}
		}
	}
	if tested == 0 {
		t.Fatal("no watching fixture met an event")
	}
}
