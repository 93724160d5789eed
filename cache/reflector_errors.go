package cache

import (
	"errors"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache/internal/reflector"
)

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
	return reflector.IsExpired(err)
}

// publicReflectorError maps the errors the engine makes to the public types
// a user's watch error handler and ListAndWatch's caller see: a
// *VeryShortWatchError for a very short watch, a *WatchIdleTimeoutError for
// a watch whose liveness deadline passed. Any other error is returned as it
// is.
func publicReflectorError(err error) error {
	switch e := err.(type) {
	case *reflector.ShortWatchError:
		return &VeryShortWatchError{Name: e.Name}
	case *reflector.IdleTimeoutError:
		return &WatchIdleTimeoutError{Name: e.Name, Timeout: e.Timeout, ResourceVersion: e.ResourceVersion}
	}
	return err
}

// isTooLargeResourceVersionError reports that the resource version asked for
// is newer than the server has seen (see reflector.IsTooLargeResourceVersion).
func isTooLargeResourceVersionError(err error) bool {
	return reflector.IsTooLargeResourceVersion(err)
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
