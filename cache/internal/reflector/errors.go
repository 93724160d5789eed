package reflector

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// The core's timing and paging figures; they are client-go's.
const (
	// ShortWatch: a watch that ends sooner than this without an event is
	// an error (ShortWatchError).
	ShortWatch = time.Second
	// DefaultPageSize is the page size of LIST requests when nothing else
	// decides it (the default of client-go's pager).
	DefaultPageSize = 500
	// InternalErrorQuietPeriod: internal server errors in a watch are
	// retried without a relist while they keep recurring within this
	// period (see Config.MaxInternalRetry).
	InternalErrorQuietPeriod = time.Minute
	// InitialEventsWarnInterval: while a streaming list waits for its end
	// bookmark, a warning is logged when no event arrived for this long.
	InitialEventsWarnInterval = 10 * time.Second
)

// ListReason is why the next list is made, as the core tells it with
// NoteNextList. The reasons a list can have besides these (the first one, a
// retry after a failed list, after a very short watch) are the observer's to
// keep.
type ListReason uint8

const (
	// ListReasonExpired: the resourceVersion asked for is expired or too
	// new.
	ListReasonExpired ListReason = iota + 1
	// ListReasonWatchError: a watch could not be opened.
	ListReasonWatchError
	// ListReasonStreamFallback: a streaming list failed, this cycle lists.
	ListReasonStreamFallback
)

// String names the reason as client-go's relist metrics do.
func (r ListReason) String() string {
	switch r {
	case ListReasonExpired:
		return "expired"
	case ListReasonWatchError:
		return "watch_error"
	case ListReasonStreamFallback:
		return "stream_fallback"
	}
	return fmt.Sprintf("reason(%d)", int(r))
}

// ShortWatchError is the error of a watch that closed within ShortWatch of
// being opened without delivering an event. Its message is that of the
// public VeryShortWatchError, to which the package that wraps the engine
// maps it before a user sees it.
type ShortWatchError struct {
	// Name is the Reflector's name.
	Name string
}

// Error implements error.
func (e *ShortWatchError) Error() string {
	return fmt.Sprintf("very short watch: %s: Unexpected watch close - watch lasted less than a second and no items received", e.Name)
}

// IdleTimeoutError is the error of a watch whose armed liveness deadline
// (Config.IdleTimeout) passed. Its message is that of the public
// WatchIdleTimeoutError, to which the package that wraps the engine maps it
// before a user sees it.
type IdleTimeoutError struct {
	// Name is the Reflector's name.
	Name string
	// Timeout is the liveness deadline that passed.
	Timeout time.Duration
	// ResourceVersion is the version the watch is reopened from.
	ResourceVersion string
}

// Error implements error.
func (e *IdleTimeoutError) Error() string {
	return fmt.Sprintf("reflector %s: watch received no event or bookmark for %v after a periodic bookmark; reopening it from resourceVersion %q", e.Name, e.Timeout, e.ResourceVersion)
}

func isIdleTimeout(err error) bool {
	var idle *IdleTimeoutError
	return errors.As(err, &idle)
}

// IncompleteStreamError is the error of a streaming list whose watch ended
// with an error that is not retried, or received no event for the bound of
// its initial events, before the bookmark that ends the initial events
// arrived. The Reflector then falls back to LIST for that cycle; the error
// is logged, never returned or reported.
type IncompleteStreamError struct {
	// Name is the Reflector's name.
	Name string
	// Events is the number of events received before it ended.
	Events int
	// SilentFor, when positive, is how long the stream went without an
	// event before the Reflector stopped it.
	SilentFor time.Duration
	// Err is the error the watch ended with; nil when it went silent.
	Err error
}

// Error implements error.
func (e *IncompleteStreamError) Error() string {
	const what = "without the initial-events-end bookmark; falling back to LIST"
	if e.SilentFor > 0 {
		return fmt.Sprintf("reflector %s: streaming list stayed silent for %v after %d event(s) %s", e.Name, e.SilentFor, e.Events, what)
	}
	return fmt.Sprintf("reflector %s: streaming list ended with an error after %d event(s) %s: %v", e.Name, e.Events, what, e.Err)
}

// Unwrap returns the error the watch ended with, if any.
func (e *IncompleteStreamError) Unwrap() error { return e.Err }

// SinkError is the error of a list the store refused: a failed LIST ends
// the cycle with it as it is ("unable to sync list result"), not as a LIST
// that failed.
type SinkError struct {
	// Err is the store's error.
	Err error
}

