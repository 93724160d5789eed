package reflector

import (
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// BadData classifies data from the server that a Reflector cannot store.
type BadData int

const (
	// BadDataNoObject: an event without an object, or with a nil pointer.
	BadDataNoObject BadData = iota
	// BadDataWrongType: an object of another Go type than the expected one.
	BadDataWrongType
	// BadDataWrongGVK: an unstructured object of another group/version/kind.
	BadDataWrongGVK
	// BadDataTable: a meta.k8s.io Table, which no Reflector stores.
	BadDataTable
	// BadDataNoMetadata: an object without object metadata.
	BadDataNoMetadata
	// BadDataBookmarkWithoutRV: a BOOKMARK whose object has no resourceVersion.
	BadDataBookmarkWithoutRV
	// BadDataUnknownEventType: an event type that is none of ADDED,
	// MODIFIED, DELETED, BOOKMARK, ERROR.
	BadDataUnknownEventType
	// BadDataUndecodable: the client could not decode a frame of the watch
	// stream (client-go's watch decoder turns it into an ERROR event with
	// the cause ClientWatchDecoding).
	BadDataUndecodable

	// BadDataKinds is the number of kinds above: counters index arrays of
	// this length by BadData.
	BadDataKinds
)

// String names the kind in logs and errors.
func (b BadData) String() string {
	switch b {
	case BadDataNoObject:
		return "event without an object"
	case BadDataWrongType:
		return "object of an unexpected type"
	case BadDataWrongGVK:
		return "object of an unexpected group/version/kind"
	case BadDataTable:
		return "Table object"
	case BadDataNoMetadata:
		return "object without object metadata"
	case BadDataBookmarkWithoutRV:
		return "bookmark without a resourceVersion"
	case BadDataUnknownEventType:
		return "unknown event type"
	case BadDataUndecodable:
		return "undecodable watch frame"
	}
	return fmt.Sprintf("bad data kind %d", int(b))
}

// BadEvent describes an event the Reflector drops: its kind, and the line it
// is reported with through utilruntime.HandleErrorWithContext (Msg, Err and
// KeysAndValues; no line when Msg is empty). The observer counts and reports
// it.
type BadEvent struct {
	// Kind is what is wrong with the event.
	Kind BadData
	// Err, Msg and KeysAndValues are the line it is reported with.
	Err           error
	Msg           string
	KeysAndValues []interface{}
}

// badDataCounter counts bad data per kind. The zero value is ready; it is safe
// for concurrent use.
type badDataCounter struct {
	counts [BadDataKinds]atomic.Uint64
}

// BadDataCount returns how many times the Reflector received bad data of kind k. It is
// safe for concurrent use; tests and the metrics wiring read it.
func (e *Engine) BadDataCount(k BadData) uint64 {
	if k < 0 || k >= BadDataKinds {
		return 0
	}
	return e.badData.counts[k].Load()
}

// BadDataTotal returns how many times the Reflector received bad data of any kind. It is
// safe for concurrent use.
func (e *Engine) BadDataTotal() uint64 {
	var n uint64
	for i := range e.badData.counts {
		n += e.badData.counts[i].Load()
	}
	return n
}

func (e *Engine) badEvent(k BadData, err error, msg string, keysAndValues ...interface{}) *BadEvent {
	return &BadEvent{Kind: k, Err: err, Msg: msg, KeysAndValues: keysAndValues}
}

// acceptEvent checks that the object of a (non-error) event may be stored: present, of
// the expected type and group/version/kind, not a Table, with object metadata, and of a
// known event type (a bookmark with a resourceVersion). It returns the object's metadata,
// or, for an event the Reflector cannot store, what is wrong with it: the caller drops
// the event and goes on reading the watch, as client-go does.
//
// The report names the event by its type, the object's Go type and, when it has
// metadata, its namespace/name, in client-go's messages; it never carries the object's
// content (a Secret's data). A bookmark without a resourceVersion is reported too.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (e *Engine) acceptEvent(event watch.Event) (metav1.Object, *BadEvent) {
	obj := event.Object
	if isNilObject(obj) {
		return nil, e.badEvent(BadDataNoObject, fmt.Errorf("%s event without an object (%T)", event.Type, obj), "Unable to understand watch event",
			"reflector", e.name, "eventType", event.Type, "objectType", fmt.Sprintf("%T", obj))
	}
	if e.expectedType != nil {
		if actual := reflect.TypeOf(obj); actual != e.expectedType {
			return nil, e.badEvent(BadDataWrongType, nil, "Unexpected watch event object type",
				"reflector", e.name, "expectedType", e.expectedType, "actualType", actual)
		}
	}
	if e.expectedGVK != nil {
		if actual := obj.GetObjectKind().GroupVersionKind(); actual != *e.expectedGVK {
			return nil, e.badEvent(BadDataWrongGVK, nil, "Unexpected watch event object gvk",
				"reflector", e.name, "expectedGVK", *e.expectedGVK, "actualGVK", actual)
		}
	}
	if isUnsupportedTableObject(obj) {
		return nil, e.badEvent(BadDataTable, nil, "Unsupported watch event object gvk",
			"reflector", e.name, "actualGVK", obj.GetObjectKind().GroupVersionKind())
	}
	objMeta, err := meta.Accessor(obj)
	if err != nil {
		return nil, e.badEvent(BadDataNoMetadata, err, "Unable to understand watch event",
			"reflector", e.name, "eventType", event.Type, "objectType", fmt.Sprintf("%T", obj))
	}
	switch event.Type {
	case watch.Added, watch.Modified, watch.Deleted:
	case watch.Bookmark:
		if objMeta.GetResourceVersion() == "" {
			return nil, e.badEvent(BadDataBookmarkWithoutRV, errors.New("bookmark without a resourceVersion"), "Unable to understand watch event",
				"reflector", e.name, "eventType", event.Type, "object", objectRef(objMeta), "objectType", fmt.Sprintf("%T", obj))
		}
	default:
		return nil, e.badEvent(BadDataUnknownEventType, nil, "Unknown watch event",
			"reflector", e.name, "eventType", event.Type, "object", objectRef(objMeta), "objectType", fmt.Sprintf("%T", obj))
	}
	return objMeta, nil
}

// objectRef names an object in a log line: "namespace/name", or "name" for
// a cluster-scoped object. The object itself is never logged: a skipped
// event may carry a Secret's data.
func objectRef(m metav1.Object) string {
	if ns := m.GetNamespace(); ns != "" {
		return ns + "/" + m.GetName()
	}
	return m.GetName()
}
