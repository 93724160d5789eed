package cache

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
)

// AppendFunc receives, one at a time, the objects selected by ListAll and
// ListAllByNamespace.
type AppendFunc func(interface{})

// ListAll passes to appendFn every object of store whose labels match
// selector. A nil selector, like labels.Everything(), selects every object
// without reading labels; a selector matching nothing returns at once.
// With a selector that reads labels, an object without metadata stops the
// listing with an error. A nil store or appendFn is an error.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
func ListAll(store Store, selector labels.Selector, appendFn AppendFunc) error {
	if store == nil || appendFn == nil {
		return listerNilArgument("ListAll", store == nil)
	}
	if selector == nil {
		selector = labels.Everything()
	}
	if labels.MatchesNothing(selector) {
		return nil
	}
	return listerAppendMatching(store.List(), selector, appendFn)
}

// listerAppendMatching passes the objects of items matching selector to
// appendFn.
// listerNilArgument is the error of a listing function called with a nil
// store (or indexer) or a nil append function.
func listerNilArgument(fn string, nilStore bool) error {
	if nilStore {
		return fmt.Errorf("%s: the store is nil", fn)
	}
	return fmt.Errorf("%s: the append function is nil", fn)
}

func listerAppendMatching(items []interface{}, selector labels.Selector, appendFn AppendFunc) error {
	if selector.Empty() {
		for _, obj := range items {
			appendFn(obj)
		}
		return nil
	}
	for _, obj := range items {
		m, err := storeMetaAccessor(obj)
		if err != nil {
			return err
		}
		if selector.Matches(labels.Set(m.GetLabels())) {
			appendFn(obj)
		}
	}
	return nil
}

// ListAllByNamespace passes to appendFn every object of indexer in namespace
// whose labels match selector; metav1.NamespaceAll lists every namespace, as
// ListAll does. A nil selector selects everything. It reads the namespace
// from the NamespaceIndex index when the indexer has one, and otherwise
// scans all objects (logging that it does so at verbosity 4). A nil indexer
// or appendFn is an error. Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
func ListAllByNamespace(indexer Indexer, namespace string, selector labels.Selector, appendFn AppendFunc) error {
	if indexer == nil || appendFn == nil {
		return listerNilArgument("ListAllByNamespace", indexer == nil)
	}
	if selector == nil {
		selector = labels.Everything()
	}
	if labels.MatchesNothing(selector) {
		return nil
	}
	if namespace == metav1.NamespaceAll {
		return ListAll(indexer, selector, appendFn)
	}
	items, err := indexer.ByIndex(NamespaceIndex, namespace)
	if err == nil {
		return listerAppendMatching(items, selector, appendFn)
	}
	klog.Background().V(4).Info("Listing by namespace without a namespace index, scanning all objects", "namespace", namespace, "err", err)
	selectAll := selector.Empty()
	for _, obj := range indexer.List() {
		m, err := storeMetaAccessor(obj)
		if err != nil {
			return err
		}
		if m.GetNamespace() != namespace {
			continue
		}
		if selectAll || selector.Matches(labels.Set(m.GetLabels())) {
			appendFn(obj)
		}
	}
	return nil
}

// GenericLister lists and gets objects of one resource from an Indexer.
// Implementations are safe for concurrent use; returned objects are shared
// with the cache and must be treated as read-only.
type GenericLister interface {
	// List returns the objects of all namespaces whose labels match selector.
	List(selector labels.Selector) (ret []runtime.Object, err error)
	// Get returns the object whose store key is name (for namespaced
	// resources, "namespace/name"). It returns a NotFound API error when
	// there is none.
	Get(name string) (runtime.Object, error)
	// ByNamespace returns a lister restricted to one namespace.
	ByNamespace(namespace string) GenericNamespaceLister
}

// GenericNamespaceLister lists and gets objects of one resource in one
// namespace. Implementations are safe for concurrent use; returned objects
// are shared with the cache and must be treated as read-only.
type GenericNamespaceLister interface {
	// List returns the objects of the namespace whose labels match selector.
	List(selector labels.Selector) (ret []runtime.Object, err error)
	// Get returns the object with the given name in the namespace. It
	// returns a NotFound API error when there is none.
	Get(name string) (runtime.Object, error)
}

// NewGenericLister returns a GenericLister over indexer for resource, which
// names the resource in NotFound errors. The indexer's objects must be
// runtime.Objects keyed by MetaNamespaceKeyFunc; a stored value that is not
// one is reported as an error. ByNamespace("") finds cluster-scoped objects.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
func NewGenericLister(indexer Indexer, resource schema.GroupResource) GenericLister {
	return &genericLister{indexer: indexer, resource: resource}
}

type genericLister struct {
	indexer  Indexer
	resource schema.GroupResource
}

// listerCollect runs list and converts what it appends to runtime.Objects.
func listerCollect(list func(AppendFunc) error) ([]runtime.Object, error) {
	var ret []runtime.Object
	var bad interface{}
	err := list(func(obj interface{}) {
		if o, ok := obj.(runtime.Object); ok {
			ret = append(ret, o)
		} else if bad == nil {
			bad = obj
		}
	})
	if err == nil && bad != nil {
		err = fmt.Errorf("lister: stored value of type %T is not a runtime.Object", bad)
	}
	return ret, err
}

// List lists the objects of all namespaces matching selector.
func (s *genericLister) List(selector labels.Selector) ([]runtime.Object, error) {
	return listerCollect(func(fn AppendFunc) error { return ListAll(s.indexer, selector, fn) })
}

// ByNamespace returns a lister restricted to namespace.
func (s *genericLister) ByNamespace(namespace string) GenericNamespaceLister {
	return &genericNamespaceLister{indexer: s.indexer, namespace: namespace, resource: s.resource}
}

// Get returns the object stored under the key name, or NotFound.
func (s *genericLister) Get(name string) (runtime.Object, error) {
	return listerGet(s.indexer, name, name, s.resource)
}

// listerGet looks key up and converts the result, or returns NotFound for
// name.
func listerGet(indexer Indexer, key, name string, resource schema.GroupResource) (runtime.Object, error) {
	obj, exists, err := indexer.GetByKey(key)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, apierrors.NewNotFound(resource, name)
	}
	o, ok := obj.(runtime.Object)
	if !ok {
		return nil, fmt.Errorf("lister: value stored under %q has type %T, not a runtime.Object", key, obj)
	}
	return o, nil
}

type genericNamespaceLister struct {
	indexer   Indexer
	namespace string
	resource  schema.GroupResource
}

// List lists the objects of the namespace matching selector.
func (s *genericNamespaceLister) List(selector labels.Selector) ([]runtime.Object, error) {
	return listerCollect(func(fn AppendFunc) error {
		return ListAllByNamespace(s.indexer, s.namespace, selector, fn)
	})
}

// Get returns the named object of the namespace, or NotFound.
func (s *genericNamespaceLister) Get(name string) (runtime.Object, error) {
	return listerGet(s.indexer, ObjectName{Namespace: s.namespace, Name: name}.String(), name, s.resource)
}
