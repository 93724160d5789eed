//go:build !race

package projection

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// liveHeap is the heap in use after a complete collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Sharing the marker map allocates nothing, and frees the map each
// projected object held: the heap the objects retain drops by at least
// the size of a one-entry map per object, typed and unstructured.
func TestSharedMarkerSavesAMapPerObject(t *testing.T) {
	const n = 4000
	pods := make([]any, n)
	widgets := make([]any, n)
	for i := range n {
		pods[i] = projectedMarkerTestPod(t, "a")
		widgets[i] = projectedMarkerTestWidget(t, "w")
	}
	for _, tc := range []struct {
		name string
		objs []any
	}{{"typed", pods}, {"unstructured", widgets}} {
		t.Run(tc.name, func(t *testing.T) {
			before := liveHeap()
			for _, obj := range tc.objs {
				markerTestProjection.ShareMarker(obj)
			}
			after := liveHeap()
			for _, obj := range tc.objs {
				assert.True(t, markerTestProjection.SharesMarker(obj))
			}
			saved := (float64(before) - float64(after)) / n
			t.Logf("%s: %.0f bytes less heap per object", tc.name, saved)
			// A one-entry map (its header and one group of slots) is well
			// over 200 bytes on 64-bit platforms.
			assert.GreaterOrEqual(t, saved, 200.0, "heap per object saved")
			runtime.KeepAlive(tc.objs)
		})
	}

	fresh := projectedMarkerTestPod(t, "b")
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		markerTestProjection.ShareMarker(fresh)
		markerTestProjection.SharesMarker(fresh)
	}), "sharing allocates nothing")
	u := projectedMarkerTestWidget(t, "w")
	assert.Zero(t, testing.AllocsPerRun(100, func() { markerTestProjection.ShareMarker(u) }))
}
