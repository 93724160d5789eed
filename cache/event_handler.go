package cache

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceEventHandler receives the notifications of an informer about the
// objects in its cache. The methods return nothing: notifications are
// informational and cannot fail.
//
// Handlers MUST NOT modify the objects they are given, nor anything reachable
// from them: the same objects are shared with the cache and with every other
// handler.
//
//   - OnAdd is called when an object enters the cache. isInInitialList is
//     true while the informer (or, for a handler added late, the handler's
//     own replay of the cache) is delivering the initial list.
//   - OnUpdate is called when an object in the cache changed. oldObj is the
//     previous cached state; several server-side changes may have been
//     combined into one call. OnUpdate is also called on relists and on
//     periodic resyncs, with identical old and new objects when nothing
//     changed.
//   - OnDelete is called with the last known state of an object that left the
//     cache. When the deletion was only noticed by a relist (the watch missed
//     it), the argument is a DeletedFinalStateUnknown whose Obj may be stale.
//
// The methods of one registered handler are called sequentially, from one
// goroutine, in the order of the cache changes.
type ResourceEventHandler interface {
	OnAdd(obj interface{}, isInInitialList bool)
	OnUpdate(oldObj, newObj interface{})
	OnDelete(obj interface{})
}

// ResourceEventHandlerFuncs implements ResourceEventHandler with optional
// functions: a nil function means that kind of notification is ignored. The
// objects passed in must not be modified.
//
// Use ResourceEventHandlerDetailedFuncs to learn whether an add belongs to
// the initial list.
type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj interface{})
	UpdateFunc func(oldObj, newObj interface{})
	DeleteFunc func(obj interface{})
}

// OnAdd calls AddFunc when it is set.
func (r ResourceEventHandlerFuncs) OnAdd(obj interface{}, isInInitialList bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj)
	}
}

// OnUpdate calls UpdateFunc when it is set.
func (r ResourceEventHandlerFuncs) OnUpdate(oldObj, newObj interface{}) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc when it is set.
func (r ResourceEventHandlerFuncs) OnDelete(obj interface{}) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// ResourceEventHandlerDetailedFuncs is ResourceEventHandlerFuncs with an
// AddFunc that also receives isInInitialList. Nil functions are skipped.
type ResourceEventHandlerDetailedFuncs struct {
	AddFunc    func(obj interface{}, isInInitialList bool)
	UpdateFunc func(oldObj, newObj interface{})
	DeleteFunc func(obj interface{})
}

// OnAdd calls AddFunc when it is set.
func (r ResourceEventHandlerDetailedFuncs) OnAdd(obj interface{}, isInInitialList bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc when it is set.
func (r ResourceEventHandlerDetailedFuncs) OnUpdate(oldObj, newObj interface{}) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc when it is set.
func (r ResourceEventHandlerDetailedFuncs) OnDelete(obj interface{}) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// FilteringResourceEventHandler forwards to Handler only the notifications
// about objects that FilterFunc accepts. For an update, the filter is applied
// to both states: accepted before and after gives OnUpdate, rejected before
// and accepted after gives OnAdd (with isInInitialList false), accepted
// before and rejected after gives OnDelete with the old object, rejected both
// times gives nothing. FilterFunc must not modify the objects. A nil
// FilterFunc accepts every object; a nil Handler drops every notification.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
type FilteringResourceEventHandler struct {
	FilterFunc func(obj interface{}) bool
	Handler    ResourceEventHandler
}

func (r FilteringResourceEventHandler) accepts(obj interface{}) bool {
	return r.FilterFunc == nil || r.FilterFunc(obj)
}

// OnAdd forwards the add when the filter accepts obj.
func (r FilteringResourceEventHandler) OnAdd(obj interface{}, isInInitialList bool) {
	if r.Handler != nil && r.accepts(obj) {
		r.Handler.OnAdd(obj, isInInitialList)
	}
}

// OnUpdate forwards an update, add, delete or nothing depending on whether
// the filter accepts the old and the new object.
func (r FilteringResourceEventHandler) OnUpdate(oldObj, newObj interface{}) {
	if r.Handler == nil {
		return
	}
	before, after := r.accepts(oldObj), r.accepts(newObj)
	switch {
	case before && after:
		r.Handler.OnUpdate(oldObj, newObj)
	case after:
		r.Handler.OnAdd(newObj, false)
	case before:
		r.Handler.OnDelete(oldObj)
	}
}

// OnDelete forwards the delete when the filter accepts obj (which may be a
// DeletedFinalStateUnknown).
func (r FilteringResourceEventHandler) OnDelete(obj interface{}) {
	if r.Handler != nil && r.accepts(obj) {
		r.Handler.OnDelete(obj)
	}
}

// Object is what the typed handlers need from an object type T: its name and
// namespace. Every Kubernetes API type satisfies it through its embedded
// ObjectMeta (as a pointer type). T must be comparable so that a missing
// object (the zero T, e.g. a nil pointer) can be detected.
type Object interface {
	comparable

	GetName() string
	GetNamespace() string
}

// TypedResourceEventHandler is the type-safe form of ResourceEventHandler
// for objects of type T. Deletions arrive as DeletedObject[T], which covers
// both a known final state and a tombstone.
type TypedResourceEventHandler[T Object] interface {
	OnAdd(obj T, isInInitialList bool)
	OnUpdate(oldObj, newObj T)
	OnDelete(obj DeletedObject[T])
}

// DeletedObject describes an object that left the cache.
//
// OptionalObj is the deleted object when known. It may be an older state
// than the one that was deleted, or the zero T when no copy of the object was
// found. FinalStateUnknown is nil when OptionalObj is the final state;
// otherwise it is the tombstone through which the deletion was noticed and
// carries the object's cache key.
//
// GetObjectName, GetKey, GetName and GetNamespace work in all of these cases
// (GetName and GetNamespace make a DeletedObject usable with klog.KObj).
type DeletedObject[T Object] struct {
	// OptionalObj is the deleted object, possibly stale, possibly the zero T.
	OptionalObj T

	// FinalStateUnknown is nil when OptionalObj is the final state, else the
	// tombstone that reported the deletion.
	FinalStateUnknown *DeletedFinalStateUnknown
}

// GetObjectName returns the namespace and name of the deleted object. For a
// tombstone they come from its key: the part before the first "/" is the
// namespace and the rest (even if it contains more "/") is the name; a key
// without "/" is a name without namespace. With neither a tombstone nor an
// object the result is the zero ObjectName.
func (d DeletedObject[T]) GetObjectName() ObjectName {
	if d.FinalStateUnknown != nil {
		ns, name, ok := strings.Cut(d.FinalStateUnknown.Key, "/")
		if !ok {
			return ObjectName{Name: ns}
		}
		return ObjectName{Namespace: ns, Name: name}
	}
	var zero T
	if d.OptionalObj == zero {
		return ObjectName{}
	}
	return ObjectName{Namespace: d.OptionalObj.GetNamespace(), Name: d.OptionalObj.GetName()}
}

// GetName returns the name (without namespace) of the deleted object.
func (d DeletedObject[T]) GetName() string {
	return d.GetObjectName().Name
}

// GetNamespace returns the namespace of the deleted object, or "" for a
// cluster-scoped object.
func (d DeletedObject[T]) GetNamespace() string {
	return d.GetObjectName().Namespace
}

// GetKey returns the cache key of the deleted object: the tombstone's key if
// there is a tombstone, otherwise "namespace/name" (or "name" without a
// namespace), or "" when there is no object at all.
func (d DeletedObject[T]) GetKey() string {
	if d.FinalStateUnknown != nil {
		return d.FinalStateUnknown.Key
	}
	var zero T
	if d.OptionalObj == zero {
		return ""
	}
	if ns := d.OptionalObj.GetNamespace(); ns != "" {
		return ns + "/" + d.OptionalObj.GetName()
	}
	return d.OptionalObj.GetName()
}

// TypedResourceEventHandlerFuncs implements TypedResourceEventHandler with
// optional functions; nil functions are skipped.
type TypedResourceEventHandlerFuncs[T Object] struct {
	AddFunc    func(obj T)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj DeletedObject[T])
}

