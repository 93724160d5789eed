package reflector

import (
	"context"
	"time"
)

// The interfaces the engine declares for what it writes to and reports to.
// The package that wraps the engine implements them, or passes its users'
// values through when they have the method set.

// EventSink is where the driver puts the objects of watch events: the
// Reflector's store, or the list a streaming list fills. Its methods are
// called from the cycle's goroutine.
type EventSink interface {
	// Add records that obj was added (an ADDED event).
	Add(obj interface{}) error
	// Update records that obj changed (a MODIFIED event).
	Update(obj interface{}) error
	// Delete records that obj was deleted (a DELETED event).
	Delete(obj interface{}) error
}

// Store is the Reflector's store as the engine writes to it: watch events,
// and Resync every resync period (Resync is called from the resync loop's
// goroutine). A store may also implement BookmarkStore and
// VersionUpdater.
type Store interface {
	EventSink
	// Resync is called every resync period the cycle's ShouldResync
	// allows; an error ends the watch.
	Resync() error
}

// BookmarkStore is an optional interface of a Store: Bookmark gets the
// resourceVersion of every BOOKMARK event of a watch.
type BookmarkStore interface {
	Bookmark(resourceVersion string) error
}

// VersionUpdater is an optional interface of a Store: UpdateResourceVersion
// gets every resourceVersion a watch event moves the store to.
type VersionUpdater interface {
	UpdateResourceVersion(resourceVersion string)
}

// ListSource says where a list comes from.
type ListSource struct {
	// Relist: the store held a state before (an earlier list or a
	// snapshot).
	Relist bool
	// Streamed: a streaming list.
	Streamed bool
	// Loaded: the objects come from a snapshot, transformed already.
	Loaded bool
	// Fresh: the list must not keep a cached object in place of a listed
	// one in the same state.
	Fresh bool
}

// ListSink takes one list: objects in order, pages, and its end. Its methods
// are called from the cycle's goroutine, in that order.
type ListSink interface {
	// Put hands over the next listed object, which the sink owns from then
	// on. An error ends the list.
	Put(obj interface{}) error
	// PageEnd says a page is complete; it may block until the store is
	// ready for the next one, and returns ctx's error when ctx ends first.
	PageEnd(ctx context.Context) error
	// End completes the list, current at resourceVersion, and returns its
	// number of objects. It may block as PageEnd does.
	End(ctx context.Context, resourceVersion string) (int, error)
}

// Lists starts the lists of the Reflector's store.
type Lists interface {
	// BeginList starts a list from source.
	BeginList(source ListSource) ListSink
	// BeginStreamList starts the list a streaming list fills: its events
	// go to events, and finish completes it at the resourceVersion of its
	// end bookmark, returning its number of objects. ctx bounds the waits
	// of its pages.
	BeginStreamList(ctx context.Context, source ListSource) (events EventSink, finish func(resourceVersion string) (int, error))
	// RelistsPageByPage reports whether the store applies relists page by
	// page; relists are then paged even where the server could answer
	// them whole.
	RelistsPageByPage() bool
}

// Admission admits a Reflector's lists (LIST and streaming list) against
// those of other Reflectors.
type Admission interface {
	// Acquire waits for a slot for a list of priority (higher first). It
	// returns ctx's error, and no slot, when ctx ends first; a nil slot
	// and no error when nothing is held back.
	Acquire(ctx context.Context, priority int) (AdmissionSlot, error)
	// Throttled tells the admission that err answered the list that held
	// slot (nil: not known); it does something only for a 429.
	Throttled(err error, slot AdmissionSlot)
}

// AdmissionSlot is one list's permission to run.
type AdmissionSlot interface {
	// Release gives the slot back; ok says the list completed. Later
	// calls do nothing.
	Release(ok bool)
	// Context returns ctx carrying the slot, for the list's requests.
	Context(ctx context.Context) context.Context
}

// Arrivals records when the events of a watch arrive. EventReceived is
// called from the cycle's goroutine once per event and must be cheap; the
// informer's diagnostics implement it directly.
type Arrivals interface {
	// EventReceived: a watch event or bookmark reached the store at now.
	EventReceived(now time.Time)
}

// Stats receives the Reflector's other diagnostics. Its methods are called
// from the cycle's goroutine and must be cheap.
type Stats interface {
	// ListStarting: a list (LIST or streaming list) starts.
	ListStarting()
	// ListSucceeded: a list reached the store at now.
	ListSucceeded(now time.Time)
	// WatchRestarted: a watch was reopened without a relist.
	WatchRestarted()
	// NextList: the reason of the next list.
	NextList(reason ListReason)
	// RelistAfter: the next list follows a watch that ended with err.
	RelistAfter(err error)
	// Confirmed: the server confirmed at "at" that it sent everything up
	// to resourceVersion (a complete list, a bookmark).
	Confirmed(resourceVersion string, at time.Time)
	// RetryAfterCapped: a Retry-After longer than the maximum was cut.
	RetryAfterCapped()
	// RetryAfterUntil: a wait that honours a Retry-After ends at until.
	RetryAfterUntil(until time.Time)
	// ShardIgnored: the server was found ignoring the shard selector at
	// now (at most once per cycle).
	ShardIgnored(now time.Time)
}
