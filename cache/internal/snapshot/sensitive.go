package snapshot

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// secretsResource is the group/version/resource of Secrets.
var secretsResource = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// SensitiveResource tells whether the objects of gvr are sensitive whatever
// the informer's options say: the core group's secrets, in any version.
func SensitiveResource(gvr schema.GroupVersionResource) bool {
	return gvr.Group == secretsResource.Group && gvr.Resource == secretsResource.Resource
}

// Sensitive tells whether an informer of example objects caches sensitive
// objects, which are never written to disk in clear: marked so by its
// options (marked), typed Secrets, or unstructured objects or object
// metadata (PartialObjectMetadata) whose kind is Secret of the core group,
// in any version.
func Sensitive(example runtime.Object, marked bool) bool {
	if marked {
		return true
	}
	// Compared by name, so that the package does not import the API types.
	if t := reflect.TypeOf(example); t != nil && t.Kind() == reflect.Pointer &&
		t.Elem().PkgPath() == "k8s.io/api/core/v1" && t.Elem().Name() == "Secret" {
		return true
	}
	if gvk := unstructuredKind(example); gvk != nil {
		return gvk.Group == "" && gvk.Kind == "Secret"
	}
	// The metadata of Secrets: their last-applied-configuration
	// annotation may hold the data. Any version of the core group.
	if m, ok := example.(*metav1.PartialObjectMetadata); ok && m != nil {
		gvk := m.GroupVersionKind()
		return gvk.Group == "" && gvk.Kind == "Secret"
	}
	return false
}
