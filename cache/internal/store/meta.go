package store

import (
	"errors"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// errNilObject is wrapped by ObjectMeta's error for a nil object or a
// typed nil pointer.
var errNilObject = errors.New("object is nil")

// errNoObjectMeta is wrapped by ObjectMeta's error for values without
// metadata.
var errNoObjectMeta = errors.New("not a Kubernetes object (does not implement metav1.Object)")

// ObjectMeta returns the object metadata of obj, or an error for nil
// values, typed nil pointers and values that carry no object metadata. It
// accepts what meta.Accessor accepts but never lets a typed nil pointer
// through (whose getters would panic). The store reads namespaces (for the
// namespace indices) and resource versions through it; an object it fails
// on is outside every namespace index and carries no resource version.
func ObjectMeta(obj any) (metav1.Object, error) {
	switch t := obj.(type) {
	case nil:
		return nil, errNilObject
	case metav1.Object:
		if isNilPointer(t) {
			return nil, fmt.Errorf("%w: nil %T", errNilObject, obj)
		}
		return t, nil
	case metav1.ObjectMetaAccessor:
		if isNilPointer(t) {
			return nil, fmt.Errorf("%w: nil %T", errNilObject, obj)
		}
		m := t.GetObjectMeta()
		if m == nil || isNilPointer(m) {
			return nil, fmt.Errorf("%w: object of type %T has nil metadata", errNilObject, obj)
		}
		return m, nil
	default:
		return nil, fmt.Errorf("object of type %T has no metadata: %w", obj, errNoObjectMeta)
	}
}

// isNilPointer reports whether v holds a nil pointer of some type.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
