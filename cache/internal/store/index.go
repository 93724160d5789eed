package store

import (
	"errors"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/util/sets"
)

// keySets maps index values to the set of keys of the objects having them.
type keySets map[string]sets.Set[string]

// index is one named index.
type index struct {
	name string
	fn   IndexFunc
	// slot is the position of this index's values in entry.vals, or -1
	// for an index using Config.NamespaceIndexFunc, whose value is the
	// stored object's namespace, read without calling the function (and
	// without allocating).
	slot int
	// byValue maps each index value to the keys of the objects having it.
	byValue keySets
}

func (ix *index) insert(value, key string) {
	set := ix.byValue[value]
	if set == nil {
		set = sets.Set[string]{}
		ix.byValue[value] = set
	}
	set[key] = sets.Empty{}
}

func (ix *index) remove(value, key string) {
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
func (ix *index) removeSingle(value, key string) {
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
func (ix *index) move(key string, oldVals, newVals []string) {
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

// values computes the values of index ix for obj stored under key.
func (ix *index) values(key string, obj any) ([]string, error) {
	if ix.fn == nil {
		return nil, &IndexError{index: ix.name, key: key, err: errors.New("index function is nil")}
	}
	vals, err := ix.fn(obj)
	if err != nil {
		return nil, &IndexError{index: ix.name, key: key, err: err}
	}
	return vals, nil
}

// IndexError reports an index function failing on an object (or, for a
// namespace index, the object's metadata failing to be read): the object
// named is stored outside that index.
type IndexError struct {
	index string
	key   string
	err   error
}

// Error names the index, the key and the cause.
func (e *IndexError) Error() string {
	return fmt.Sprintf("index %q failed on object with key %q: %v", e.index, e.key, e.err)
}

// Unwrap returns the index function's error.
func (e *IndexError) Unwrap() error { return e.err }

// IsIndexError reports whether err is an index function's failure (an
// *IndexError, possibly among joined ones, or an *IndexFailures): for a
// write, the object is then stored all the same, outside that index.
func IsIndexError(err error) bool {
	var ie *IndexError
	return errors.As(err, &ie)
}

// funcPC returns the code pointer of fn, by which the namespace index
// function is recognised.
func funcPC(fn IndexFunc) uintptr {
	return reflect.ValueOf(fn).Pointer()
}

// isNamespaceFunc reports whether fn is the Config's NamespaceIndexFunc.
func (m *Map) isNamespaceFunc(fn IndexFunc) bool {
	return fn != nil && m.nsFuncPC != 0 && funcPC(fn) == m.nsFuncPC
}

// sortedNames returns the names of indexers, sorted.
func sortedNames(indexers map[string]IndexFunc) []string {
	names := make([]string, 0, len(indexers))
	for name := range indexers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// addIndexLocked registers an empty index; the caller fills it.
func (m *Map) addIndexLocked(name string, fn IndexFunc) *index {
	ix := &index{name: name, fn: fn, byValue: keySets{}}
	if m.isNamespaceFunc(fn) {
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
func (m *Map) namespaceOf(key string, obj any) (string, error) {
	meta, err := ObjectMeta(obj)
	if err != nil {
		return "", &IndexError{index: m.nsIdx[0].name, key: key, err: err}
	}
	return meta.GetNamespace(), nil
}

// indexLocked returns the named index or an error naming it.
func (m *Map) indexLocked(name string) (*index, error) {
	ix := m.byName[name]
	if ix == nil {
		return nil, fmt.Errorf("index with name %q does not exist", name)
	}
	return ix, nil
}

// Index returns the stored objects sharing at least one value of the named
// index with obj, in no particular order. It fails for an unknown index
// name, or when the index function fails on obj (for a namespace index:
// when obj's metadata cannot be read).
func (m *Map) Index(indexName string, obj any) ([]any, error) {
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
		return []any{}, nil
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
func (m *Map) objectsLocked(keys sets.Set[string]) []any {
	list := make([]any, 0, len(keys))
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

// ByIndex returns the stored objects whose values for the named index
// include indexedValue, in no particular order. It fails for an unknown
// index name.
func (m *Map) ByIndex(indexName, indexedValue string) ([]any, error) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	ix, err := m.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	return m.objectsLocked(ix.byValue[indexedValue]), nil
}

// IndexKeys returns, sorted, the keys of the stored objects whose values for
// the named index include indexedValue. It fails for an unknown index name.
func (m *Map) IndexKeys(indexName, indexedValue string) ([]string, error) {
	m.lock.RLock()
	defer m.lock.RUnlock()
	ix, err := m.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	return sets.List(ix.byValue[indexedValue]), nil
}

// ListIndexFuncValues returns the values present in the named index (those
// of at least one stored object), in no particular order; it is empty for
// an unknown index name.
func (m *Map) ListIndexFuncValues(indexName string) []string {
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

// IndexersAs returns a copy, taken under the lock (so it does not race with
// AddIndexers), of m's index functions by name, as a map of the caller's
// type: a package with its own named index function type gets its map
// without a second copy.
func IndexersAs[M ~map[string]F, F ~func(any) ([]string, error)](m *Map) M {
	m.lock.RLock()
	defer m.lock.RUnlock()
	out := make(M, len(m.byName))
	for name, ix := range m.byName {
		out[name] = F(ix.fn)
	}
	return out
}

// AddIndexers adds index functions and indexes the stored objects with
// them. It fails, changing nothing, when a name is already used, a function
// is nil or a new function fails on a stored object (for a namespace
// index: a stored object's metadata cannot be read). Unlike a write, it
// stores nothing outside an index: the caller chose the function and learns
// at once that it does not fit the content.
func (m *Map) AddIndexers(newIndexers map[string]IndexFunc) error {
	if len(newIndexers) == 0 {
		return nil
	}
	m.lock.Lock()
	defer m.lock.Unlock()
	names := sortedNames(newIndexers)
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
		probe := &index{name: name, fn: newIndexers[name]}
		p := pending{name: name, fn: newIndexers[name]}
		p.ns = m.isNamespaceFunc(p.fn)
		if p.ns {
			p.nss = make(map[string]string, len(m.items))
		} else {
			p.vals = make(map[string][]string, len(m.items))
		}
		for key, e := range m.items {
			obj := storedObject(e)
			if p.ns {
				meta, err := ObjectMeta(obj)
				if err != nil {
					return &IndexError{index: name, key: key, err: err}
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
		e, ok := v.(*entry)
		if !ok {
			e = &entry{obj: v}
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
