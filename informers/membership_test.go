package informers_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

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
	"github.com/kinformer/kinformer/informers/internal/factorytest"
	"github.com/kinformer/kinformer/sharding"
)

// rangeRecorder records the ranges a RangeSyncHandler hears of.
type rangeRecorder struct {
	cache.ResourceEventHandlerFuncs
	mu     sync.Mutex
	synced map[int]bool
}

func (r *rangeRecorder) OnRangeSynced(rg sharding.Range) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.synced[rg.Index] = true
}

func (r *rangeRecorder) OnRangeLost(rg sharding.Range) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.synced, rg.Index)
}

func (r *rangeRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.synced)
}

// ignoreShardSelector drops the reports of a server ignoring the shard
// selector, which the fake clientset is, and fails the test on others.
func ignoreShardSelector(t *testing.T) cache.WatchErrorHandlerWithContext {
	return func(_ context.Context, _ *cache.Reflector, err error) {
		var ignored *cache.ShardSelectorIgnoredError
		if !errors.As(err, &ignored) {
			t.Errorf("watch error: %v", err)
		}
	}
}

// TestWithMembershipSplitsTheTypedFactorysPods: two typed factories over one
// fake clientset, each WithMembership of its own member of one group, build
// sharded informers whose listers together hold every pod, each pod in
// exactly one, the one of the member acting on the pod's range. The
// factory's other settings (WithTransform) reach the range informers, a
// RangeSyncHandler registered through the factory's informer hears of its
// ranges' sync, and WithSnapshotDir writes no file for sharded informers.
func TestWithMembershipSplitsTheTypedFactorysPods(t *testing.T) {
	const n = 200
	var objs []runtime.Object
	for i := range n {
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", i), UID: uuid.NewUUID()}})
	}
	client := fake.NewClientset(objs...)
	ranges, err := cache.EvenShardRanges(4)
	require.NoError(t, err)
	rangeOf := func(pod *corev1.Pod) int {
		for i, r := range ranges {
			if in, err := (cache.Shard{Key: cache.ShardByUID, Ranges: []cache.ShardRange{r}}).Contains(pod); err == nil && in {
				return i
			}
		}
		return -1 // Acting(-1) is false: the condition fails.
	}
	dir := t.TempDir()
	transform := func(obj interface{}) (interface{}, error) {
		pod := obj.(*corev1.Pod)
		pod.Annotations = map[string]string{"transformed": "yes"}
		return pod, nil
	}
	type replica struct {
		member  *sharding.Member
		factory informers.SharedInformerFactory
		pods    *sharding.Informer
		rec     *rangeRecorder
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var replicas []*replica
	for _, id := range []string{"a", "b"} {
		m := factorytest.RunMember(t, factorytest.MemberConfig(client.CoordinationV1(), id))
		factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
			informers.WithMembership(m, cache.ShardByUID), informers.WithTransform(transform), informers.WithSnapshotDir(dir))
		informer := factory.Core().V1().Pods().Informer()
		sharded, ok := sharding.InformerOf(informer)
		require.True(t, ok, "the factory's informer is %T, not sharded", informer)
		require.NoError(t, informer.SetWatchErrorHandlerWithContext(ignoreShardSelector(t)))
		rec := &rangeRecorder{synced: map[int]bool{}}
		_, err := informer.AddEventHandler(rec)
		require.NoError(t, err)
		factory.Start(ctx.Done())
		replicas = append(replicas, &replica{member: m, factory: factory, pods: sharded, rec: rec})
	}
	for _, r := range replicas {
		for typ, ok := range r.factory.WaitForCacheSync(ctx.Done()) {
			require.True(t, ok, "%v did not sync", typ)
		}
	}
	require.Eventually(t, func() bool {
		total, synced := 0, 0
		for _, r := range replicas {
			st := r.member.Status()
			if len(st.Members) != len(replicas) {
				return false // a member alone at first takes every range
			}
			for _, rg := range st.Ranges {
				if (rg.Assigned == st.Identity) != (rg.State == sharding.RangeActing) {
					return false // a range not yet handed to its assigned member
				}
			}
			pods, err := r.factory.Core().V1().Pods().Lister().List(labels.Everything())
			if err != nil {
				return false
			}
			for _, pod := range pods {
				if !r.member.Acting(rangeOf(pod)) || pod.Annotations["transformed"] != "yes" {
					return false
				}
			}
			total += len(pods)
			synced += r.rec.count()
		}
		return total == n && synced == len(ranges)
	}, 20*time.Second, 10*time.Millisecond, "every range acted on by its assigned member, every pod in the lister of the one member acting on its range")
	for _, r := range replicas {
		assert.NotEmpty(t, r.pods.RangeStatus(), "member %s holds no range", r.member.Identity())
	}
	cancel()
	for _, r := range replicas {
		r.factory.Shutdown()
	}
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, files, "sharded informers take no snapshots")
}