// Error implements error.
func (e *SinkError) Error() string {
	return fmt.Sprintf("unable to sync list result: %v", e.Err)
}

// Unwrap returns the store's error.
func (e *SinkError) Unwrap() error { return e.Err }

// IsExpired reports a 410: the resource version asked for is no longer
// available (reason Expired, or Gone from servers older than 1.18).
func IsExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// IsTooLargeResourceVersion reports that the resource version asked for is
// newer than the server has seen, in the forms servers use (a status cause
// since 1.18.6; a Timeout with a message before).
func IsTooLargeResourceVersion(err error) bool {
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return true
	}
	if !apierrors.IsTimeout(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status == nil {
		return false
	}
	details := status.Status().Details
	if details == nil {
		return false
	}
	const tooLarge = "Too large resource version"
	for _, cause := range details.Causes {
		if cause.Message == tooLarge {
			return true
		}
	}
	return strings.Contains(status.Status().Message, tooLarge)
}

// isWatchErrorRetriable reports errors after which the watch is reopened
// from the same resource version after a backoff, without a relist: the
// server is unreachable (connection refused) or overloaded (429).
func isWatchErrorRetriable(err error) bool {
	return utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err)
}

// ClientWatchDecodingCause is the cause client-go's watch decoder puts in
// the Status of the ERROR event it makes when a frame cannot be decoded.
const ClientWatchDecodingCause metav1.CauseType = "ClientWatchDecoding"

// isUndecodableFrame reports the error of an ERROR event the client's watch
// decoder made for a frame it could not decode (a 500 with the cause
// ClientWatchDecoding), unless its message shows a broken connection rather
// than broken data (an HTTP/2 stream reset). Such an error ends the watch as
// any other, so the Reflector relists after its backoff (or retries at once
// within MaxInternalRetry), as client-go does; the core also notes it as bad
// data.
func isUndecodableFrame(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status == nil || status.Status().Details == nil {
		return false
	}
	for _, cause := range status.Status().Details.Causes {
		if cause.Type == ClientWatchDecodingCause && !isBrokenStreamMessage(cause.Message) {
			return true
		}
	}
	return false
}

// isBrokenStreamMessage reports a decoding failure that comes from the
// connection (a reset HTTP/2 stream, a lost connection) rather than from the
// data.
func isBrokenStreamMessage(msg string) bool {
	for _, s := range []string{"stream error", "http2:", "connection reset", "use of closed network connection", "unexpected EOF"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// watchErrorEventToError turns the object of a watch ERROR event into an
// error (a *StatusError for a Status). Another object gives an error naming
// its type only: its content may be a Secret's data, and the error goes to
// logs and to the watch error handler. (client-go's UnexpectedObjectError
// prints the whole object.)
func watchErrorEventToError(obj kruntime.Object) error {
	if isNilObject(obj) {
		return errors.New("watch error event without a status")
	}
	err := apierrors.FromObject(obj)
	var unexpected *apierrors.UnexpectedObjectError
	if errors.As(err, &unexpected) {
		kind := fmt.Sprintf("%T", obj)
		if gvk := obj.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
			kind += " (" + gvk.String() + ")"
		}
		return fmt.Errorf("watch error event carrying %s instead of a Status", kind)
	}
	return err
}

// isNilObject reports whether obj is nil or a nil pointer.
func isNilObject(obj interface{}) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// unsupportedTableGVKs are the Table kinds of meta.k8s.io, which a Reflector
// cannot store.
var unsupportedTableGVKs = map[schema.GroupVersionKind]bool{
	metav1beta1.SchemeGroupVersion.WithKind("Table"): true,
	metav1.SchemeGroupVersion.WithKind("Table"):      true,
}

// isUnsupportedTableObject reports an unstructured meta.k8s.io Table.
func isUnsupportedTableObject(obj kruntime.Object) bool {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || u == nil || u.GetKind() != "Table" {
		return false
	}
	return unsupportedTableGVKs[u.GroupVersionKind()]
}

// isUnsupportedTableListObject reports an unstructured list whose kind is a
// meta.k8s.io Table, with that kind.
func isUnsupportedTableListObject(obj kruntime.Object) (bool, schema.GroupVersionKind) {
	u, ok := obj.(*unstructured.UnstructuredList)
	if !ok || u == nil {
		return false, schema.GroupVersionKind{}
	}
	gvk := u.GroupVersionKind()
	return unsupportedTableGVKs[gvk], gvk
}
