package cache

import (
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kinformer/kinformer/cache/internal/reflector"
)

// reflectorBadDataCounter counts bad data per kind. The zero value is ready; it is safe
// for concurrent use.
type reflectorBadDataCounter struct {
	counts [reflector.BadDataKinds]atomic.Uint64
}

// badDataCount returns how many times the Reflector received bad data of kind k. It is
// safe for concurrent use; tests and the metrics wiring read it.
func (r *Reflector) badDataCount(k reflector.BadData) uint64 {
	if k < 0 || k >= reflector.BadDataKinds {
		return 0
	}
	return r.badData.counts[k].Load()
}

// badDataTotal returns how many times the Reflector received bad data of any kind. It is
// safe for concurrent use.
func (r *Reflector) badDataTotal() uint64 {
	var n uint64
	for i := range r.badData.counts {
		n += r.badData.counts[i].Load()
	}
	return n
}

func (r *Reflector) badEvent(k reflector.BadData, err error, msg string, keysAndValues ...interface{}) *reflector.BadEvent {
	return &reflector.BadEvent{Kind: k, Err: err, Msg: msg, KeysAndValues: keysAndValues}
}

// acceptEvent checks that the object of a (non-error) event may be stored: present, of
// the expected type and group/version/kind, not a Table, with object metadata, and of a
// known event type (a bookmark with a resourceVersion). It returns the object's metadata,
// or, for an event the Reflector cannot store, what is wrong with it: the caller drops
// the event and goes on reading the watch, as client-go does.
//
// The report names the event by its type, the object's Go type and, when it has
// metadata, its namespace/name. Difference from client-go, which logs the whole event
// (object included, a Secret's data too) for an unknown event type, an object without
// metadata and a bookmark without a resourceVersion: kinformer keeps client-go's
// messages but never logs the object's content.
func (r *Reflector) acceptEvent(event watch.Event) (metav1.Object, *reflector.BadEvent) {
	obj := event.Object
	if isNilObject(obj) {
		return nil, r.badEvent(reflector.BadDataNoObject, fmt.Errorf("%s event without an object (%T)", event.Type, obj), "Unable to understand watch event",
			"reflector", r.name, "eventType", event.Type, "objectType", fmt.Sprintf("%T", obj))
	}
	if r.expectedType != nil {
		if actual := reflect.TypeOf(obj); actual != r.expectedType {
			return nil, r.badEvent(reflector.BadDataWrongType, nil, "Unexpected watch event object type",
				"reflector", r.name, "expectedType", r.expectedType, "actualType", actual)
		}
	}
	if r.expectedGVK != nil {
		if actual := obj.GetObjectKind().GroupVersionKind(); actual != *r.expectedGVK {
			return nil, r.badEvent(reflector.BadDataWrongGVK, nil, "Unexpected watch event object gvk",
				"reflector", r.name, "expectedGVK", *r.expectedGVK, "actualGVK", actual)
		}
	}
	if isUnsupportedTableObject(obj) {
		return nil, r.badEvent(reflector.BadDataTable, nil, "Unsupported watch event object gvk",
			"reflector", r.name, "actualGVK", obj.GetObjectKind().GroupVersionKind())
	}
	objMeta, err := meta.Accessor(obj)
	if err != nil {
		return nil, r.badEvent(reflector.BadDataNoMetadata, err, "Unable to understand watch event",
			"reflector", r.name, "eventType", event.Type, "objectType", fmt.Sprintf("%T", obj))
	}
	switch event.Type {
	case watch.Added, watch.Modified, watch.Deleted:
	case watch.Bookmark:
		if objMeta.GetResourceVersion() == "" {
			return nil, r.badEvent(reflector.BadDataBookmarkWithoutRV, errors.New("bookmark without a resourceVersion"), "Unable to understand watch event",
				"reflector", r.name, "eventType", event.Type, "object", objectRef(objMeta), "objectType", fmt.Sprintf("%T", obj))
		}
	default:
		return nil, r.badEvent(reflector.BadDataUnknownEventType, nil, "Unknown watch event",
			"reflector", r.name, "eventType", event.Type, "object", objectRef(objMeta), "objectType", fmt.Sprintf("%T", obj))
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
