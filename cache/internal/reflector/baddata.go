package reflector

import "fmt"

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
	Kind          BadData
	Err           error
	Msg           string
	KeysAndValues []interface{}
}
