package queue

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Kind is the kind of change a queued delta records. It mirrors the
// caller's own enumeration of delta types; Ops translates.
type Kind uint8

// The kinds of change.
const (
	// Added: the object was created.
	Added Kind = iota + 1
	// Updated: the object changed.
	Updated
	// Deleted: the object is gone; its object is its last known state or
	// a tombstone.
	Deleted
	// Replaced: the object was part of a list.
	Replaced
	// ReplacedAll: a whole list, queued as one delta (Ops.ReplacedAll).
	ReplacedAll
	// Sync: a re-delivery of a known object by a resync.
	Sync
	// SyncAll: a resync queued as one delta (Ops.SyncAll).
	SyncAll
	// Bookmark: the watch reached a resource version (Ops.Bookmark).
	Bookmark
)

// Batchable reports whether deltas of kind k concern one object and may be
// processed together with deltas of other objects.
func (k Kind) Batchable() bool {
	switch k {
	case Added, Updated, Deleted, Replaced, Sync:
		return true
	}
	return false
}

// Ops is what a queue needs to know of its caller's delta type D and of the
// objects it carries. It is a type parameter of the queues, so that a queue
// holds and hands out the caller's own deltas (no conversion per delta);
// its zero value must be usable, so that a zero-value queue is.
type Ops[D any] interface {
	// Make returns a delta of kind k carrying obj.
	Make(k Kind, obj any) D
	// Kind returns d's kind.
	Kind(d D) Kind
	// Object returns d's object.
	Object(d D) any
	// Box returns ds as the value the consumer is handed for a pop of one
	// key (the caller's list-of-deltas type, boxed).
	Box(ds []D) any
	// Unwrap prepares obj for its key: the newest object of a list of
	// deltas (err is the key error of an empty list), the object of a single
	// delta when delta is true, and the key of a tombstone (keyed is true).
	// Any other obj is returned as it is, for the key function.
	Unwrap(obj any, delta bool) (inner any, key string, keyed bool, err error)
	// Tombstone returns the placeholder of a deletion whose final state is
	// unknown: key, and the last known state (may be nil).
	Tombstone(key string, obj any) any
	// AsTombstone recognises a Tombstone and returns its key and object.
	AsTombstone(obj any) (key string, last any, ok bool)
	// ReplacedAll returns the object of a ReplacedAll delta; keys[i] is the
	// key of objs[i] when keys is not nil.
	ReplacedAll(resourceVersion string, objs []any, keys []string) any
	// Bookmark returns the object of a Bookmark delta; listEnd marks the
	// one ending a list applied page by page.
	Bookmark(resourceVersion string, listEnd bool) any
	// SyncAll returns the object of a SyncAll delta.
	SyncAll() any
	// DefaultKey computes a key when the queue has no key function.
	DefaultKey(obj any) (string, error)
	// KeyError wraps the failure of a key function.
	KeyError(obj any, err error) error
	// Closed is the error of a pop, or a wait, on a closed queue.
	Closed() error
	// Refused reports whether err, from the transform, refuses the object
	// alone (it is dropped; a deletion of it is queued without it).
	Refused(err error) bool
	// Meta returns obj's object metadata, or an error when it has none.
	Meta(obj any) (metav1.Object, error)
}

// KeyLister lists the keys, and gets the objects, a consumer already holds.
type KeyLister interface {
	ListKeys() []string
	GetByKey(key string) (value any, exists bool, err error)
}

// Gauge is a metric set to a value.
type Gauge interface {
	Set(float64)
}

// Histogram is a metric recording observations.
type Histogram interface {
	Observe(float64)
}

// keyOf computes the key of an object entering or leaving a queue: the
// newest object of a list of deltas (of a single delta too, when delta is
// true), the key of a tombstone, else keyFunc's (Ops.DefaultKey when nil).
// Failures are Ops.KeyError. Ops.Unwrap does the unwrapping in one call.
func keyOf[D any, O Ops[D]](keyFunc func(any) (string, error), obj any, delta bool) (string, error) {
	var o O
	inner, key, keyed, err := o.Unwrap(obj, delta)
	if err != nil {
		return "", err
	}
	if keyed {
		return key, nil
	}
	if keyFunc == nil {
		key, err = o.DefaultKey(inner)
	} else {
		key, err = keyFunc(inner)
	}
	if err != nil {
		return "", o.KeyError(inner, err)
	}
	return key, nil
}
