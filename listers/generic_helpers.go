package listers

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache"
)

// ResourceIndexer is the typed, read-only view of an informer's indexer that
// every generated lister embeds. It knows the resource it serves (for NotFound
// errors) and, for a namespace lister, the namespace it is restricted to.
//
// A ResourceIndexer is a small value: copy it freely. Its methods are safe for
// concurrent use as far as the underlying indexer is (cache.Indexer is). The
// zero value has no indexer; its methods return an error.
//
// Generated code builds it with New and NewNamespaced; other code rarely needs
// it directly.
type ResourceIndexer[T runtime.Object] struct {
	indexer   cache.Indexer
	resource  schema.GroupResource
	namespace string
}

// New returns a ResourceIndexer over every object in indexer. The indexer must
// hold objects of type T stored under their namespace/name keys
// (cache.MetaNamespaceKeyFunc); resource names them in NotFound errors.
func New[T runtime.Object](indexer cache.Indexer, resource schema.GroupResource) ResourceIndexer[T] {
	return ResourceIndexer[T]{indexer: indexer, resource: resource}
}

// NewNamespaced returns a ResourceIndexer over the same indexer and resource
// as parent, restricted to namespace. An empty namespace means all namespaces.
func NewNamespaced[T runtime.Object](parent ResourceIndexer[T], namespace string) ResourceIndexer[T] {
	parent.namespace = namespace
	return parent
}

// List returns the objects whose labels match selector, in no particular
// order, restricted to the namespace if the ResourceIndexer has one. It uses
// the indexer's cache.NamespaceIndex when present and scans all objects
// otherwise. The result is nil when nothing matches. A nil selector selects
// everything; an object of another type than T in the indexer is an error.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (l ResourceIndexer[T]) List(selector labels.Selector) (ret []T, err error) {
	if l.indexer == nil {
		return nil, l.noIndexer()
	}
	items, filterNamespace := l.candidates()
	all := selector == nil || selector.Empty()
	if all && !filterNamespace && len(items) > 0 {
		ret = make([]T, 0, len(items))
	}
	for _, item := range items {
		obj, ok := item.(T)
		if !ok {
			return nil, l.wrongType(item)
		}
		if !all || filterNamespace {
			meta, ok := item.(metav1.Object)
			if !ok {
				return nil, fmt.Errorf("listers: %s object of type %T has no object metadata", l.resource, item)
			}
			if filterNamespace && meta.GetNamespace() != l.namespace {
				continue
			}
			if !all && !selector.Matches(labels.Set(meta.GetLabels())) {
				continue
			}
		}
		ret = append(ret, obj)
	}
	return ret, nil
}

// candidates returns the objects List has to look at, and whether they still
// need filtering by namespace (when the indexer has no namespace index).
func (l ResourceIndexer[T]) candidates() ([]interface{}, bool) {
	if l.namespace == metav1.NamespaceAll {
		return l.indexer.List(), false
	}
	if items, err := l.indexer.ByIndex(cache.NamespaceIndex, l.namespace); err == nil {
		return items, false
	}
	return l.indexer.List(), true
}

// Get returns the object called name (in the ResourceIndexer's namespace, if
// it has one). It returns a NotFound error (apierrors.IsNotFound) naming the
// resource when there is no such object, and the indexer's error if it fails.
// An object of another type than T under that key is an error. Differs from
// client-go v0.37.2; see COMPATIBILITY.md.
func (l ResourceIndexer[T]) Get(name string) (T, error) {
	var zero T
	if l.indexer == nil {
		return zero, l.noIndexer()
	}
	key := name
	if l.namespace != metav1.NamespaceAll {
		key = l.namespace + "/" + name
	}
	item, exists, err := l.indexer.GetByKey(key)
	if err != nil {
		return zero, err
	}
	if !exists {
		return zero, errors.NewNotFound(l.resource, name)
	}
	obj, ok := item.(T)
	if !ok {
		return zero, l.wrongType(item)
	}
	return obj, nil
}

func (l ResourceIndexer[T]) noIndexer() error {
	return fmt.Errorf("listers: lister for %s has no indexer (zero ResourceIndexer)", l.resource)
}

func (l ResourceIndexer[T]) wrongType(item interface{}) error {
	var want T
	return fmt.Errorf("listers: indexer for %s holds an object of type %T, want %T", l.resource, item, want)
}
