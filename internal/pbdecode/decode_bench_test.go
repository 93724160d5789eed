package pbdecode

import (
	"fmt"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/internal/bench"
)

// BenchmarkDecodePodList decodes a LIST body's PodList message of 1,000
// benchmark pods with the API type's generated Unmarshal (what
// apimachinery's protobuf serializer calls) and with Unmarshal; figures are
// per pod. With live=N the last N pods decoded stay reachable, as an
// informer's cache keeps them, so that the garbage collector's work is that
// of a process holding a cache.
func BenchmarkDecodePodList(b *testing.B) {
	const pods = 1000
	data, err := bench.NewPodList(0, pods, "1000").Marshal()
	if err != nil {
		b.Fatal(err)
	}
	sides := []struct {
		name   string
		decode func(*v1.PodList) error
	}{
		{"apimachinery", func(l *v1.PodList) error { return l.Unmarshal(data) }},
		{"kinformer", func(l *v1.PodList) error { return Unmarshal(data, l) }},
	}
	for _, live := range []int{0, 20000} {
		for _, side := range sides {
			b.Run(fmt.Sprintf("live=%d/side=%s", live, side.name), func(b *testing.B) {
				kept := make([]*v1.PodList, live/pods)
				b.ReportAllocs()
				cpu := processCPU()
				n := 0
				for b.Loop() {
					list := new(v1.PodList)
					if err := side.decode(list); err != nil {
						b.Fatal(err)
					}
					if len(kept) > 0 {
						kept[n%len(kept)] = list
					}
					n++
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*pods), "ns/pod")
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N*pods), "cpu-ns/pod")
			})
		}
	}
}

// processCPU returns the CPU time (user and system, every thread: the
// garbage collector's included) the process has used, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
