package store

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
)

// ReplaceMap makes items, from key to object, the whole content of the
// store, as Replace does.
func (m *Map) ReplaceMap(items map[string]any, resourceVersion string) error {
	keys := make([]string, 0, len(items))
	objs := make([]any, 0, len(items))
	for k, obj := range items {
		keys = append(keys, k)
		objs = append(objs, obj)
	}
	return m.Replace(keys, objs, resourceVersion)
}

// Replace makes objs (stored under the parallel keys: keys[i] is the key of
// objs[i]; a later duplicate key wins) the whole content of the store in
// one step, rebuilds every index and records resourceVersion as a complete
// list's version (see the package documentation). It always applies the
// whole list: an object on which an index function fails is stored
// outside that index, and the returned error, an *IndexFailures, counts
// such objects; it is nil when there are none. The store keeps neither
// slice. Readers are not blocked while the new content is built, only
// while it is installed.
func (m *Map) Replace(keys []string, objs []any, resourceVersion string) error {
	// Build the new content without the lock, so readers are not blocked
	// for the whole of a large relist; if AddIndexers changed the set of
	// indices meanwhile, build again under the lock.
	m.lock.RLock()
	gen, nsIdx, slotted := m.layoutGen, m.nsIdx, m.slotted
	m.lock.RUnlock()
	r := m.buildReplacement(keys, objs, nsIdx, slotted)
	if m.replaceBuilt != nil {
		m.replaceBuilt()
	}
	m.lock.Lock()
	defer m.lock.Unlock()
	if m.layoutGen != gen {
		r = m.buildReplacement(keys, objs, m.nsIdx, m.slotted)
	}
	m.items = r.items
	for i, ix := range m.nsIdx {
		if i == 0 {
			ix.byValue = r.nsByValue
		} else {
			ix.byValue = cloneKeySets(r.nsByValue)
		}
	}
	for i, ix := range m.slotted {
		ix.byValue = r.slotByValue[i]
	}
	m.listedRVLocked(resourceVersion)
	if r.failures.total > 0 {
		return &r.failures
	}
	return nil
}

// replacement is the content and indices built for a Replace.
type replacement struct {
	items       map[string]any
	nsByValue   keySets   // for the namespace indices, when there are any
	slotByValue []keySets // for the slotted indices, by slot
	// failures counts the objects an index function failed on.
	failures IndexFailures
}

