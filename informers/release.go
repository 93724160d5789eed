package informers

import (
	"context"
	"errors"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// InformerReleaser is implemented by the factory NewSharedInformerFactory
// (and its variants) returns: it stops and forgets one informer while the
// others keep running. Type-assert a SharedInformerFactory to it. kinformer
// extension, not in client-go, whose factories can only shut down all their
// informers at once.
type InformerReleaser interface {
	// ReleaseInformer stops the factory's informer for the Go type of obj
	// (e.g. &corev1.Pod{}), waits until its goroutines (reflector, queue,
	// handlers) have returned, drops it from the factory and empties its
	// cache so that its memory is freed even where a lister of it is still
	// referenced. Handlers registered on it get nothing more. A later
	// request for the type (InformerFor, or the group/version accessor)
	// builds a new informer, which the next Start runs.
	//
	// It returns false when the factory has no informer for the type. It
	// returns an error wrapping ctx's error when ctx ends before the
	// informer stopped; the informer is then dropped all the same and stops
	// in the background (Shutdown still waits for it). Safe for concurrent
	// use; it must not be called from a handler of the informer it
	// releases (it would wait for itself).
	ReleaseInformer(ctx context.Context, obj runtime.Object) (bool, error)
}

// ResourceReleaser is implemented by the factories of the dynamic and
// metadata informer packages (informers/dynamic, informers/metadata): it
// stops and forgets the informer of one group/version/resource, for example
// after its CustomResourceDefinition was deleted, while the others keep
// running. Type-assert the factory to it. kinformer extension, not in
// client-go.
type ResourceReleaser interface {
	// ReleaseResource is InformerReleaser.ReleaseInformer for the informer
	// of gvr.
	ReleaseResource(ctx context.Context, gvr schema.GroupVersionResource) (bool, error)
}

var _ InformerReleaser = &sharedInformerFactory{}

// ReleaseInformer implements InformerReleaser.
func (f *sharedInformerFactory) ReleaseInformer(ctx context.Context, obj runtime.Object) (bool, error) {
	if obj == nil {
		return false, errors.New("cannot release the informer of a nil object type")
	}
	return f.engine.Release(ctx, reflect.TypeOf(obj))
}
