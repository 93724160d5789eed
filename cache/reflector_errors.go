package cache

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

// reflectorIncompleteStreamError is the error of a streaming list whose
// watch ended with an error that is not retried, or received no event for
// the Reflector's initialEventsTimeout, before the bookmark that ends the
// initial events arrived. The Reflector then falls back to LIST for that
// cycle.
type reflectorIncompleteStreamError struct {
	name string
	// events is the number of events received before it ended.
	events int
	// silentFor, when positive, is how long the stream went without an
	// event before the Reflector stopped it.
	silentFor time.Duration
	// err is the error the watch ended with; nil when it went silent.
	err error
}

// Error implements error.
func (e *reflectorIncompleteStreamError) Error() string {
	const what = "without the initial-events-end bookmark; falling back to LIST"
	if e.silentFor > 0 {
		return fmt.Sprintf("reflector %s: streaming list stayed silent for %v after %d event(s) %s", e.name, e.silentFor, e.events, what)
	}
	return fmt.Sprintf("reflector %s: streaming list ended with an error after %d event(s) %s: %v", e.name, e.events, what, e.err)
}

// Unwrap returns the error the watch ended with, if any.
func (e *reflectorIncompleteStreamError) Unwrap() error { return e.err }

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

// VeryShortWatchError is the error of a watch that closed within a second
// of being opened without delivering an event, which usually means the
// server cannot serve it. The Reflector relists after it.
type VeryShortWatchError struct {
	// Name of the Reflector
	Name string
}

// Error implements error.
func (e *VeryShortWatchError) Error() string {
	return fmt.Sprintf("very short watch: %s: Unexpected watch close - watch lasted less than a second and no items received", e.Name)
}

// isExpiredError reports a 410: the resource version asked for is no longer
// available (reason Expired, or Gone from servers older than 1.18).
func isExpiredError(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// isTooLargeResourceVersionError reports that the resource version asked for
// is newer than the server has seen, in the forms servers use (a status
// cause since 1.18.6; a Timeout with a message before).
func isTooLargeResourceVersionError(err error) bool {
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
