package pbdecode

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/internal/bench"
)

// BenchmarkDecodePodList decodes a LIST body's PodList message of 1,000
// benchmark pods with the API type's generated Unmarshal (what
// apimachinery's protobuf serializer calls) and with Unmarshal; figures are
// per pod.
func BenchmarkDecodePodList(b *testing.B) {
	const pods = 1000
	data, err := bench.NewPodList(0, pods, "1000").Marshal()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("side=apimachinery", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var list v1.PodList
			if err := list.Unmarshal(data); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*pods), "ns/pod")
	})
	b.Run("side=kinformer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var list v1.PodList
			if err := Unmarshal(data, &list); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*pods), "ns/pod")
	})
}
