package cache

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// reflectorBadData classifies data from the server that a Reflector cannot store.
type reflectorBadData int

const (
	// badDataNoObject: an event without an object, or with a nil pointer.
	badDataNoObject reflectorBadData = iota
	// badDataWrongType: an object of another Go type than the expected one.
	badDataWrongType
	// badDataWrongGVK: an unstructured object of another group/version/kind.
	badDataWrongGVK
	// badDataTable: a meta.k8s.io Table, which no Reflector stores.
	badDataTable
	// badDataNoMetadata: an object without object metadata.
	badDataNoMetadata
	// badDataBookmarkWithoutRV: a BOOKMARK whose object has no resourceVersion.
	badDataBookmarkWithoutRV
	// badDataUnknownEventType: an event type that is none of ADDED, MODIFIED, DELETED,
	// BOOKMARK, ERROR.
	badDataUnknownEventType
	// badDataUndecodable: the client could not decode a frame of the watch stream
	// (client-go's watch decoder turns it into an ERROR event with the cause
	// ClientWatchDecoding).
	badDataUndecodable

	reflectorBadDataKinds // the number of kinds above
)

// String names the kind in logs and errors.
func (b reflectorBadData) String() string {
	switch b {
	case badDataNoObject:
		return "event without an object"
	case badDataWrongType:
		return "object of an unexpected type"
	case badDataWrongGVK:
		return "object of an unexpected group/version/kind"
	case badDataTable:
		return "Table object"
	case badDataNoMetadata:
		return "object without object metadata"
	case badDataBookmarkWithoutRV:
		return "bookmark without a resourceVersion"
	case badDataUnknownEventType:
		return "unknown event type"
	case badDataUndecodable:
		return "undecodable watch frame"
	}
	return fmt.Sprintf("bad data kind %d", int(b))
}

// reflectorBadDataCounter counts bad data per kind. The zero value is ready; it is safe
// for concurrent use.
type reflectorBadDataCounter struct {
	counts [reflectorBadDataKinds]atomic.Uint64
}

// badDataCount returns how many times the Reflector received bad data of kind k. It is
// safe for concurrent use; tests and the metrics wiring read it.
func (r *Reflector) badDataCount(k reflectorBadData) uint64 {
	if k < 0 || k >= reflectorBadDataKinds {
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

// reflectorBadEvent describes an event the Reflector drops: its kind, and the
// line it is reported with through utilruntime.HandleErrorWithContext (msg, err
// and keysAndValues; for the kinds client-go also skips, its message and keys).
// The observer counts and reports it (reflector_observer.go).
type reflectorBadEvent struct {
	kind          reflectorBadData
	err           error
	msg           string
	keysAndValues []interface{}
}

func (r *Reflector) badEvent(k reflectorBadData, err error, msg string, keysAndValues ...interface{}) *reflectorBadEvent {
	return &reflectorBadEvent{kind: k, err: err, msg: msg, keysAndValues: keysAndValues}
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
func (r *Reflector) acceptEvent(event watch.Event) (metav1.Object, *reflectorBadEvent) {
	obj := event.Object
	if isNilObject(obj) {
		return nil, r.badEvent(badDataNoObject, fmt.Errorf("%s event without an object (%T)", event.Type, obj), "Unable to understand watch event",
			"reflector", r.name, "eventType", event.Type, "objectType", fmt.Sprintf("%T", obj))
	}
	if r.expectedType != nil {
		if actual := reflect.TypeOf(obj); actual != r.expectedType {
			return nil, r.badEvent(badDataWrongType, nil, "Unexpected watch event object type",
				"reflector", r.name, "expectedType", r.expectedType, "actualType", actual)
		}
	}
	if r.expectedGVK != nil {
		if actual := obj.GetObjectKind().GroupVersionKind(); actual != *r.expectedGVK {
			return nil, r.badEvent(badDataWrongGVK, nil, "Unexpected watch event object gvk",
				"reflector", r.name, "expectedGVK", *r.expectedGVK, "actualGVK", actual)
		}
	}
	if isUnsupportedTableObject(obj) {
		return nil, r.badEvent(badDataTable, nil, "Unsupported watch event object gvk",
			"reflector", r.name, "actualGVK", obj.GetObjectKind().GroupVersionKind())
	}
	objMeta, err := meta.Accessor(obj)
	if err != nil {
		return nil, r.badEvent(badDataNoMetadata, err, "Unable to understand watch event",
			"reflector", r.name, "eventType", event.Type, "objectType", fmt.Sprintf("%T", obj))
	}
	switch event.Type {
	case watch.Added, watch.Modified, watch.Deleted:
	case watch.Bookmark:
		if objMeta.GetResourceVersion() == "" {
			return nil, r.badEvent(badDataBookmarkWithoutRV, errors.New("bookmark without a resourceVersion"), "Unable to understand watch event",
				"reflector", r.name, "eventType", event.Type, "object", objectRef(objMeta), "objectType", fmt.Sprintf("%T", obj))
		}
	default:
		return nil, r.badEvent(badDataUnknownEventType, nil, "Unknown watch event",
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

// clientWatchDecodingCause is the cause client-go's watch decoder puts in the Status of
// the ERROR event it makes when a frame cannot be decoded.
const clientWatchDecodingCause metav1.CauseType = "ClientWatchDecoding"

// isUndecodableFrame reports the error of an ERROR event the client's watch decoder
// made for a frame it could not decode (a 500 with the cause ClientWatchDecoding), unless
// its message shows a broken connection rather than broken data (an HTTP/2 stream
// reset). Such an error ends the watch as any other, so the Reflector relists after its
// backoff (or retries at once within MaxInternalErrorRetryDuration), as client-go does;
// kinformer also counts it as bad data.
func isUndecodableFrame(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status == nil || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Type == clientWatchDecodingCause && !isBrokenStreamMessage(cause.Message) {
			return true
		}
	}
	return false
}

// isBrokenStreamMessage reports a decoding failure that comes from the connection (a
// reset HTTP/2 stream, a lost connection) rather than from the data.
func isBrokenStreamMessage(msg string) bool {
	for _, s := range []string{"stream error", "http2:", "connection reset", "use of closed network connection", "unexpected EOF"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
