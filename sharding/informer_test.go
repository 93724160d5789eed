package sharding

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kinformer/kinformer/cache"
)

// recorder is a handler that records what it hears, RangeSyncHandler
// included.
type recorder struct {
	mu      sync.Mutex
	adds    int
	deletes int
	synced  []int
	lost    []int
}

func (r *recorder) OnAdd(interface{}, bool)   { r.mu.Lock(); r.adds++; r.mu.Unlock() }
func (r *recorder) OnUpdate(_, _ interface{}) {}
func (r *recorder) OnDelete(interface{})      { r.mu.Lock(); r.deletes++; r.mu.Unlock() }
func (r *recorder) OnRangeSynced(rg Range) {
	r.mu.Lock()
	r.synced = append(r.synced, rg.Index)
	r.mu.Unlock()
}
func (r *recorder) OnRangeLost(rg Range) {
	r.mu.Lock()
	r.lost = append(r.lost, rg.Index)
	r.mu.Unlock()
}

// current returns the ranges reported synced and not lost since, sorted.
func (r *recorder) current() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	in := map[int]int{}
	for _, i := range r.synced {
		in[i]++
	}
	for _, i := range r.lost {
		in[i]--
	}
	var out []int
	for i, n := range in {
		if n > 0 {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

func heldIndices(inf *Informer) []int {
	var out []int
	for _, st := range inf.RangeStatus() {
		out = append(out, st.Range.Index)
	}
	return out
}

func (r *recorder) counts() (adds, deletes, synced, lost int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.adds, r.deletes, len(r.synced), len(r.lost)
}

func podClient(t *testing.T, n int) *fake.Clientset {
	objs := make([]runtime.Object, n)
	for i := range objs {
		objs[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: fmt.Sprintf("pod-%03d", i), UID: types.UID(fmt.Sprintf("uid-%03d-%d", i, i*7919)),
		}}
	}
	return fake.NewClientset(objs...)
}

func podLW(cs *fake.Clientset) cache.ListerWatcher {
	return countingPodLW(cs, nil)
}

// countingPodLW is podLW counting its lists in *lists, when not nil.
func countingPodLW(cs *fake.Clientset, lists *atomic.Int64) cache.ListerWatcher {
	// The fake clientset does not serve streaming lists: say so, as
	// client-go's fakes do, so that informers list.
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			if lists != nil {
				lists.Add(1)
			}
			return cs.CoreV1().Pods("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().Pods("").Watch(ctx, o)
		},
	}, cs)
}

// startInformer runs a sharded pod informer over m until the test ends.
func startInformer(t *testing.T, cs *fake.Clientset, m *Member, h cache.ResourceEventHandler) *Informer {
	return startCountingInformer(t, cs, m, h, nil)
}

