package cache

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache/internal/apply"
	"github.com/kinformer/kinformer/cache/internal/queue"
)

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

// deltaOps is the queue engine's view of Delta (queue.Ops): the queues of
// this package are the engine's queues instantiated with Delta, so that
// they hold and pop Deltas as they are.
type deltaOps struct{}

var _ queue.Ops[Delta] = deltaOps{}

// deltaTypes maps the engine's kinds to DeltaTypes.
var deltaTypes = [...]DeltaType{
	queue.Added:       Added,
	queue.Updated:     Updated,
	queue.Deleted:     Deleted,
	queue.Replaced:    Replaced,
	queue.ReplacedAll: ReplacedAll,
	queue.Sync:        Sync,
	queue.SyncAll:     SyncAll,
	queue.Bookmark:    Bookmark,
}

// Make implements queue.Ops.
func (deltaOps) Make(k queue.Kind, obj any) Delta { return Delta{Type: deltaTypes[k], Object: obj} }

// Kind implements queue.Ops.
func (deltaOps) Kind(d Delta) queue.Kind {
	k, _ := engineKinds(d.Type)
	return k
}

// engineKinds returns what a DeltaType is to the queue engine and to the
// apply engine, which each declare their own kinds: one switch for both.
// An unknown type is the queue's zero kind and apply.Unknown.
func engineKinds(t DeltaType) (queue.Kind, apply.Kind) {
	switch t {
	case Added:
		return queue.Added, apply.Added
	case Updated:
		return queue.Updated, apply.Updated
	case Deleted:
		return queue.Deleted, apply.Deleted
	case Replaced:
		return queue.Replaced, apply.Replaced
	case ReplacedAll:
		return queue.ReplacedAll, apply.ReplacedAll
	case Sync:
		return queue.Sync, apply.Sync
	case SyncAll:
		return queue.SyncAll, apply.SyncAll
	case Bookmark:
		return queue.Bookmark, apply.Bookmark
	}
	return 0, apply.Unknown
}

// Object implements queue.Ops.
func (deltaOps) Object(d Delta) any { return d.Object }

// Box implements queue.Ops.
func (deltaOps) Box(ds []Delta) any { return Deltas(ds) }

// Unwrap implements queue.Ops.
func (deltaOps) Unwrap(obj any, delta bool) (any, string, bool, error) {
	switch o := obj.(type) {
	case Deltas:
		if len(o) == 0 {
			return nil, "", false, KeyError{Obj: obj, Err: ErrZeroLengthDeltasObject}
		}
		obj = o[len(o)-1].Object
	case Delta:
		if delta {
			obj = o.Object
		}
	}
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return obj, d.Key, true, nil
	}
	return obj, "", false, nil
}

// Tombstone implements queue.Ops.
func (deltaOps) Tombstone(key string, obj any) any {
	return DeletedFinalStateUnknown{Key: key, Obj: obj}
}

// AsTombstone implements queue.Ops.
func (deltaOps) AsTombstone(obj any) (string, any, bool) {
	d, ok := obj.(DeletedFinalStateUnknown)
	return d.Key, d.Obj, ok
}

// ReplacedAll implements queue.Ops.
func (deltaOps) ReplacedAll(rv string, objs []any, keys []string) any {
	return ReplacedAllInfo{ResourceVersion: rv, Objects: objs, keys: keys}
}

// Bookmark implements queue.Ops.
func (deltaOps) Bookmark(rv string, listEnd bool) any {
	return BookmarkInfo{ResourceVersion: rv, listEnd: listEnd}
}

// SyncAll implements queue.Ops.
func (deltaOps) SyncAll() any { return SyncAllInfo{} }

// DefaultKey implements queue.Ops.
func (deltaOps) DefaultKey(obj any) (string, error) { return MetaNamespaceKeyFunc(obj) }

// KeyError implements queue.Ops.
func (deltaOps) KeyError(obj any, err error) error { return KeyError{Obj: obj, Err: err} }

// Closed implements queue.Ops.
func (deltaOps) Closed() error { return ErrFIFOClosed }

// Refused implements queue.Ops.
func (deltaOps) Refused(err error) bool { return isRefusedObject(err) }

// Meta implements queue.Ops.
func (deltaOps) Meta(obj any) (metav1.Object, error) { return storeMetaAccessor(obj) }
