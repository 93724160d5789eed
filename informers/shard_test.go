package informers_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
)

// TestWithShardSplitsTheTypedFactorysPods: four factories, one shard of
// EvenShardRanges(4) each, over a fake clientset (which, as a server
// without the ShardedListAndWatch gate, ignores the selector): their listers
// hold disjoint sets whose union is every pod, each exactly the pods its
// shard contains, and each informer reports the ignored selector.
func TestWithShardSplitsTheTypedFactorysPods(t *testing.T) {
	var objs []runtime.Object
	all := map[string]*corev1.Pod{}
	for i := range 200 {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", i), UID: uuid.NewUUID()}}
		objs = append(objs, pod)
		all[pod.Name] = pod
	}
	ranges, err := cache.EvenShardRanges(4)
	require.NoError(t, err)
	owner := map[string]int{}
	for i, r := range ranges {
		shard := cache.Shard{Key: cache.ShardByUID, Ranges: []cache.ShardRange{r}}
		client := fake.NewClientset(objs...)
		factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithShard(shard))
		pods := factory.Core().V1().Pods()
		var mu sync.Mutex
		var ignored []*cache.ShardSelectorIgnoredError
		require.NoError(t, pods.Informer().SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			var e *cache.ShardSelectorIgnoredError
			if errors.As(err, &e) {
				mu.Lock()
				ignored = append(ignored, e)
				mu.Unlock()
			}
		}))
		ctx, cancel := context.WithCancel(context.Background())
		factory.Start(ctx.Done())
		for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
			require.True(t, ok, "%v did not sync", typ)
		}
		listed, err := pods.Lister().List(labels.Everything())
		require.NoError(t, err)
		var want []string
		for name, pod := range all {
			if in, err := shard.Contains(pod); err == nil && in {
				want = append(want, name)
			}
		}
		var got []string
		for _, p := range listed {
			got = append(got, p.Name)
			if prev, seen := owner[p.Name]; seen {
				t.Errorf("pod %s is in shards %d and %d", p.Name, prev, i)
			}
			owner[p.Name] = i
		}
		sort.Strings(want)
		sort.Strings(got)
		assert.NotEmpty(t, got, "shard %d holds no pod of 200 random uids", i)
		assert.Equal(t, want, got, "shard %d", i)
		mu.Lock()
		assert.Len(t, ignored, 1, "shard %d", i)
		mu.Unlock()
		cancel()
		factory.Shutdown()
	}
	assert.Len(t, owner, len(all), "the shards' union is every pod")
}
