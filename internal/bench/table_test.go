package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kinformer/kinformer/cache"
)

const benchSampleOutput = `goos: linux
BenchmarkSync/pods=2000-2         	       1	1234 ns/op	         6.0 c-allocs/pod	        18.0 c-sync-ms	 1.0 f-sync-ms	3.0 k-allocs/pod	        12.0 k-sync-ms
BenchmarkSync/pods=2000-2         	       1	1234 ns/op	         6.0 c-allocs/pod	        20.0 c-sync-ms	 1.0 f-sync-ms	3.0 k-allocs/pod	        16.0 k-sync-ms
BenchmarkSync/pods=2000-2         	       1	1234 ns/op	         6.0 c-allocs/pod	        22.0 c-sync-ms	 1.0 f-sync-ms	3.0 k-allocs/pod	        14.0 k-sync-ms
BenchmarkEvents/handlers=10-2        	       1	2 ns/op	       40000 c-events/s	 100000 k-events/s
PASS
`

func TestBenchTableParsesOutputIntoRows(t *testing.T) {
	res, err := ParseBench(strings.NewReader(benchSampleOutput))
	require.NoError(t, err)
	assert.Equal(t, []string{"Sync/pods=2000", "Events/handlers=10"}, res.Names)
	assert.Equal(t, []float64{12, 16, 14}, res.Values["Sync/pods=2000"]["k-sync-ms"])

	rows := res.Rows()
	require.Len(t, rows, 3)
	assert.Equal(t, "allocs/pod", rows[0].Figure)
	assert.InDelta(t, 0.5, rows[0].Ratio(), 1e-9)
	assert.True(t, rows[0].Met)

	sync := rows[1]
	assert.Equal(t, "sync-ms", sync.Figure)
	assert.Equal(t, 14.0, sync.Kinformer)
	assert.Equal(t, 20.0, sync.ClientGo)
	assert.Equal(t, 1.0, sync.Floor)
	assert.Equal(t, 3, sync.Runs)
	require.NotNil(t, sync.Target)
	assert.True(t, sync.Met, "0.7 ≤ 0.7")

	ev := rows[2]
	require.NotNil(t, ev.Target)
	assert.Equal(t, 2.0, ev.Target.Value, "the 10-handler target, not the 1-handler one")
	assert.True(t, ev.Met)

	var out strings.Builder
	require.NoError(t, WriteTable(&out, rows))
	assert.Contains(t, out.String(), "| Sync/pods=2000 | sync-ms | 14.00 | 20.00 | 0.70× | ≤ 0.7× | yes | 1.00 | 14.00× | 3 |")
	assert.Contains(t, out.String(), "| Events/handlers=10 | events/s | 100000 | 40000 | 2.50× | ≥ 2× | yes | – | – | 1 |")
}

// The events benchmark subtracts one allocation per event for the producer;
// this keeps that true.
func TestMemoryLWProducerAllocatesOncePerEvent(t *testing.T) {
	templates := NewPodList(0, 4, "1").Items
	rvs := []string{"2", "3", "4", "5", "6", "7", "8", "9"}
	w := &MemoryWatch{ch: make(chan watch.Event, len(rvs)), stopped: make(chan struct{})}
	allocs := testing.AllocsPerRun(20, func() {
		require.NoError(t, sendModified(w, templates, rvs))
		for range rvs {
			<-w.ch
		}
	})
	assert.Equal(t, float64(len(rvs)), allocs)
}

func TestMemoryLWServesPages(t *testing.T) {
	lw := NewMemoryLW(1200, 7)
	var keys []string
	opts := metav1.ListOptions{Limit: 500}
	for pages := 1; ; pages++ {
		obj, err := lw.List(opts)
		require.NoError(t, err)
		list := obj.(*v1.PodList)
		assert.Equal(t, "7", list.ResourceVersion)
		for i := range list.Items {
			key, err := cache.MetaNamespaceKeyFunc(&list.Items[i])
			require.NoError(t, err)
			keys = append(keys, key)
		}
		if list.Continue == "" {
			assert.Equal(t, 3, pages)
			break
		}
		opts.Continue = list.Continue
	}
	require.Len(t, keys, 1200)
	for i, key := range keys {
		assert.Equal(t, PodKey(i), key)
	}

	obj, err := lw.List(metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	require.NoError(t, err)
	assert.Len(t, obj.(*v1.PodList).Items, 1200, "a LIST at resourceVersion 0 is not paged")
	assert.Equal(t, 4, lw.Lists())
}
