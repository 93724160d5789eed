package cache

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/util/sets"
)

// tsIndex is one named index.
type tsIndex struct {
	name string
	fn   IndexFunc
	// slot is the position of this index's values in tsEntry.vals, or -1
	// for an index using MetaNamespaceIndexFunc, whose value is the stored
	// object's namespace, read without calling the function (and without
	// allocating).
	slot int
	// byValue maps each index value to the keys of the objects having it.
	byValue index
}

func (ix *tsIndex) insert(value, key string) {
	set := ix.byValue[value]
	if set == nil {
		set = sets.Set[string]{}
		ix.byValue[value] = set
	}
	set[key] = sets.Empty{}
}

func (ix *tsIndex) remove(value, key string) {
	set := ix.byValue[value]
	if set == nil {
		return
	}
	delete(set, key)
	if len(set) == 0 {
		// Drop empty sets, or churn through many distinct values would
		// grow the index forever.
		delete(ix.byValue, value)
	}
}

// removeSingle removes key from an index that holds every key under exactly
// one value (a namespace index): from value when it holds key there, else
// (a caller mutated the stored object, so that value is no longer the one
// it was indexed under) from whichever value holds it.
func (ix *tsIndex) removeSingle(value, key string) {
	if _, held := ix.byValue[value][key]; held {
		ix.remove(value, key)
		return
	}
	for v, set := range ix.byValue {
		if _, held := set[key]; held {
			ix.remove(v, key)
			return
		}
	}
}

// move updates the index for key whose values change from oldVals to
// newVals, touching only the values that differ.
func (ix *tsIndex) move(key string, oldVals, newVals []string) {
	if slices.Equal(oldVals, newVals) {
		return
	}
	for _, v := range oldVals {
		if !slices.Contains(newVals, v) {
			ix.remove(v, key)
		}
	}
	for _, v := range newVals {
		if !slices.Contains(oldVals, v) {
			ix.insert(v, key)
		}
	}
}

// indexValues computes the values of index ix for obj stored under key.
func (ix *tsIndex) values(key string, obj interface{}) ([]string, error) {
	if ix.fn == nil {
		return nil, &storeIndexError{index: ix.name, key: key, err: errors.New("index function is nil")}
	}
	vals, err := ix.fn(obj)
	if err != nil {
		return nil, &storeIndexError{index: ix.name, key: key, err: err}
	}
	return vals, nil
}

// storeIndexError reports an index function failing on an object.
type storeIndexError struct {
	index string
	key   string
	err   error
}

// Error names the index, the key and the cause.
func (e *storeIndexError) Error() string {
	return fmt.Sprintf("index %q failed on object with key %q: %v", e.index, e.key, e.err)
}

// Unwrap returns the index function's error.
func (e *storeIndexError) Unwrap() error { return e.err }

// storeIsIndexError reports whether err is an index function's failure (a
// *storeIndexError, possibly among joined ones): for a write, the object is
// then stored outside that index.
func storeIsIndexError(err error) bool {
	var ie *storeIndexError
	return errors.As(err, &ie)
}

// storeMetaNamespaceIndexFuncPC identifies MetaNamespaceIndexFunc, whose
// values the store computes inline.
var storeMetaNamespaceIndexFuncPC = reflect.ValueOf(MetaNamespaceIndexFunc).Pointer()

func storeSortedNames(indexers Indexers) []string {
	names := make([]string, 0, len(indexers))
	for name := range indexers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// addIndexLocked registers an empty index; the caller fills it.
func (m *threadSafeMap) addIndexLocked(name string, fn IndexFunc) *tsIndex {
	ix := &tsIndex{name: name, fn: fn, byValue: index{}}
	if fn != nil && reflect.ValueOf(fn).Pointer() == storeMetaNamespaceIndexFuncPC {
		ix.slot = -1
		m.nsIdx = append(m.nsIdx, ix)
	} else {
		ix.slot = len(m.slotted)
		m.slotted = append(m.slotted, ix)
	}
	m.byName[name] = ix
	return ix
}

// namespaceOf computes the value of the inline namespace indices for obj.
func (m *threadSafeMap) namespaceOf(key string, obj interface{}) (string, error) {
	meta, err := storeMetaAccessor(obj)
	if err != nil {
		return "", &storeIndexError{index: m.nsIdx[0].name, key: key, err: err}
	}
	return meta.GetNamespace(), nil
}

// indexLocked returns the named index or an error naming it.
func (m *threadSafeMap) indexLocked(name string) (*tsIndex, error) {
	ix := m.byName[name]
	if ix == nil {
		return nil, fmt.Errorf("index with name %q does not exist", name)
	}
	return ix, nil
}

// Index returns the objects sharing an index value with obj.
func (m *threadSafeMap) Index(indexName string, obj interface{}) ([]interface{}, error) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	ix, err := m.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	var vals []string
	if ix.slot < 0 {
		ns, err := m.namespaceOf("", obj)
		if err != nil {
			return nil, err
		}
		return m.objectsLocked(ix.byValue[ns]), nil
	}
	vals, err = ix.values("", obj)
	if err != nil {
		return nil, err
	}
	switch len(vals) {
	case 0:
		return []interface{}{}, nil
	case 1:
		return m.objectsLocked(ix.byValue[vals[0]]), nil
	}
	union := sets.Set[string]{}
	for _, v := range vals {
		for key := range ix.byValue[v] {
			union[key] = sets.Empty{}
		}
	}
	return m.objectsLocked(union), nil
}