// TestWithMembershipAndWithShardFailToList: a factory given a static shard
// and a membership builds informers whose lists fail with an error
// wrapping cache.ErrInvalidShard, which a fail-fast WaitForCacheSync
// reports, rather than informers over the whole resource; without
// WithMembership the factory's informers are not sharded.
func TestWithMembershipAndWithShardFailToList(t *testing.T) {
	client := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: uuid.NewUUID()}})
	m, err := sharding.NewMember(factorytest.MemberConfig(client.CoordinationV1(), "a"))
	require.NoError(t, err)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithShard(cache.Shard{Ranges: []cache.ShardRange{{Start: "0x0000000000000000", End: cache.ShardTop}}}),
		informers.WithMembership(m, cache.ShardByUID),
		informers.WithSyncOptions(cache.SyncOptions{FailFast: true}))
	informer := factory.Core().V1().Pods().Informer()
	_, sharded := sharding.InformerOf(informer)
	assert.False(t, sharded)
	require.NoError(t, informer.SetWatchErrorHandlerWithContext(func(context.Context, *cache.Reflector, error) {}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	factory.StartWithContext(ctx)
	res := factory.WaitForCacheSyncWithContext(ctx)
	require.Error(t, res.Err)
	assert.ErrorIs(t, res.Err, cache.ErrInvalidShard)
	assert.NotErrorIs(t, res.Err, context.DeadlineExceeded, "fail-fast ends the wait")
	cancel()
	factory.Shutdown()

	plain := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithMembership(nil, cache.ShardByUID))
	_, sharded = sharding.InformerOf(plain.Core().V1().Pods().Informer())
	assert.False(t, sharded, "a nil member turns the option off")
}

// TestReleaseInformerStopsAShardedInformer: releasing a factory's sharded
// informer stops it and leaves its lister empty, without an error about
// its read-only cache; the next request builds a new sharded informer.
func TestReleaseInformerStopsAShardedInformer(t *testing.T) {
	client := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: uuid.NewUUID()}})
	m := factorytest.RunMember(t, factorytest.MemberConfig(client.CoordinationV1(), "a"))
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithMembership(m, cache.ShardByUID))
	pods := factory.Core().V1().Pods()
	informer := pods.Informer()
	require.NoError(t, informer.SetWatchErrorHandlerWithContext(ignoreShardSelector(t)))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	factory.StartWithContext(ctx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).Err)
	lister := pods.Lister()
	listed, err := lister.List(labels.Everything())
	require.NoError(t, err)
	require.Len(t, listed, 1)

	released, err := factory.(informers.InformerReleaser).ReleaseInformer(ctx, &corev1.Pod{})
	require.NoError(t, err)
	assert.True(t, released)
	assert.True(t, informer.IsStopped())
	listed, err = lister.List(labels.Everything())
	require.NoError(t, err)
	assert.Empty(t, listed)
	first, _ := sharding.InformerOf(informer)
	next, ok := sharding.InformerOf(factory.Core().V1().Pods().Informer())
	assert.True(t, ok)
	assert.NotSame(t, first, next)
	cancel()
	factory.Shutdown()
}
