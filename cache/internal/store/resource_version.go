package store

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// resourceVersionOf returns obj's resource version and whether obj has
// metadata to read it from.
func resourceVersionOf(obj any) (string, bool) {
	meta, err := ObjectMeta(obj)
	if err != nil {
		return "", false
	}
	return meta.GetResourceVersion(), true
}

// setRVLocked records rv as the newest resource version seen.
func (m *Map) setRVLocked(rv string) {
	m.rv = rv
	if m.onRV != nil {
		m.onRV(rv)
	}
}

// writtenRVLocked records the resource version of a written object, unless
// the store keeps a watermark.
func (m *Map) writtenRVLocked(rv string) {
	if !m.watermark {
		m.setRVLocked(rv)
	}
}

// listedRVLocked records the resource version of a complete list (Replace):
// the list is the server's truth, so a store that keeps a watermark takes
// its version even when it is lower than the watermark (a version pinned
// by a bogus event, or an etcd restored from a backup). An empty version
// leaves the watermark alone.
func (m *Map) listedRVLocked(rv string) {
	if m.watermark && rv == "" {
		return
	}
	m.setRVLocked(rv)
}

// bookmarkRVLocked records the resource version of a Bookmark: as the
// newest seen, or, for a store that keeps a watermark, only when it is
// ahead of the current one.
func (m *Map) bookmarkRVLocked(rv string) {
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
func (m *Map) advanceRVLocked(rv string) {
	if rv == "" || rv == m.rv {
		return
	}
	if m.rv != "" {
		if !isUint64(rv) {
			if isUint64(m.rv) {
				return
			}
		} else if cmp, err := resourceversion.CompareResourceVersion(rv, m.rv); err == nil && cmp <= 0 {
			return
		}
	}
	m.setRVLocked(rv)
}

// isUint64 reports whether rv is a resource version as kube-apiserver
// issues them: a decimal unsigned 64-bit integer.
func isUint64(rv string) bool {
	_, err := strconv.ParseUint(rv, 10, 64)
	return err == nil
}

// ResetResourceVersion records rv, the version of a complete list applied
// in several steps (page by page, or through a queue that coalesces), as
// the recorded version even when it is lower, as Replace does; an empty rv
// changes nothing. It reports whether the recorded version changed. It is
// meant for a store that keeps a watermark, but works on any.
func (m *Map) ResetResourceVersion(rv string) bool {
	return m.moveRV(rv, true)
}

// AdvanceResourceVersion records rv when it is ahead of the recorded
// version (see the package documentation for how versions compare; an
// empty rv and a version that is bad data never are). It reports whether
// the recorded version moved. A store that keeps a watermark is moved by
// its owner this way once every change up to rv is applied.
func (m *Map) AdvanceResourceVersion(rv string) bool {
	return m.moveRV(rv, false)
}

// moveRV records rv as a complete list's version (listed) or as a version
// reached by applying changes; an empty rv changes nothing. It reports
// whether the recorded version changed.
func (m *Map) moveRV(rv string, listed bool) bool {
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

// Bookmark records rv as the newest resource version seen, without changing
// the content; a store that keeps a watermark takes it only when it is
// ahead (as AdvanceResourceVersion).
func (m *Map) Bookmark(rv string) {
	m.lock.Lock()
	defer m.lock.Unlock()
	m.bookmarkRVLocked(rv)
}

// ResourceVersion returns the recorded resource version ("" until one is
// recorded).
func (m *Map) ResourceVersion() string {
	m.lock.RLock()
	defer m.lock.RUnlock()
	return m.rv
}
