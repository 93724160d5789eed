package fanout

// Kind tells which handler method a Notification is for.
type Kind uint8

const (
	// Add is a notification for Handler.OnAdd.
	Add Kind = iota + 1
	// Update is a notification for Handler.OnUpdate.
	Update
	// Delete is a notification for Handler.OnDelete.
	Delete
)

// Notification is one event for a handler. Listeners store it by value in
// their buffers, so queuing one allocates nothing beyond amortised slice
// growth.
type Notification struct {
	// Kind is the handler method the notification is for.
	Kind Kind
	// Initial marks an Add that belongs to the initial list: it counts for
	// the listener's HasSynced until the handler has processed it.
	Initial bool
	// Resync marks an Update whose old and new resource versions are equal
	// (a resync, or an unchanged object in a relist); Distribute gives it
	// only to the listeners due for a resync.
	Resync bool
	// OldObj is the old object of an Update and the object of a Delete.
	OldObj any
	// NewObj is the object of an Add and the new object of an Update.
	NewObj any
}

// Handler is what a listener delivers notifications to: the method set of
// client-go's ResourceEventHandler, so that such a handler is passed
// through as it is. A listener calls it from its own goroutine, one
// notification at a time, in order.
type Handler interface {
	OnAdd(obj any, isInInitialList bool)
	OnUpdate(oldObj, newObj any)
	OnDelete(obj any)
}

// Histogram records observations (here: the seconds a handler spends on a
// notification). Implementations must be safe for concurrent use.
type Histogram interface {
	Observe(float64)
}
