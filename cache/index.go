package cache

import (
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/util/sets"
)

// Indexer is a Store that also maintains named indices: each index function
// maps an object to a set of values, and the index finds the objects having
// a given value (for example all objects of a namespace).
//
// The Indexer returned by NewIndexer is safe for concurrent use. Its
// indices are updated with every write; a write whose index function fails
// changes nothing and returns the error.
type Indexer interface {
	Store
	// Index returns the stored objects whose values for the named index
	// share at least one value with those computed for obj. It fails for an
	// unknown index name or when the index function fails on obj.
	Index(indexName string, obj interface{}) ([]interface{}, error)
	// IndexKeys returns the keys of the stored objects whose values for the
	// named index include indexedValue; they can be passed to GetByKey. It
	// fails for an unknown index name.
	IndexKeys(indexName, indexedValue string) ([]string, error)
	// ListIndexFuncValues returns all values currently present in the named
	// index (empty for an unknown name).
	ListIndexFuncValues(indexName string) []string
	// ByIndex returns the stored objects whose values for the named index
	// include indexedValue. It fails for an unknown index name.
	ByIndex(indexName, indexedValue string) ([]interface{}, error)
	// GetIndexers returns the index functions by name.
	GetIndexers() Indexers
	// AddIndexers adds index functions and indexes the objects already
	// stored with them. It fails, changing nothing, when a name is already
	// in use, a function is nil or a new function fails on a stored object.
	// Differs from client-go v0.37.2; see COMPATIBILITY.md.
	AddIndexers(newIndexers Indexers) error
}

// IndexFunc computes the index values of an object. It must be deterministic
// and must not keep or modify the object. Returning no values leaves the
// object out of the index; an error rejects the write that triggered it.
type IndexFunc func(obj interface{}) ([]string, error)

// IndexFuncToKeyFuncAdapter turns an index function that yields exactly one
// value per object into a KeyFunc. The KeyFunc fails when the index function
// fails or yields zero or several values.
func IndexFuncToKeyFuncAdapter(indexFunc IndexFunc) KeyFunc {
	return func(obj interface{}) (string, error) {
		if indexFunc == nil {
			return "", errors.New("index function is nil")
		}
		values, err := indexFunc(obj)
		if err != nil {
			return "", err
		}
		switch len(values) {
		case 1:
			return values[0], nil
		case 0:
			return "", errors.New("index function returned no value to use as key")
		default:
			return "", fmt.Errorf("index function returned %d values, need exactly one for a key: %v", len(values), values)
		}
	}
}

const (
	// NamespaceIndex is the conventional name of the index by namespace,
	// built with MetaNamespaceIndexFunc; ListAllByNamespace uses it.
	NamespaceIndex string = "namespace"
)

// MetaNamespaceIndexFunc indexes API objects by namespace: it returns the
// object's namespace (empty for cluster-scoped objects) as the only value.
// Values that are nil or carry no object metadata yield an error.
//
// The stores of this package recognise this function and compute its value
// without calling it, so using it costs no allocation per write.
func MetaNamespaceIndexFunc(obj interface{}) ([]string, error) {
	m, err := storeMetaAccessor(obj)
	if err != nil {
		return nil, err
	}
	return []string{m.GetNamespace()}, nil
}

// index maps index values to the set of keys of the objects having them.
type index map[string]sets.Set[string]

// Indexers maps index names to index functions.
type Indexers map[string]IndexFunc

// Indices maps index names to indices. It exists for NewThreadSafeStore's
// signature; callers pass an empty value.
type Indices map[string]index

// TypedIndexers maps index names to typed index functions.
type TypedIndexers[T any] map[string]TypedIndexFunc[T]

// TypedIndexFunc is an IndexFunc for objects of type T.
type TypedIndexFunc[T any] func(obj T) ([]string, error)

// TypedIndexer is an Indexer with typed variants of its object-returning
// methods, for objects of type T.
type TypedIndexer[T any] interface {
	Indexer
	// TypedIndex is Index with typed argument and results.
	TypedIndex(indexName string, obj T) ([]T, error)
	// ByTypedIndex is ByIndex with typed results.
	ByTypedIndex(indexName, indexedValue string) ([]T, error)
	// AddTypedIndexers is AddIndexers for typed index functions.
	AddTypedIndexers(newIndexers TypedIndexers[T]) error
}

// TypedIndexersToIndexers converts typed index functions to untyped ones
// with TypedIndexerFuncToIndexerFunc.
func TypedIndexersToIndexers[T any](indexers TypedIndexers[T]) Indexers {
	out := make(Indexers, len(indexers))
	for name, fn := range indexers {
		out[name] = TypedIndexerFuncToIndexerFunc(fn)
	}
	return out
}

// TypedIndexerFuncToIndexerFunc converts a typed index function to an
// IndexFunc, which returns an error for an object that is not a T.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
func TypedIndexerFuncToIndexerFunc[T any](indexer TypedIndexFunc[T]) IndexFunc {
	return func(obj any) ([]string, error) {
		t, ok := obj.(T)
		if !ok {
			return nil, fmt.Errorf("index function for %v got an object of type %T", reflect.TypeFor[T](), obj)
		}
		if indexer == nil {
			return nil, errors.New("index function is nil")
		}
		return indexer(t)
	}
}
