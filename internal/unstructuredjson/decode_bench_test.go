package unstructuredjson

import (
	"fmt"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kinformer/kinformer/internal/bench"
)

// BenchmarkDecodePodList decodes the JSON LIST body of 1,000 benchmark pods
// into an UnstructuredList, as the dynamic client does, with
// UnstructuredJSONScheme and with Scheme; figures are per pod, CPU time
// including the garbage collector's. With live=N the last N pods decoded
// stay reachable, as an informer's cache keeps them.
func BenchmarkDecodePodList(b *testing.B) {
	const pods = 1000
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		b.Fatal("no JSON serializer")
	}
	data, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, v1.SchemeGroupVersion), bench.NewPodList(0, pods, "1000"))
	if err != nil {
		b.Fatal(err)
	}
	sides := []struct {
		name    string
		decoder runtime.Decoder
	}{
		{"apimachinery", unstructured.UnstructuredJSONScheme},
		{"kinformer", Scheme},
	}
	for _, live := range []int{0, 20000} {
		for _, side := range sides {
			b.Run(fmt.Sprintf("live=%d/side=%s", live, side.name), func(b *testing.B) {
				kept := make([]runtime.Object, live/pods)
				b.ReportAllocs()
				cpu := processCPU()
				n := 0
				for b.Loop() {
					obj, err := runtime.Decode(side.decoder, data)
					if err != nil {
						b.Fatal(err)
					}
					if len(kept) > 0 {
						kept[n%len(kept)] = obj
					}
					n++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*pods), "ns/pod")
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N*pods), "cpu-ns/pod")
			})
		}
	}
}

func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
