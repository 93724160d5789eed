//go:build !race

package unstructuredjson

import (
	"runtime"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kinformer/kinformer/internal/bench"
)

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestChurnKeepsNoOldStorageAlive decodes a JSON list of pods, keeps them as
// a cache does, then replaces every pod five times by a newer version
// decoded on its own: the live heap must end no larger than after the list
// (plus a margin), so neither the shared key table nor any object's storage
// keeps older objects alive. It runs without the race detector (make
// alloc-guards).
func TestChurnKeepsNoOldStorageAlive(t *testing.T) {
	const pods = 1000
	info, ok := kruntime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), kruntime.ContentTypeJSON)
	if !ok {
		t.Fatal("no JSON serializer")
	}
	encoder := scheme.Codecs.EncoderForVersion(info.Serializer, v1.SchemeGroupVersion)
	data, err := kruntime.Encode(encoder, bench.NewPodList(0, pods, "100"))
	if err != nil {
		t.Fatal(err)
	}
	updates := make([][]byte, pods)
	for i := range updates {
		if updates[i], err = kruntime.Encode(encoder, bench.NewPod(i, "200")); err != nil {
			t.Fatal(err)
		}
	}
	base := liveHeap()

	cache := make(map[string]*unstructured.Unstructured, pods)
	obj, err := kruntime.Decode(Scheme, data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range obj.(*unstructured.UnstructuredList).Items {
		u := &obj.(*unstructured.UnstructuredList).Items[i]
		cache[u.GetNamespace()+"/"+u.GetName()] = u
	}
	obj = nil
	afterList := liveHeap() - base

	for range 5 {
		for i := range updates {
			o, err := kruntime.Decode(Scheme, updates[i])
			if err != nil {
				t.Fatal(err)
			}
			u := o.(*unstructured.Unstructured)
			cache[u.GetNamespace()+"/"+u.GetName()] = u
		}
	}
	afterChurn := liveHeap() - base
	runtime.KeepAlive(cache)
	runtime.KeepAlive(data)
	runtime.KeepAlive(updates)
	t.Logf("live heap: %d B per pod after the list, %d B per pod after five rounds of updates", afterList/pods, afterChurn/pods)
	if afterChurn > afterList+afterList/10 {
		t.Fatalf("the live heap grew under churn: %d B per pod after the list, %d after updates", afterList/pods, afterChurn/pods)
	}
}