var _ TypedResourceEventHandler[*metav1.ObjectMeta] = TypedResourceEventHandlerFuncs[*metav1.ObjectMeta]{}

// OnAdd calls AddFunc when it is set.
func (r TypedResourceEventHandlerFuncs[T]) OnAdd(obj T, isInInitialList bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj)
	}
}

// OnUpdate calls UpdateFunc when it is set.
func (r TypedResourceEventHandlerFuncs[T]) OnUpdate(oldObj, newObj T) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc when it is set.
func (r TypedResourceEventHandlerFuncs[T]) OnDelete(obj DeletedObject[T]) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// TypedResourceEventHandlerDetailedFuncs is TypedResourceEventHandlerFuncs
// with an AddFunc that also receives isInInitialList. Nil functions are
// skipped.
type TypedResourceEventHandlerDetailedFuncs[T Object] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj DeletedObject[T])
}

var _ TypedResourceEventHandler[*metav1.ObjectMeta] = TypedResourceEventHandlerDetailedFuncs[*metav1.ObjectMeta]{}

// OnAdd calls AddFunc when it is set.
func (r TypedResourceEventHandlerDetailedFuncs[T]) OnAdd(obj T, isInInitialList bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc when it is set.
func (r TypedResourceEventHandlerDetailedFuncs[T]) OnUpdate(oldObj, newObj T) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc when it is set.
func (r TypedResourceEventHandlerDetailedFuncs[T]) OnDelete(obj DeletedObject[T]) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// TypedFilteringResourceEventHandler is the type-safe form of
// FilteringResourceEventHandler, with the same add/update/delete transitions.
// On delete the filter sees DeletedObject.OptionalObj, which may be the zero
// T; a FilterFunc that dereferences it must handle that case. A nil
// FilterFunc accepts every object; a nil Handler drops every notification.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
type TypedFilteringResourceEventHandler[T Object] struct {
	FilterFunc func(obj T) bool
	Handler    TypedResourceEventHandler[T]
}

func (r TypedFilteringResourceEventHandler[T]) accepts(obj T) bool {
	return r.FilterFunc == nil || r.FilterFunc(obj)
}

// OnAdd forwards the add when the filter accepts obj.
func (r TypedFilteringResourceEventHandler[T]) OnAdd(obj T, isInInitialList bool) {
	if r.Handler != nil && r.accepts(obj) {
		r.Handler.OnAdd(obj, isInInitialList)
	}
}

// OnUpdate forwards an update, add, delete or nothing depending on whether
// the filter accepts the old and the new object.
func (r TypedFilteringResourceEventHandler[T]) OnUpdate(oldObj, newObj T) {
	if r.Handler == nil {
		return
	}
	before, after := r.accepts(oldObj), r.accepts(newObj)
	switch {
	case before && after:
		r.Handler.OnUpdate(oldObj, newObj)
	case after:
		r.Handler.OnAdd(newObj, false)
	case before:
		r.Handler.OnDelete(DeletedObject[T]{OptionalObj: oldObj})
	}
}

// OnDelete forwards the delete when the filter accepts obj.OptionalObj.
func (r TypedFilteringResourceEventHandler[T]) OnDelete(obj DeletedObject[T]) {
	if r.Handler != nil && r.accepts(obj.OptionalObj) {
		r.Handler.OnDelete(obj)
	}
}
