package clientgo

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
)

// eventHandler is the kinformer handler that calls a client-go one: it
// passes objects through as they are and turns kinformer's
// DeletedFinalStateUnknown into client-go's, which client-go handlers
// type-assert.
type eventHandler struct {
	handler toolscache.ResourceEventHandler
}

// OnAdd passes the add on.
func (h eventHandler) OnAdd(obj any, isInInitialList bool) { h.handler.OnAdd(obj, isInInitialList) }

// OnUpdate passes the update on.
func (h eventHandler) OnUpdate(oldObj, newObj any) { h.handler.OnUpdate(oldObj, newObj) }

// OnDelete passes the deletion on, with a tombstone in client-go's type.
func (h eventHandler) OnDelete(obj any) { h.handler.OnDelete(toClientGoObject(obj)) }

// toClientGoObject returns obj, or for a kinformer DeletedFinalStateUnknown
// (value or pointer) the client-go one with the same Key and Obj.
func toClientGoObject(obj any) any {
	switch d := obj.(type) {
	case cache.DeletedFinalStateUnknown:
		return toolscache.DeletedFinalStateUnknown{Key: d.Key, Obj: d.Obj}
	case *cache.DeletedFinalStateUnknown:
		if d != nil {
			return toolscache.DeletedFinalStateUnknown{Key: d.Key, Obj: d.Obj}
		}
	}
	return obj
}

// toKinformerObject returns obj, or for a client-go DeletedFinalStateUnknown
// (value or pointer) the kinformer one with the same Key and Obj, so that
// kinformer's key function finds its key.
func toKinformerObject(obj any) any {
	switch d := obj.(type) {
	case toolscache.DeletedFinalStateUnknown:
		return cache.DeletedFinalStateUnknown{Key: d.Key, Obj: d.Obj}
	case *toolscache.DeletedFinalStateUnknown:
		if d != nil {
			return cache.DeletedFinalStateUnknown{Key: d.Key, Obj: d.Obj}
		}
	}
	return obj
}

// registration is the client-go registration of a handler added through
// the wrapper: kinformer's registration, with client-go's DoneChecker.
type registration struct {
	reg cache.ResourceEventHandlerRegistration
}

// HasSynced reports whether the informer has synced and the handler has
// processed every notification of its initial list.
func (r *registration) HasSynced() bool { return r.reg.HasSynced() }

// HasSyncedChecker is HasSynced as a client-go DoneChecker: kinformer's
// checker of the registration.
func (r *registration) HasSyncedChecker() toolscache.DoneChecker { return r.reg.HasSyncedChecker() }

// ShutdownChan returns a channel closed once the handler has been removed
// or its informer stopped and it no longer runs, so that client-go's
// toolscache.ShutDownEventHandler works on the registration. It is nil
// (never closed) for a kinformer registration without one.
func (r *registration) ShutdownChan() <-chan struct{} {
	if s, ok := r.reg.(interface{ ShutdownChan() <-chan struct{} }); ok {
		return s.ShutdownChan()
	}
	return nil
}

// PendingNotifications reports how many notifications the handler has not
// handled yet (cache.HandlerBufferReporter), or -1 when the kinformer
// registration does not say.
func (r *registration) PendingNotifications() int {
	if p, ok := r.reg.(cache.HandlerBufferReporter); ok {
		return p.PendingNotifications()
	}
	return -1
}

// clientGoReflector returns the client-go Reflector the wrapper hands to
// watch error handlers: built on first use with the name and type
// description of r, kinformer's Reflector (or, for a nil r, client-go's
// defaults for the informer's source), and the same one afterwards. It is
// never run; its store is an empty one of its own.
func (w *informer) clientGoReflector(r *cache.Reflector) *toolscache.Reflector {
	w.reflectorOnce.Do(func() {
		var options toolscache.ReflectorOptions
		if r != nil {
			options.Name, options.TypeDescription = r.Name(), r.TypeDescription()
		}
		store := toolscache.NewStore(toolscache.DeletionHandlingMetaNamespaceKeyFunc)
		w.reflector = toolscache.NewReflectorWithOptions(noSource{}, nil, store, options)
	})
	return w.reflector
}

// errNoSource is what the client-go Reflector handed to watch error
// handlers returns if it is run after all: it only describes kinformer's.
var errNoSource = errors.New("this client-go Reflector describes a kinformer informer's Reflector and does not list or watch")

// noSource is the ListerWatcher of the client-go Reflector handed to watch
// error handlers: every call fails with errNoSource.
type noSource struct{}

// List fails with errNoSource.
func (noSource) List(metav1.ListOptions) (runtime.Object, error) { return nil, errNoSource }

// Watch fails with errNoSource.
func (noSource) Watch(metav1.ListOptions) (watch.Interface, error) { return nil, errNoSource }
