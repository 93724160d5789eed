package cache

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
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

// skipEvent counts an event of kind k that the Reflector drops, and reports it through
// utilruntime.HandleErrorWithContext with msg, err and keysAndValues: for the kinds
// client-go also skips, its message and keys.
func (r *Reflector) skipEvent(ctx context.Context, k reflectorBadData, err error, msg string, keysAndValues ...interface{}) {
	r.badData.counts[k].Add(1)
	utilruntime.HandleErrorWithContext(klog.NewContext(ctx, r.loggerFor(ctx)), err, msg, keysAndValues...)
}

// acceptEvent checks that the object of a (non-error) event may be stored: present, of
// the expected type and group/version/kind, not a Table, with object metadata, and of a
// known event type (a bookmark with a resourceVersion). It returns the object's metadata
// and true, or, for an event the Reflector cannot store, counts and logs it and returns
// false: the caller drops the event and goes on reading the watch, as client-go does.
func (r *Reflector) acceptEvent(ctx context.Context, event watch.Event) (metav1.Object, bool) {
	obj := event.Object
	if isNilObject(obj) {
		r.skipEvent(ctx, badDataNoObject, fmt.Errorf("%s event without an object (%T)", event.Type, obj), "Unable to understand watch event",
			"reflector", r.name, "event", event)
		return nil, false
	}
	if r.expectedType != nil {
		if actual := reflect.TypeOf(obj); actual != r.expectedType {
			r.skipEvent(ctx, badDataWrongType, nil, "Unexpected watch event object type",
				"reflector", r.name, "expectedType", r.expectedType, "actualType", actual)
			return nil, false
		}
	}
	if r.expectedGVK != nil {
		if actual := obj.GetObjectKind().GroupVersionKind(); actual != *r.expectedGVK {
			r.skipEvent(ctx, badDataWrongGVK, nil, "Unexpected watch event object gvk",
				"reflector", r.name, "expectedGVK", *r.expectedGVK, "actualGVK", actual)
			return nil, false
		}
	}
	if isUnsupportedTableObject(obj) {
		r.skipEvent(ctx, badDataTable, nil, "Unsupported watch event object gvk",
			"reflector", r.name, "actualGVK", obj.GetObjectKind().GroupVersionKind())
		return nil, false
	}
	objMeta, err := meta.Accessor(obj)
	if err != nil {
		r.skipEvent(ctx, badDataNoMetadata, err, "Unable to understand watch event", "reflector", r.name, "event", event)
		return nil, false
	}
	switch event.Type {
	case watch.Added, watch.Modified, watch.Deleted:
	case watch.Bookmark:
		if objMeta.GetResourceVersion() == "" {
			r.skipEvent(ctx, badDataBookmarkWithoutRV, errors.New("bookmark without a resourceVersion"), "Unable to understand watch event",
				"reflector", r.name, "event", event)
			return nil, false
		}
	default:
		r.skipEvent(ctx, badDataUnknownEventType, nil, "Unknown watch event", "reflector", r.name, "event", event)
		return nil, false
	}
	return objMeta, true
}

// clientWatchDecodingCause is the cause client-go's watch decoder puts in the Status of
// the ERROR event it makes when a frame cannot be decoded.
const clientWatchDecodingCause metav1.CauseType = "ClientWatchDecoding"

// watchErrorEvent turns the object of an ERROR event into the error that ends the watch,
// as client-go does: a Status becomes its *StatusError. An ERROR made by the client's
// decoder for a frame it could not decode (a 500 with the cause ClientWatchDecoding) is
// such an error too, so the watch ends and the Reflector relists after its backoff (or
// retries at once within MaxInternalErrorRetryDuration); it is also counted as bad data
// unless its message shows a broken connection rather than broken data (an HTTP/2 stream
// reset).
func (r *Reflector) watchErrorEvent(obj kruntime.Object) error {
	if status, ok := obj.(*metav1.Status); ok && status != nil && status.Details != nil {
		for _, cause := range status.Details.Causes {
			if cause.Type == clientWatchDecodingCause && !isBrokenStreamMessage(cause.Message) {
				r.badData.counts[badDataUndecodable].Add(1)
				break
			}
		}
	}
	return watchErrorEventToError(obj)
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
