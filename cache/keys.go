package cache

import (
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache/internal/store"
)

// KeyFunc computes the store key of an object. It must be deterministic: the
// same object always yields the same key. It returns an error for objects it
// cannot key; stores wrap that error in a KeyError.
type KeyFunc func(obj interface{}) (string, error)

// KeyError is the error a store returns when its KeyFunc fails on an object.
// Obj is the object that could not be keyed and Err the KeyFunc's error;
// errors.Is and errors.As see through it to Err.
type KeyError struct {
	Obj interface{}
	Err error
}

// Error describes the object and the cause.
func (k KeyError) Error() string {
	return fmt.Sprintf("couldn't create key for object %+v: %v", k.Obj, k.Err)
}

// Unwrap returns the KeyFunc's error, for errors.Is and errors.As.
func (k KeyError) Unwrap() error {
	return k.Err
}

// ExplicitKey is a key that stands for an object: MetaNamespaceKeyFunc and
// DeletionHandlingMetaNamespaceKeyFunc return it unchanged. Use it to delete
// or look up by key when only the key is at hand.
type ExplicitKey string

// TransformFunc rewrites an object before a store or queue keeps it, for
// example to drop fields the program never reads and so save memory. It may
// mutate and return its argument or return a different object; an error
// rejects the object. Informers call it on their hot path, once for every
// object received, so it must be fast. A TransformFunc may be handed an object
// it has already transformed (for example when a store is replaced with its
// own contents), so it should be idempotent.
type TransformFunc func(interface{}) (interface{}, error)

// KeyLister is anything that can list the keys it holds. Implementations used
// by the queues must be safe for concurrent use.
type KeyLister interface {
	ListKeys() []string
}

// KeyGetter is anything that can look up a value by its key.
type KeyGetter interface {
	// GetByKey returns the value stored under key; exists is false when
	// there is none.
	GetByKey(key string) (value interface{}, exists bool, err error)
}

// KeyListerGetter is both a KeyLister and a KeyGetter; the delta FIFOs use
// one (usually the informer's Indexer) to learn which objects already exist.
type KeyListerGetter interface {
	KeyLister
	KeyGetter
}

// DeletedFinalStateUnknown stands for an object that was deleted while the
// watch was disconnected, so its final state was never observed. Key is the
// object's store key and Obj the last known (possibly stale) state of the
// object. Queues emit it in Deleted deltas found during a relist, and delete
// handlers receive it in place of the object.
type DeletedFinalStateUnknown struct {
	Key string
	Obj interface{}
}

// DeletionHandlingMetaNamespaceKeyFunc is MetaNamespaceKeyFunc extended to
// tombstones: for a DeletedFinalStateUnknown, or a non-nil pointer to one, it
// returns the tombstone's Key. Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
func DeletionHandlingMetaNamespaceKeyFunc(obj interface{}) (string, error) {
	switch d := obj.(type) {
	case DeletedFinalStateUnknown:
		return d.Key, nil
	case *DeletedFinalStateUnknown:
		if d != nil {
			return d.Key, nil
		}
	}
	return MetaNamespaceKeyFunc(obj)
}

// DeletionHandlingObjectToName is ObjectToName extended to tombstones: for a
// DeletedFinalStateUnknown (value or non-nil pointer) it parses the
// tombstone's Key, returning ParseObjectName's error for a malformed key.
func DeletionHandlingObjectToName(obj interface{}) (ObjectName, error) {
	switch d := obj.(type) {
	case DeletedFinalStateUnknown:
		return ParseObjectName(d.Key)
	case *DeletedFinalStateUnknown:
		if d != nil {
			return ParseObjectName(d.Key)
		}
	}
	return ObjectToName(obj)
}

// storeMetaAccessor returns the object metadata of obj, or an error for nil
// values, typed nil pointers and values that carry no object metadata: the
// store engine's reader (store.ObjectMeta), so that keys, indices and
// resource versions all read metadata alike.
func storeMetaAccessor(obj interface{}) (metav1.Object, error) {
	return store.ObjectMeta(obj)
}

// storeIsNilPointer reports whether v holds a nil pointer of some type.
func storeIsNilPointer(v interface{}) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
