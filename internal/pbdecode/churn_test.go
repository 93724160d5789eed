//go:build !race

package pbdecode

import (
	"runtime"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/internal/bench"
)

// liveHeap returns the bytes of live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestChurnKeepsNoOldStorageAlive decodes a list of pods, keeps them as a
// cache does, then replaces every pod five times by a newer version decoded
// on its own: the live heap must end no larger than after the first list
// (plus a margin), so no decoded object keeps an older object's storage (or
// the list's) alive. It runs without the race detector, which allocates on
// its own (make alloc-guards).
func TestChurnKeepsNoOldStorageAlive(t *testing.T) {
	const pods = 2000
	data, err := bench.NewPodList(0, pods, "100").Marshal()
	if err != nil {
		t.Fatal(err)
	}
	updates := make([][]byte, pods)
	for i := range updates {
		if updates[i], err = bench.NewPod(i, "200").Marshal(); err != nil {
			t.Fatal(err)
		}
	}
	base := liveHeap()

	cache := make(map[string]*v1.Pod, pods)
	var list v1.PodList
	if err := Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		cache[list.Items[i].Namespace+"/"+list.Items[i].Name] = &list.Items[i]
	}
	list = v1.PodList{}
	afterList := liveHeap() - base

	for round := range 5 {
		for i := range updates {
			pod := &v1.Pod{}
			if err := Unmarshal(updates[i], pod); err != nil {
				t.Fatal(err)
			}
			pod.ResourceVersion = strconv.Itoa(300 + round)
			cache[pod.Namespace+"/"+pod.Name] = pod
		}
	}
	afterChurn := liveHeap() - base
	// The inputs stay alive throughout, so that both figures count them.
	runtime.KeepAlive(cache)
	runtime.KeepAlive(data)
	runtime.KeepAlive(updates)
	t.Logf("live heap: %d B per pod after the list, %d B per pod after five rounds of updates", afterList/pods, afterChurn/pods)
	if afterChurn > afterList+afterList/10 {
		t.Fatalf("the live heap grew under churn: %d B per pod after the list, %d after updates", afterList/pods, afterChurn/pods)
	}
}
