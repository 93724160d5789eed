package cache

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// TypedSharedIndexInformer adds type-safe methods for objects of type T to a
// SharedIndexInformer, so that handlers and index functions need no type
// assertions.
type TypedSharedIndexInformer[T Object] interface {
	SharedIndexInformer

	// AddTypedEventHandler registers a typed handler. Without options it
	// behaves like AddEventHandler, with one HandlerOptions like
	// AddEventHandlerWithOptions; more than one is an error.
	AddTypedEventHandler(handler TypedResourceEventHandler[T], options ...HandlerOptions) (ResourceEventHandlerRegistration, error)
	// AddTypedIndexers adds typed index functions (see AddIndexers).
	AddTypedIndexers(indexers TypedIndexers[T]) error
	// GetTypedIndexer returns the cache as a TypedIndexer[T].
	GetTypedIndexer() TypedIndexer[T]
}

// NewTypedSharedIndexInformer wraps informer, whose objects must be of type
// T, in a TypedSharedIndexInformer[T]. Objects of another type that reach a
// typed handler or index query are logged and skipped (or reported as an
// error by the indexer) instead of causing a panic.
func NewTypedSharedIndexInformer[T Object](informer SharedIndexInformer) TypedSharedIndexInformer[T] {
	return &typedSharedIndexInformer[T]{SharedIndexInformer: informer}
}

type typedSharedIndexInformer[T Object] struct {
	SharedIndexInformer
}

// shared implements kinformerInformer: it returns the informer behind the
// wrapped one, so that the package's extensions (WaitForResourceVersion,
// GetInformerStatus, ConfigureInformer, ...) reach it.
func (s *typedSharedIndexInformer[T]) shared() *sharedIndexInformer {
	if s == nil {
		return nil
	}
	return sharedOf(s.SharedIndexInformer)
}

// Unwrap returns the wrapped informer, so that a caller holding a typed
// informer reaches the one it wraps (sharding.InformerOf finds a sharded
// informer behind a factory's typed informer this way).
func (s *typedSharedIndexInformer[T]) Unwrap() SharedIndexInformer {
	return s.SharedIndexInformer
}

func (s *typedSharedIndexInformer[T]) AddTypedEventHandler(handler TypedResourceEventHandler[T], options ...HandlerOptions) (ResourceEventHandlerRegistration, error) {
	if handler == nil {
		return nil, fmt.Errorf("event handler must not be nil")
	}
	var o HandlerOptions
	switch len(options) {
	case 0:
	case 1:
		o = options[0]
	default:
		return nil, fmt.Errorf("at most one HandlerOptions may be passed, got %d", len(options))
	}
	logger := klog.Background()
	if o.Logger != nil {
		logger = *o.Logger
	}
	return s.AddEventHandlerWithOptions(&typedResourceEventHandler[T]{handler: handler, logger: logger}, o)
}

func (s *typedSharedIndexInformer[T]) AddTypedIndexers(indexers TypedIndexers[T]) error {
	return s.AddIndexers(TypedIndexersToIndexers(indexers))
}

func (s *typedSharedIndexInformer[T]) GetTypedIndexer() TypedIndexer[T] {
	return &typedIndexer[T]{Indexer: s.GetIndexer()}
}

// typedResourceEventHandler adapts a TypedResourceEventHandler[T] to
// ResourceEventHandler.
type typedResourceEventHandler[T Object] struct {
	handler TypedResourceEventHandler[T]
	logger  klog.Logger
}

var _ ResourceEventHandler = &typedResourceEventHandler[*metav1.ObjectMeta]{}

// handlerName names the adapter after the typed handler inside.
func (h *typedResourceEventHandler[T]) handlerName() string {
	switch inner := h.handler.(type) {
	case TypedResourceEventHandlerFuncs[T]:
		return nameForFunctions(inner.AddFunc, inner.UpdateFunc, inner.DeleteFunc)
	case *TypedResourceEventHandlerFuncs[T]:
		if inner != nil {
			return nameForFunctions(inner.AddFunc, inner.UpdateFunc, inner.DeleteFunc)
		}
	case TypedResourceEventHandlerDetailedFuncs[T]:
		return nameForFunctions(inner.AddFunc, inner.UpdateFunc, inner.DeleteFunc)
	}
	return fmt.Sprintf("%T", h.handler)
}

func (h *typedResourceEventHandler[T]) wrongType(method string, obj interface{}) {
	var want T
	h.logger.Error(nil, "Event handler received an object of the wrong type; notification skipped", "method", method, "expected", fmt.Sprintf("%T", want), "got", fmt.Sprintf("%T", obj))
}

func (h *typedResourceEventHandler[T]) OnAdd(obj interface{}, isInInitialList bool) {
	typed, ok := obj.(T)
	if !ok {
		h.wrongType("OnAdd", obj)
		return
	}
	h.handler.OnAdd(typed, isInInitialList)
}

func (h *typedResourceEventHandler[T]) OnUpdate(oldObj, newObj interface{}) {
	oldTyped, ok1 := oldObj.(T)
	newTyped, ok2 := newObj.(T)
	if !ok1 || !ok2 {
		h.wrongType("OnUpdate", newObj)
		return
	}
	h.handler.OnUpdate(oldTyped, newTyped)
}

func (h *typedResourceEventHandler[T]) OnDelete(obj interface{}) {
	if tomb, ok := obj.(DeletedFinalStateUnknown); ok {
		deleted := DeletedObject[T]{FinalStateUnknown: &tomb}
		if tomb.Obj != nil {
			typed, ok := tomb.Obj.(T)
			if !ok {
				h.wrongType("OnDelete", tomb.Obj)
				return
			}
			deleted.OptionalObj = typed
		}
		h.handler.OnDelete(deleted)
		return
	}
	typed, ok := obj.(T)
	if !ok {
		h.wrongType("OnDelete", obj)
		return
	}
	h.handler.OnDelete(DeletedObject[T]{OptionalObj: typed})
}

// typedIndexer adapts an Indexer to TypedIndexer[T].
type typedIndexer[T any] struct {
	Indexer
}

func typedList[T any](untyped []interface{}) ([]T, error) {
	typed := make([]T, len(untyped))
	for i, obj := range untyped {
		t, ok := obj.(T)
		if !ok {
			var want T
			return nil, fmt.Errorf("cached object of type %T is not a %T", obj, want)
		}
		typed[i] = t
	}
	return typed, nil
}

func (i *typedIndexer[T]) TypedIndex(indexName string, obj T) ([]T, error) {
	untyped, err := i.Index(indexName, obj)
	if err != nil {
		return nil, err
	}
	return typedList[T](untyped)
}

func (i *typedIndexer[T]) ByTypedIndex(indexName, indexedValue string) ([]T, error) {
	untyped, err := i.ByIndex(indexName, indexedValue)
	if err != nil {
		return nil, err
	}
	return typedList[T](untyped)
}

func (i *typedIndexer[T]) AddTypedIndexers(newIndexers TypedIndexers[T]) error {
	return i.AddIndexers(TypedIndexersToIndexers(newIndexers))
}
