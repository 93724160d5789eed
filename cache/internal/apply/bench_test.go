package apply

import (
	"strconv"
	"sync"
	"testing"

	"github.com/kinformer/kinformer/cache/internal/fanout"
)

// BenchmarkApplierDeliver measures an informer's hot path: batches of
// updates of cached objects, with the queue's keys, delivered (applied to
// the own store in one transaction under the informer's lock, collected by
// Notes and handed to a processor without listeners).
func BenchmarkApplierDeliver(b *testing.B) {
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
			s.cfg.Delivery = &Delivery[testDelta]{Lock: &sync.Mutex{}, Notes: notes, To: fanout.NewProcessor(fanout.Config{})}
			a := New(s.cfg)
			for _, ds := range batches {
				_ = a.Deliver(ds, false)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = a.Deliver(batches[i%rounds], false)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*size), "ns/delta")
		})
	}
}
