package controllerruntime_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinformer/kinformer/internal/testenv"
)

// BenchmarkConsistentReadAfterWrite measures, on each engine, how long
// controller-runtime's read-your-writes client takes from the return of a
// write to the return of the cache read of the written key: the time the
// cache needs to hear of the write through its watch, plus the read. One op
// is one Update of a pod's label, then a Get of the pod, which must return
// the Update's resourceVersion. It reports the median (read-p50-µs), the 90th
// percentile (read-p90-µs) and the slowest (read-max-µs) of those times over
// the b.N ops, and the median of the Updates themselves (write-p50-µs).
//
// It runs against the shared cluster of TestMain:
//
//	cd interop/controllerruntime
//	KINFORMER_TESTENV_BIN=$(../../internal/testenv/build.sh) nice -n 19 \
//	  go test -run '^$' -bench '^BenchmarkConsistentReadAfterWrite$' -benchtime 50x -count 5 .
//
// testdata/consistent-read-after-write.txt holds a run's output.
func BenchmarkConsistentReadAfterWrite(b *testing.B) {
	env := sharedEnv(b)
	cs := env.Clientset()
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			ns := testenv.Namespace(b, cs)
			c := newConsistentClient(b, env.Config(), e)
			ctx := context.Background()
			key := types.NamespacedName{Namespace: ns, Name: "bench"}
			pod := newPod(ns, key.Name, map[string]string{"op": "0"})
			if err := c.Create(ctx, pod); err != nil {
				b.Fatalf("Create: %v", err)
			}
			reads := make([]time.Duration, 0, b.N)
			writes := make([]time.Duration, 0, b.N)
			var got corev1.Pod
			b.ResetTimer()
			for i := range b.N {
				pod.Labels["op"] = fmt.Sprint(i + 1)
				start := time.Now()
				if err := c.Update(ctx, pod); err != nil {
					b.Fatalf("Update %d: %v", i+1, err)
				}
				written := time.Now()
				expectRead(b, c, fmt.Sprintf("Update %d", i+1), key, &got, pod.ResourceVersion)
				reads = append(reads, time.Since(written))
				writes = append(writes, written.Sub(start))
			}
			b.StopTimer()
			slices.Sort(reads)
			slices.Sort(writes)
			b.ReportMetric(micros(percentile(reads, 50)), "read-p50-µs")
			b.ReportMetric(micros(percentile(reads, 90)), "read-p90-µs")
			b.ReportMetric(micros(reads[len(reads)-1]), "read-max-µs")
			b.ReportMetric(micros(percentile(writes, 50)), "write-p50-µs")
		})
	}
}

// percentile returns the p-th percentile (nearest rank) of sorted, which
// must not be empty.
func percentile(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

// micros is d in microseconds.
func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