// startCountingInformer is startInformer counting the lists in *lists.
func startCountingInformer(t *testing.T, cs *fake.Clientset, m *Member, h cache.ResourceEventHandler, lists *atomic.Int64) *Informer {
	inf, err := NewInformer(countingPodLW(cs, lists), &corev1.Pod{}, InformerOptions{Member: m})
	require.NoError(t, err)
	// The fake clientset ignores shard selectors: the informer filters on
	// its own and says so, which these tests do not need to hear.
	require.NoError(t, inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		var ignored *cache.ShardSelectorIgnoredError
		if !errors.As(err, &ignored) {
			cache.DefaultWatchErrorHandler(ctx, r, err)
		}
	}))
	if h != nil {
		_, err := inf.AddEventHandler(h)
		require.NoError(t, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.RunWithContext(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return inf
}

// TestInformerFollowsTheMembersRanges: two members' informers together hold
// every pod, each in exactly one cache, the one of the member acting on its
// range; a third member joining takes ranges from them, whose pods leave
// their caches without delete notifications (OnRangeLost instead); once it
// crashed, its ranges come back, listed again (OnRangeSynced). HasSynced
// stays true throughout.
func TestInformerFollowsTheMembersRanges(t *testing.T) {
	const pods = 200
	s := newSim(t)
	cs := podClient(t, pods)
	a, b := s.add("a"), s.add("b")
	rec := &recorder{}
	ia := startInformer(t, cs, a, rec)
	ib := startInformer(t, cs, b, nil)
	assert.False(t, ia.HasSynced())
	s.settle(10)
	require.Eventually(t, func() bool { return ia.HasSynced() && ib.HasSynced() }, 10*time.Second, 5*time.Millisecond)
	checkPartition := func(members map[string]*Member, infs map[string]*Informer) {
		t.Helper()
		require.Eventually(t, func() bool {
			total := 0
			for id, inf := range infs {
				for _, obj := range inf.GetStore().List() {
					pod := obj.(*corev1.Pod)
					idx := rangeOf(t, members[id], pod)
					if !members[id].Acting(idx) {
						return false
					}
				}
				total += len(inf.GetStore().ListKeys())
			}
			return total == pods
		}, 10*time.Second, 5*time.Millisecond)
	}
	checkPartition(map[string]*Member{"a": a, "b": b}, map[string]*Informer{"a": ia, "b": ib})
	for _, obj := range ib.GetStore().List() {
		acting, err := ia.Acting(obj)
		require.NoError(t, err)
		assert.False(t, acting, "a acts on a pod of b")
		acting, err = ib.Acting(obj)
		require.NoError(t, err)
		assert.True(t, acting)
	}
	_, err := ia.Acting("not an object")
	assert.Error(t, err)
	// a took every range in its first round, alone, then released to b
	// those b wins: released ranges were lost, never deleted.
	_, deletes, synced0, lost0 := rec.counts()
	assert.Zero(t, deletes)
	held := len(ia.RangeStatus())
	require.Eventually(t, func() bool { return slices.Equal(rec.current(), heldIndices(ia)) }, 10*time.Second, 5*time.Millisecond,
		"every range held is reported synced")
	assert.NotEmpty(t, ia.LastSyncResourceVersion())
	assert.NotEmpty(t, ia.GetStore().LastStoreSyncResourceVersion())
	_, _, synced0, _ = rec.counts()

	s.add("c")
	s.settle(10)
	require.Eventually(t, func() bool { _, _, _, l := rec.counts(); return l-lost0 == held-len(ia.RangeStatus()) }, 10*time.Second, 5*time.Millisecond)
	kept := len(ia.RangeStatus())
	assert.Less(t, kept, held)
	_, deletes, _, lost1 := rec.counts()
	assert.Zero(t, deletes, "a lost range's pods are not deleted for handlers")
	for _, obj := range ia.GetStore().List() {
		assert.True(t, a.Acting(rangeOf(t, a, obj.(*corev1.Pod))))
	}
	for _, key := range ia.GetStore().ListKeys() {
		_, ok, err := ia.GetStore().GetByKey(key)
		assert.True(t, ok)
		assert.NoError(t, err)
	}

	s.crashed["c"] = true
	s.settle(int(testLease/testRetry) + 4)
	checkPartition(map[string]*Member{"a": a, "b": b}, map[string]*Informer{"a": ia, "b": ib})
	regained := len(ia.RangeStatus()) - kept
	assert.Positive(t, regained)
	require.Eventually(t, func() bool { return slices.Equal(rec.current(), heldIndices(ia)) }, 10*time.Second, 5*time.Millisecond)
	_, _, synced1, _ := rec.counts()
	assert.Equal(t, regained, synced1-synced0)
	_, deletes, _, lost := rec.counts()
	assert.Zero(t, deletes)
	assert.Equal(t, lost1, lost)
	assert.True(t, ia.HasSynced())
	assert.ErrorIs(t, ia.GetStore().Add(&corev1.Pod{}), errReadOnly)
}

// rangeOf returns the index of the range of m's group that holds pod.
func rangeOf(t *testing.T, m *Member, pod *corev1.Pod) int {
	t.Helper()
	for _, r := range m.Ranges() {
		in, err := cache.Shard{Key: cache.ShardByUID, Ranges: []cache.ShardRange{r.Bounds}}.Contains(pod)
		require.NoError(t, err)
		if in {
			return r.Index
		}
	}
	t.Fatalf("pod %s in no range", pod.Name)
	return -1
}

// TestNewInformerRefusesBadOptions: no member, a shard, a snapshot file,
// an unknown key.
func TestNewInformerRefusesBadOptions(t *testing.T) {
	s := newSim(t)
	m := s.add("a")
	for name, o := range map[string]InformerOptions{
		"no member": {},
		"shard":     {Member: m, Range: cache.SharedIndexInformerOptions{Shard: cache.Shard{Key: cache.ShardByUID}}},
		"snapshot":  {Member: m, Range: cache.SharedIndexInformerOptions{SnapshotFile: "x"}},
		"key":       {Member: m, Key: "object.metadata.name"},
	} {
		_, err := NewInformer(nil, &corev1.Pod{}, o)
		assert.Error(t, err, name)
	}
}

// TestInformerKeepsSuspendedRanges: a member cut off from the Leases (an
// API server outage for it) suspends its ranges; its informer keeps them
// and their objects, and once renewals succeed again it acts on them
// without a single relist, a loss or a delete.
func TestInformerKeepsSuspendedRanges(t *testing.T) {
	const pods = 100
	s := newSim(t)
	cs := podClient(t, pods)
	a := s.add("a")
	rec := &recorder{}
	var lists atomic.Int64
	ia := startCountingInformer(t, cs, a, rec, &lists)
	s.settle(5)
	require.Eventually(t, func() bool { return ia.HasSynced() && len(ia.GetStore().ListKeys()) == pods }, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return slices.Equal(rec.current(), heldIndices(ia)) }, 10*time.Second, 5*time.Millisecond)
	listed := lists.Load()
	assert.Equal(t, int64(testRanges), listed)

	s.server.setDown("a", true)
	for range int(2 * testLease / testRetry) {
		s.round(testRetry)
	}
	st := ia.RangeStatus()
	require.Len(t, st, testRanges)
	for _, rs := range st {
		assert.False(t, rs.Acting, "range %d", rs.Range.Index)
		assert.True(t, rs.Synced, "range %d", rs.Range.Index)
	}
	assert.Len(t, ia.GetStore().ListKeys(), pods)
	acting, err := ia.Acting(ia.GetStore().List()[0])
	require.NoError(t, err)
	assert.False(t, acting)

	s.server.setDown("a", false)
	s.round(testRetry)
	for _, rs := range ia.RangeStatus() {
		assert.True(t, rs.Acting, "range %d", rs.Range.Index)
	}
	assert.Len(t, ia.GetStore().ListKeys(), pods)
	assert.Equal(t, listed, lists.Load(), "no relist")
	_, deletes, _, lost := rec.counts()
	assert.Zero(t, deletes)
	assert.Zero(t, lost)
}

// TestInformerOfFindsTheInformerBehindWrappers: InformerOf returns a
// sharded Informer given itself or a typed informer wrapping it, and
// reports false for a plain informer, a typed one wrapping a plain one,
// and nil.
func TestInformerOfFindsTheInformerBehindWrappers(t *testing.T) {
	s := newSim(t)
	inf, err := NewInformer(podLW(podClient(t, 0)), &corev1.Pod{}, InformerOptions{Member: s.add("a")})
	require.NoError(t, err)
	plain := cache.NewSharedIndexInformer(podLW(podClient(t, 0)), &corev1.Pod{}, 0, cache.Indexers{})
	for _, tc := range []struct {
		name     string
		informer cache.SharedInformer
		want     *Informer
	}{
		{"sharded", inf, inf},
		{"typed sharded", cache.NewTypedSharedIndexInformer[*corev1.Pod](inf), inf},
		{"plain", plain, nil},
		{"typed plain", cache.NewTypedSharedIndexInformer[*corev1.Pod](plain), nil},
		{"nil", nil, nil},
		{"nil sharded", (*Informer)(nil), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := InformerOf(tc.informer)
			assert.Equal(t, tc.want != nil, ok)
			assert.Same(t, tc.want, got)
		})
	}
}
