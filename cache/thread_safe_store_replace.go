package cache

import (
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// Replace makes items the whole content of the store. Should an index
// function fail on one of them, the store is left unchanged and the error is
// reported through HandleError.
func (m *threadSafeMap) Replace(items map[string]interface{}, resourceVersion string) {
	keys := make([]string, 0, len(items))
	objs := make([]interface{}, 0, len(items))
	for k, obj := range items {
		keys = append(keys, k)
		objs = append(objs, obj)
	}
	if err := m.replaceLists(keys, objs, resourceVersion); err != nil {
		utilruntime.HandleErrorWithLogger(klog.Background(), err, "Store not replaced")
	}
}

// replaceLists makes objs (stored under the parallel keys; a later duplicate
// key wins) the whole content of the store and records resourceVersion. When
// an index function fails on an object, nothing changes and the error is
// returned.
func (m *threadSafeMap) replaceLists(keys []string, objs []interface{}, resourceVersion string) error {
	// Build the new content without the lock, so readers are not blocked
	// for the whole of a large relist; if AddIndexers changed the set of
	// indices meanwhile, build again under the lock.
	m.lock.RLock()
	gen, nsIdx, slotted := m.layoutGen, m.nsIdx, m.slotted
	m.lock.RUnlock()
	r, err := storeBuildReplacement(keys, objs, nsIdx, slotted)
	if err != nil {
		return err
	}
	if m.replaceBuilt != nil {
		m.replaceBuilt()
	}
	m.lock.Lock()
	defer m.lock.Unlock()
	if m.layoutGen != gen {
		if r, err = storeBuildReplacement(keys, objs, m.nsIdx, m.slotted); err != nil {
			return err
		}
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
	m.syncedRVLocked(resourceVersion)
	return nil
}

// storeReplacement is the content and indices built for a Replace.
type storeReplacement struct {
	items       map[string]interface{}
	nsByValue   index   // for the namespace indices, when there are any
	slotByValue []index // for the slotted indices, by slot
}

// storeBuildReplacement computes the entries for objs (stored under the
// parallel keys; a later duplicate key wins) and the indices over them,
// reading only the immutable functions of the given indices. It fails when
// an index function fails.
func storeBuildReplacement(keys []string, objs []interface{}, nsIdx, slotted []*tsIndex) (storeReplacement, error) {
	items := make(map[string]interface{}, len(keys))
	nSlots := len(slotted)
	// The entries and their vals slices are cut from one allocation each.
	var chunk [][]string
	var entries []tsEntry
	for i, key := range keys {
		obj := objs[i]
		if len(nsIdx) > 0 {
			if _, err := storeMetaAccessor(obj); err != nil {
				return storeReplacement{}, &storeIndexError{index: nsIdx[0].name, key: key, err: err}
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
			if err != nil {
				return storeReplacement{}, err
			}
			e.vals[s] = v
		}
		items[key] = e
	}

	// Count the keys of each value first so that every key set is
	// allocated at its final size: on a large list this avoids growing
	// (and rehashing) the sets again and again.
	r := storeReplacement{items: items, slotByValue: make([]index, nSlots)}
	var nsCounts map[string]int
	if len(nsIdx) > 0 {
		nsCounts = map[string]int{}
	}
	slotCounts := make([]map[string]int, nSlots)
	for i := range slotCounts {
		slotCounts[i] = map[string]int{}
	}
	for _, e := range items {
		if nsCounts != nil {
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
		if r.nsByValue != nil {
			r.nsByValue[storedNamespace(storedObject(e))][key] = sets.Empty{}
		}
		for i, vals := range storedVals(e) {
			for _, v := range vals {
				r.slotByValue[i][v][key] = sets.Empty{}
			}
		}
	}
	return r, nil
}

// storeCloneIndex returns a deep copy of idx.
func storeCloneIndex(idx index) index {
	out := make(index, len(idx))
	for v, keys := range idx {
		out[v] = keys.Clone()
	}
	return out
}
