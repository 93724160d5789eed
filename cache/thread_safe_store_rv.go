package cache

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/resourceversion"
	clientgofeatures "k8s.io/client-go/features"
)

// storeResourceVersionOf returns obj's resource version and whether obj has
// metadata to read it from.
func storeResourceVersionOf(obj interface{}) (string, bool) {
	meta, err := storeMetaAccessor(obj)
	if err != nil {
		return "", false
	}
	return meta.GetResourceVersion(), true
}

// setRVLocked records rv as the newest resource version seen.
func (m *threadSafeMap) setRVLocked(rv string) {
	m.rv = rv
	m.metrics.setResourceVersion(rv)
}

// writtenRVLocked records the resource version of a written object, unless
// the store keeps a watermark.
func (m *threadSafeMap) writtenRVLocked(rv string) {
	if !m.watermark {
		m.setRVLocked(rv)
	}
}

// listedRVLocked records the resource version of a complete list (Replace):
// the list is the server's truth, so a store that keeps a watermark takes
// its version even when it is lower than the watermark (a version pinned
// by a bogus event, or an etcd restored from a backup). An empty version
// leaves the watermark alone.
func (m *threadSafeMap) listedRVLocked(rv string) {
	if m.watermark && rv == "" {
		return
	}
	m.setRVLocked(rv)
}

// bookmarkRVLocked records the resource version of a Bookmark: as the
// newest seen, or, for a store that keeps a watermark, only when it is
// ahead of the current one.
func (m *threadSafeMap) bookmarkRVLocked(rv string) {
	if m.watermark {
		m.advanceRVLocked(rv)
		return
	}
	m.setRVLocked(rv)
}

// advanceRVLocked records rv when it is ahead of the recorded version: an
// empty rv never is; anything is ahead of an empty version. Versions are
// compared as the API defines them (decimal integers, KEP 4988). A version
// that does not parse as an unsigned 64-bit integer is bad data when the
// recorded one does (a misbehaving aggregated server or proxy), and is
// ignored; when neither does (a server with opaque versions), rv is taken
// as ahead, since versions come in the server's order.
func (m *threadSafeMap) advanceRVLocked(rv string) {
	if rv == "" || rv == m.rv {
		return
	}
	if m.rv != "" {
		if !storeRVIsUint64(rv) {
			if storeRVIsUint64(m.rv) {
				return
			}
		} else if cmp, err := resourceversion.CompareResourceVersion(rv, m.rv); err == nil && cmp <= 0 {
			return
		}
	}
	m.setRVLocked(rv)
}

// storeRVIsUint64 reports whether rv is a resource version as
// kube-apiserver issues them: a decimal unsigned 64-bit integer.
func storeRVIsUint64(rv string) bool {
	_, err := strconv.ParseUint(rv, 10, 64)
	return err == nil
}

// resetRV records rv, the version of a complete list applied in several
// steps (page by page, or through a DeltaFIFO), as the watermark even when
// it is lower; see listedRVLocked. It reports whether the version changed.
func (m *threadSafeMap) resetRV(rv string) bool {
	return m.moveRV(rv, true)
}

// advanceRV moves the recorded resource version forward to rv (see
// advanceRVLocked); it reports whether it moved.
func (m *threadSafeMap) advanceRV(rv string) bool {
	return m.moveRV(rv, false)
}

// moveRV records rv as a complete list's version (listed) or as a version
// reached by applying changes; an empty rv changes nothing. It reports
// whether the recorded version changed.
func (m *threadSafeMap) moveRV(rv string, listed bool) bool {
	if rv == "" {
		return false
	}
	m.lock.Lock()
	defer m.lock.Unlock()
	before := m.rv
	if listed {
		m.listedRVLocked(rv)
	} else {
		m.advanceRVLocked(rv)
	}
	return m.rv != before
}

// Bookmark records rv as the newest resource version seen.
func (m *threadSafeMap) Bookmark(rv string) {
	m.lock.Lock()
	defer m.lock.Unlock()
	m.bookmarkRVLocked(rv)
}

// LastStoreSyncResourceVersion returns the newest resource version seen, or
// "" while the AtomicFIFO feature gate is disabled.
func (m *threadSafeMap) LastStoreSyncResourceVersion() string {
	if !clientgofeatures.FeatureGates().Enabled(clientgofeatures.AtomicFIFO) {
		return ""
	}
	m.lock.RLock()
	defer m.lock.RUnlock()
	return m.rv
}

// storeRVForMetrics converts a resource version to a gauge value, keeping
// at most its last 15 digits so the float64 stays exact. It returns false
// for versions that are not decimal integers.
func storeRVForMetrics(rv string) (float64, bool) {
	if rv == "" {
		return 0, true
	}
	if len(rv) > 15 {
		rv = rv[len(rv)-15:]
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return 0, false
	}
	return float64(n), true
}