// buildReplacement computes the entries for objs (stored under the
// parallel keys; a later duplicate key wins) and the indices over them,
// reading only the immutable functions of the given indices. An object on
// which an index function fails is left out of that index and recorded in
// the replacement's failures.
func (m *Map) buildReplacement(keys []string, objs []any, nsIdx, slotted []*index) replacement {
	items := make(map[string]any, len(keys))
	// nsUnindexed holds the keys left out of the namespace indices.
	var nsUnindexed map[string]struct{}
	var failures IndexFailures
	nSlots := len(slotted)
	// The entries and their vals slices are cut from one allocation each.
	var chunk [][]string
	var entries []entry
	// namespaces[i] is the namespace of objs[i], read once here, while the
	// object is being visited anyway: the index loops below then walk this
	// slice in list order instead of reaching into every object again.
	var namespaces []string
	if len(nsIdx) > 0 {
		namespaces = make([]string, len(keys))
	}
	for i, key := range keys {
		obj := objs[i]
		failed := false
		if len(nsIdx) > 0 {
			if meta, err := ObjectMeta(obj); err == nil {
				namespaces[i] = meta.GetNamespace()
				if nsUnindexed != nil {
					// A later duplicate key replaces an unindexed object.
					delete(nsUnindexed, key)
				}
			} else {
				failures.add(&IndexError{index: nsIdx[0].name, key: key, err: err})
				failed = true
				if nsUnindexed == nil {
					nsUnindexed = map[string]struct{}{}
				}
				nsUnindexed[key] = struct{}{}
			}
		}
		if nSlots == 0 {
			items[key] = obj
			continue
		}
		if len(chunk) < nSlots {
			chunk = make([][]string, nSlots*(len(keys)-i))
			entries = make([]entry, len(keys)-i)
		}
		e := &entries[0]
		entries = entries[1:]
		e.obj = obj
		e.vals, chunk = chunk[:nSlots:nSlots], chunk[nSlots:]
		for s, ix := range slotted {
			v, err := ix.values(key, obj)
			if err != nil && !failed {
				failures.add(err)
				failed = true
			}
			e.vals[s] = v
		}
		items[key] = e
	}

	// Count the keys of each value first so that every key set is
	// allocated at its final size: on a large list this avoids growing
	// (and rehashing) the sets again and again.
	r := replacement{items: items, slotByValue: make([]keySets, nSlots), failures: failures}
	var nsCounts map[string]int
	if len(nsIdx) > 0 {
		nsCounts = map[string]int{}
	}
	slotCounts := make([]map[string]int, nSlots)
	for i := range slotCounts {
		slotCounts[i] = map[string]int{}
	}
	// Without duplicate keys, every position of keys is an entry of items,
	// so the namespace index is built from the slices; otherwise only the
	// map knows which duplicate won.
	unique := len(items) == len(keys)
	if nsCounts != nil && unique {
		for i, key := range keys {
			if !inSet(nsUnindexed, key) {
				nsCounts[namespaces[i]]++
			}
		}
	}
	for key, e := range items {
		if nsCounts != nil && !unique && !inSet(nsUnindexed, key) {
			nsCounts[namespaceOfStored(storedObject(e))]++
		}
		for i, vals := range storedVals(e) {
			for _, v := range vals {
				slotCounts[i][v]++
			}
		}
	}
	presized := func(counts map[string]int) keySets {
		idx := make(keySets, len(counts))
		for v, n := range counts {
			idx[v] = make(sets.Set[string], n)
		}
		return idx
	}
	if nsCounts != nil {
		r.nsByValue = presized(nsCounts)
	}
	for i := range slotted {
		r.slotByValue[i] = presized(slotCounts[i])
	}
	if r.nsByValue != nil && unique {
		for i, key := range keys {
			if !inSet(nsUnindexed, key) {
				r.nsByValue[namespaces[i]][key] = sets.Empty{}
			}
		}
	}
	for key, e := range items {
		if r.nsByValue != nil && !unique && !inSet(nsUnindexed, key) {
			r.nsByValue[namespaceOfStored(storedObject(e))][key] = sets.Empty{}
		}
		for i, vals := range storedVals(e) {
			for _, v := range vals {
				r.slotByValue[i][v][key] = sets.Empty{}
			}
		}
	}
	return r
}

// cloneKeySets returns a deep copy of idx.
func cloneKeySets(idx keySets) keySets {
	out := make(keySets, len(idx))
	for v, keys := range idx {
		out[v] = keys.Clone()
	}
	return out
}

// inSet reports whether key is in set (which may be nil).
func inSet(set map[string]struct{}, key string) bool {
	if len(set) == 0 {
		return false
	}
	_, ok := set[key]
	return ok
}

// indexFailuresKept is how many errors an IndexFailures keeps.
const indexFailuresKept = 5

// IndexFailures reports the objects of a Replace that were stored outside
// an index whose function failed on them: how many, and the errors (each
// an *IndexError) of the first few. Each object is counted once, however
// many of its indices failed.
type IndexFailures struct {
	total int
	first []error
}

// Total returns the number of objects stored outside an index.
func (f *IndexFailures) Total() int { return f.total }

func (f *IndexFailures) add(err error) {
	f.total++
	if len(f.first) < indexFailuresKept {
		f.first = append(f.first, err)
	}
}

// Error says how many objects are stored outside an index and why, for the
// first few.
func (f *IndexFailures) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d objects stored outside the indices that failed on them", f.total)
	for i, err := range f.first {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	if f.total > len(f.first) {
		fmt.Fprintf(&b, "; and %d more", f.total-len(f.first))
	}
	return b.String()
}

// Unwrap returns the errors kept, so that errors.Is and errors.As find an
// index function's error.
func (f *IndexFailures) Unwrap() []error { return f.first }