// objectsLocked returns the objects stored under the given keys.
func (m *threadSafeMap) objectsLocked(keys sets.Set[string]) []interface{} {
	list := make([]interface{}, 0, len(keys))
	if len(m.slotted) == 0 {
		// items holds the objects themselves.
		for key := range keys {
			list = append(list, m.items[key])
		}
		return list
	}
	for key := range keys {
		list = append(list, storedObject(m.items[key]))
	}
	return list
}

// ByIndex returns the objects whose values for the index include
// indexedValue.
func (m *threadSafeMap) ByIndex(indexName, indexedValue string) ([]interface{}, error) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	ix, err := m.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	return m.objectsLocked(ix.byValue[indexedValue]), nil
}

// IndexKeys returns, sorted, the keys whose values for the index include
// indexedValue.
func (m *threadSafeMap) IndexKeys(indexName, indexedValue string) ([]string, error) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	ix, err := m.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	return sets.List(ix.byValue[indexedValue]), nil
}

// ListIndexFuncValues returns the values present in the named index.
func (m *threadSafeMap) ListIndexFuncValues(indexName string) []string {
	m.lock.RLock()
	defer m.lock.RUnlock()
	ix := m.byName[indexName]
	if ix == nil {
		return []string{}
	}
	values := make([]string, 0, len(ix.byValue))
	for v := range ix.byValue {
		values = append(values, v)
	}
	return values
}

// GetIndexers returns a copy of the index functions by name.
//
// Difference from client-go: the result is a copy taken under the lock, so
// it does not race with AddIndexers.
func (m *threadSafeMap) GetIndexers() Indexers {
	m.lock.RLock()
	defer m.lock.RUnlock()
	out := make(Indexers, len(m.byName))
	for name, ix := range m.byName {
		out[name] = ix.fn
	}
	return out
}

// AddIndexers adds index functions and indexes the stored objects with
// them. It fails, changing nothing, when a name is already used (or
// repeated), a function is nil or a new function fails on a stored object.
func (m *threadSafeMap) AddIndexers(newIndexers Indexers) error {
	if len(newIndexers) == 0 {
		return nil
	}
	m.lock.Lock()
	defer m.lock.Unlock()
	names := storeSortedNames(newIndexers)
	var conflicts []string
	for _, name := range names {
		if newIndexers[name] == nil {
			return fmt.Errorf("index %q has a nil index function", name)
		}
		if m.byName[name] != nil {
			conflicts = append(conflicts, name)
		}
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("indexer conflict: indices %q already exist", conflicts)
	}

	// Compute every new value before changing anything.
	type pending struct {
		ns   bool
		fn   IndexFunc
		name string
		vals map[string][]string
		nss  map[string]string
	}
	work := make([]pending, 0, len(names))
	for _, name := range names {
		probe := &tsIndex{name: name, fn: newIndexers[name]}
		p := pending{name: name, fn: newIndexers[name]}
		p.ns = p.fn != nil && reflect.ValueOf(p.fn).Pointer() == storeMetaNamespaceIndexFuncPC
		if p.ns {
			p.nss = make(map[string]string, len(m.items))
		} else {
			p.vals = make(map[string][]string, len(m.items))
		}
		for key, e := range m.items {
			obj := storedObject(e)
			if p.ns {
				meta, err := storeMetaAccessor(obj)
				if err != nil {
					return &storeIndexError{index: name, key: key, err: err}
				}
				p.nss[key] = meta.GetNamespace()
				continue
			}
			v, err := probe.values(key, obj)
			if err != nil {
				return err
			}
			p.vals[key] = v
		}
		work = append(work, p)
	}

	m.layoutGen++
	for _, p := range work {
		ix := m.addIndexLocked(p.name, p.fn)
		if p.ns {
			for key, ns := range p.nss {
				ix.insert(ns, key)
			}
			continue
		}
		for key, vals := range p.vals {
			for _, v := range vals {
				ix.insert(v, key)
			}
		}
	}
	// Give every entry its new slots (a namespace index needs none).
	if len(m.slotted) == 0 {
		return nil
	}
	for key, v := range m.items {
		e, ok := v.(*tsEntry)
		if !ok {
			e = &tsEntry{obj: v}
			m.items[key] = e
		}
		if len(e.vals) < len(m.slotted) {
			vals := make([][]string, len(m.slotted))
			copy(vals, e.vals)
			for _, p := range work {
				if !p.ns {
					vals[m.byName[p.name].slot] = p.vals[key]
				}
			}
			e.vals = vals
		}
	}
	return nil
}
