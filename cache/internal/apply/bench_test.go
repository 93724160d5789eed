package apply

import (
	"strconv"
	"testing"

	"github.com/kinformer/kinformer/cache/internal/fanout"
)

// BenchmarkApplierProcessBatch measures an informer's hot path: batches of
// updates of cached objects, with the queue's keys, applied to the own
// store in one transaction and collected by Notes, flushed to a processor
// without listeners.
func BenchmarkApplierProcessBatch(b *testing.B) {
	for _, size := range []int{1, 100} {
		b.Run("batch="+strconv.Itoa(size), func(b *testing.B) {
			const rounds = 16
			batches := make([][]testDelta, rounds)
			keys := make([]string, size)
			for r := range batches {
				batches[r] = make([]testDelta, size)
				for i := range size {
					name := "p" + strconv.Itoa(i)
					batches[r][i] = testDelta{Updated, testPod(name, strconv.Itoa(10+r*size+i))}
					keys[i] = "ns/" + name
				}
			}
			s := newTestSetup(b, nil)
			notes := &Notes{}
			s.cfg.KeysOf = func([]testDelta) []string { return keys }
			s.cfg.Handler = notes
			a := New(s.cfg)
			p := fanout.NewProcessor(fanout.Config{})
			for _, ds := range batches {
				_ = a.ProcessBatch(ds, false)
				notes.Flush(p)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = a.ProcessBatch(batches[i%rounds], false)
				notes.Flush(p)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/delta")
		})
	}
}
