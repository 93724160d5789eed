package cache

import (
	"fmt"
	"strings"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// Replace makes items the whole content of the store. Objects on which an
// index function fails are stored outside that index, and the failures are
// reported through HandleError.
func (m *threadSafeMap) Replace(items map[string]interface{}, resourceVersion string) {
	keys := make([]string, 0, len(items))
	objs := make([]interface{}, 0, len(items))
	for k, obj := range items {
		keys = append(keys, k)
		objs = append(objs, obj)
	}
	if err := m.replaceLists(keys, objs, resourceVersion); err != nil {
		utilruntime.HandleErrorWithLogger(klog.Background(), err, "Objects stored outside the indices that failed on them")
	}
}

// replaceLists makes objs (stored under the parallel keys; a later duplicate
// key wins) the whole content of the store and records resourceVersion. It
// always applies the whole list: an object on which an index function fails
// is stored outside that index, and the returned *storeIndexFailures counts
// such objects.
func (m *threadSafeMap) replaceLists(keys []string, objs []interface{}, resourceVersion string) error {
	// Build the new content without the lock, so readers are not blocked
	// for the whole of a large relist; if AddIndexers changed the set of
	// indices meanwhile, build again under the lock.
	m.lock.RLock()
	gen, nsIdx, slotted := m.layoutGen, m.nsIdx, m.slotted
	m.lock.RUnlock()
	r := storeBuildReplacement(keys, objs, nsIdx, slotted)
	if m.replaceBuilt != nil {
		m.replaceBuilt()
	}
	m.lock.Lock()
	defer m.lock.Unlock()
	if m.layoutGen != gen {
		r = storeBuildReplacement(keys, objs, m.nsIdx, m.slotted)
	}
	m.items = r.items
	for i, ix := range m.nsIdx {
		if i == 0 {
			ix.byValue = r.nsByValue
		} else {
			ix.byValue = storeCloneIndex(r.nsByValue)
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

// storeReplacement is the content and indices built for a Replace.
type storeReplacement struct {
	items       map[string]interface{}
	nsByValue   index   // for the namespace indices, when there are any
	slotByValue []index // for the slotted indices, by slot
	// failures counts the objects an index function failed on.
	failures storeIndexFailures
}

// storeBuildReplacement computes the entries for objs (stored under the
// parallel keys; a later duplicate key wins) and the indices over them,
// reading only the immutable functions of the given indices. An object on
// which an index function fails is left out of that index and recorded in
// the replacement's failures.
func storeBuildReplacement(keys []string, objs []interface{}, nsIdx, slotted []*tsIndex) storeReplacement {
	items := make(map[string]interface{}, len(keys))
	// nsUnindexed holds the keys left out of the namespace indices.
	var nsUnindexed map[string]struct{}
	var failures storeIndexFailures
	nSlots := len(slotted)
	// The entries and their vals slices are cut from one allocation each.
	var chunk [][]string
	var entries []tsEntry
	for i, key := range keys {
		obj := objs[i]
		failed := false
		if len(nsIdx) > 0 {
			if _, err := storeMetaAccessor(obj); err != nil {
				failures.add(&storeIndexError{index: nsIdx[0].name, key: key, err: err})
				failed = true
				if nsUnindexed == nil {
					nsUnindexed = map[string]struct{}{}
				}
				nsUnindexed[key] = struct{}{}
			} else if nsUnindexed != nil {
				// A later duplicate key replaces an unindexed object.
				delete(nsUnindexed, key)
			}
		}
		if nSlots == 0 {
			items[key] = obj
			continue
		}
		if len(chunk) < nSlots {
			chunk = make([][]string, nSlots*(len(keys)-i))
			entries = make([]tsEntry, len(keys)-i)
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
	r := storeReplacement{items: items, slotByValue: make([]index, nSlots), failures: failures}
	var nsCounts map[string]int
	if len(nsIdx) > 0 {
		nsCounts = map[string]int{}
	}
	slotCounts := make([]map[string]int, nSlots)
	for i := range slotCounts {
		slotCounts[i] = map[string]int{}
	}
	for key, e := range items {
		if nsCounts != nil && !storeInSet(nsUnindexed, key) {
			nsCounts[storedNamespace(storedObject(e))]++
		}
		for i, vals := range storedVals(e) {
			for _, v := range vals {
				slotCounts[i][v]++
			}
		}
	}
	presized := func(counts map[string]int) index {
		idx := make(index, len(counts))
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
	for key, e := range items {
		if r.nsByValue != nil && !storeInSet(nsUnindexed, key) {
			r.nsByValue[storedNamespace(storedObject(e))][key] = sets.Empty{}
		}
		for i, vals := range storedVals(e) {
			for _, v := range vals {
				r.slotByValue[i][v][key] = sets.Empty{}
			}
		}
	}
	return r
}

// storeCloneIndex returns a deep copy of idx.
func storeCloneIndex(idx index) index {
	out := make(index, len(idx))
	for v, keys := range idx {
		out[v] = keys.Clone()
	}
	return out
}

// storeInSet reports whether key is in set (which may be nil).
func storeInSet(set map[string]struct{}, key string) bool {
	if len(set) == 0 {
		return false
	}
	_, ok := set[key]
	return ok
}

// storeIndexFailuresKept is how many errors a storeIndexFailures keeps.
const storeIndexFailuresKept = 5

// storeIndexFailures reports the objects of a Replace that were stored
// outside an index whose function failed on them: how many, and the errors
// of the first few.
type storeIndexFailures struct {
	total int
	first []error
}

func (f *storeIndexFailures) add(err error) {
	f.total++
	if len(f.first) < storeIndexFailuresKept {
		f.first = append(f.first, err)
	}
}

// Error says how many objects are stored outside an index and why, for the
// first few.
func (f *storeIndexFailures) Error() string {
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
func (f *storeIndexFailures) Unwrap() []error { return f.first }
