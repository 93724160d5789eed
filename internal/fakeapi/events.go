package fakeapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Added returns an ADDED event of obj.
func Added(obj runtime.Object) watch.Event { return watch.Event{Type: watch.Added, Object: obj} }

// Modified returns a MODIFIED event of obj.
func Modified(obj runtime.Object) watch.Event { return watch.Event{Type: watch.Modified, Object: obj} }

// Deleted returns a DELETED event of obj.
func Deleted(obj runtime.Object) watch.Event { return watch.Event{Type: watch.Deleted, Object: obj} }

// Bookmark returns a BOOKMARK event carrying obj, an object of the watched type whose only
// meaningful field is its resourceVersion, as a server sends one.
func Bookmark(obj runtime.Object) watch.Event { return watch.Event{Type: watch.Bookmark, Object: obj} }

// EndOfInitialEvents returns the BOOKMARK event that ends the initial events of a streaming
// list: obj, an object of the watched type carrying the list's resourceVersion, annotated as
// the server annotates it. obj is changed in place; pass a fresh object. It panics when obj has
// no object metadata, which is a mistake in the test.
func EndOfInitialEvents(obj runtime.Object) watch.Event {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(fmt.Sprintf("fakeapi.EndOfInitialEvents: %T has no object metadata: %v", obj, err))
	}
	annotations := m.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[metav1.InitialEventsAnnotationKey] = "true"
	m.SetAnnotations(annotations)
	return watch.Event{Type: watch.Bookmark, Object: obj}
}

// Error returns an ERROR event carrying status, as a server sends one to end a watch (for
// example with code 410 when the watched resourceVersion is too old).
func Error(status metav1.Status) watch.Event {
	return watch.Event{Type: watch.Error, Object: &status}
}
