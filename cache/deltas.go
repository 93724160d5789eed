package cache

import "errors"

// DeltaType names the kind of change a Delta records.
type DeltaType string

// The kinds of change queued by DeltaFIFO and RealFIFO.
const (
	// Added: the object was created (watch ADDED event).
	Added DeltaType = "Added"
	// Updated: the object changed (watch MODIFIED event).
	Updated DeltaType = "Updated"
	// Deleted: the object is gone. Object holds its last known state, or a
	// DeletedFinalStateUnknown when the deletion was inferred by a relist.
	Deleted DeltaType = "Deleted"
	// Replaced: the object was part of a relist (or the initial list); it may
	// or may not have changed. DeltaFIFO emits it only with
	// EmitDeltaTypeReplaced (Sync otherwise).
	Replaced DeltaType = "Replaced"
	// ReplacedAll: a whole relist queued atomically by a RealFIFO with
	// AtomicEvents. Object is a ReplacedAllInfo holding the full list.
	ReplacedAll DeltaType = "ReplacedAll"
	// Sync: a synthetic re-delivery of a known object by a periodic resync.
	Sync DeltaType = "Sync"
	// SyncAll: a periodic resync queued atomically by a RealFIFO with
	// AtomicEvents; the consumer re-delivers every object it knows. Object is
	// a SyncAllInfo.
	SyncAll DeltaType = "SyncAll"
	// Bookmark: the watch reached a resource version without object changes.
	// Object is a BookmarkInfo.
	Bookmark DeltaType = "Bookmark"
)

// deltaTypeBatchable reports whether deltas of type t concern one object and
// may be processed together with deltas of other objects.
func deltaTypeBatchable(t DeltaType) bool {
	switch t {
	case Added, Updated, Deleted, Replaced, Sync:
		return true
	}
	return false
}

// Delta is one change: its Type, and the object's state after the change (for
// Deleted, the last state known before the deletion).
type Delta struct {
	Type   DeltaType
	Object interface{}
}

// Deltas is a list of changes to one object, oldest first.
type Deltas []Delta

// Oldest returns a pointer to the first (oldest) Delta, or nil when d is empty.
func (d Deltas) Oldest() *Delta {
	if len(d) == 0 {
		return nil
	}
	return &d[0]
}

// Newest returns a pointer to the last (newest) Delta, or nil when d is empty.
func (d Deltas) Newest() *Delta {
	if len(d) == 0 {
		return nil
	}
	return &d[len(d)-1]
}

// ErrZeroLengthDeltasObject is the Err of the KeyError returned when asked for
// the key of an empty Deltas.
var ErrZeroLengthDeltasObject = errors.New("0 length Deltas object; can't get key")
