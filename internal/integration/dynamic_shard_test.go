package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/testenv"
	"github.com/kinformer/kinformer/sharding"
)

// The timings of the dynamic shard tests: short, so that a crash hands over in seconds.
const (
	itDynLease  = 3 * time.Second
	itDynRenew  = 2 * time.Second
	itDynRetry  = 500 * time.Millisecond
	itDynGroup  = "pods"
	itDynPods   = 300
	itDynSettle = time.Minute
)

// itReplica is one replica of a sharded controller: its own clientset, member and informer,
// and how many lists (LISTs and streaming lists) it started per shard selector.
type itReplica struct {
	id       string
	member   *sharding.Member
	informer *sharding.Informer
	stop     context.CancelFunc
	done     chan struct{}

	mu    sync.Mutex
	lists map[string]int // shard selector → lists started
}

func (r *itReplica) listCounts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.lists)
}

// countingPodLW is itPodLW counting the lists r starts, per shard selector.
func (r *itReplica) countingPodLW(cs kubernetes.Interface, ns string) cache.ListerWatcher {
	count := func(sel string) {
		r.mu.Lock()
		r.lists[sel]++
		r.mu.Unlock()
	}
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			count(o.ShardSelector)
			return cs.CoreV1().Pods(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			if o.SendInitialEvents != nil && *o.SendInitialEvents {
				count(o.ShardSelector)
			}
			return cs.CoreV1().Pods(ns).Watch(ctx, o)
		},
	}, cs)
}

// itStartReplica starts replica id of the group in ns, on a clientset of its own, until it
// is stopped or the test ends. crash makes stopping it leave its Leases behind.
func itStartReplica(t *testing.T, env *testenv.Env, ns, id string, crash bool) *itReplica {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(env.Config())
	r := &itReplica{id: id, lists: map[string]int{}, done: make(chan struct{})}
	m, err := sharding.NewMember(sharding.Config{
		Client: cs.CoordinationV1(), Namespace: ns, Group: itDynGroup, Identity: id,
		LeaseDuration: itDynLease, RenewDeadline: itDynRenew, RetryPeriod: itDynRetry,
		KeepLeasesOnStop: crash,
	})
	require.NoError(t, err)
	inf, err := sharding.NewInformer(r.countingPodLW(cs, ns), &corev1.Pod{}, sharding.InformerOptions{Member: m})
	require.NoError(t, err)
	r.member, r.informer = m, inf
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = m.Run(ctx) }()
	go func() { defer wg.Done(); inf.RunWithContext(ctx) }()
	go func() { wg.Wait(); close(r.done) }()
	t.Cleanup(r.halt)
	return r
}

// halt stops the replica and waits until it stopped.
func (r *itReplica) halt() {
	r.stop()
	<-r.done
}

// itDynWriter creates and deletes pods of ns until stopped; pause holds it still.
type itDynWriter struct {
	mu      sync.Mutex // held while paused
	stop    context.CancelFunc
	done    chan struct{}
	created int
}

func itStartWriter(t *testing.T, cs kubernetes.Interface, ns string) *itDynWriter {
	ctx, cancel := context.WithCancel(context.Background())
	w := &itDynWriter{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for n := 0; ctx.Err() == nil; n++ {
			w.mu.Lock()
			name := fmt.Sprintf("churn-%d", n)
			_, err := cs.CoreV1().Pods(ns).Create(ctx, itPod(ns, name, nil), metav1.CreateOptions{})
			if err == nil {
				w.created++
				if n >= 20 {
					_ = cs.CoreV1().Pods(ns).Delete(ctx, fmt.Sprintf("churn-%d", n-20), metav1.DeleteOptions{})
				}
			}
			w.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { w.stop(); <-w.done })
	return w
}

// itDynSteady waits, while the writer goes on, until every live replica sees the same
// members, every range is acted on by exactly the live replica it is assigned to, and every
// replica's informer has synced every range it holds; then it pauses the writer and waits
// until the pods of ns are, each, in the cache of exactly one live replica, the one acting
// on its range, at the server's resourceVersion. It returns how long the ranges took to
// settle.
func itDynSteady(t *testing.T, cs kubernetes.Interface, ns string, w *itDynWriter, live ...*itReplica) time.Duration {
	t.Helper()
	start := time.Now()
	ranges := live[0].member.Ranges()
	var owner []*itReplica
	problem := "not checked"
	for problem != "" && time.Since(start) < itDynSettle {
		owner, problem = itDynOwners(ranges, live)
		if problem != "" {
			time.Sleep(50 * time.Millisecond)
		}
	}
	require.Empty(t, problem, "the ranges did not settle within %v", itDynSettle)
	settled := time.Since(start)
	w.mu.Lock()
	defer w.mu.Unlock()
	for problem = "not checked"; problem != "" && time.Since(start) < itDynSettle; {
		if problem = itDynCacheProblem(cs, ns, ranges, owner, live); problem != "" {
			time.Sleep(100 * time.Millisecond)
		}
	}
	require.Empty(t, problem, "the caches did not settle within %v", itDynSettle)
	return settled
}

// itDynOwners returns the replica acting on each range, or what keeps the ranges from being
// settled.
func itDynOwners(ranges []sharding.Range, live []*itReplica) ([]*itReplica, string) {
	ids := make([]string, len(live))
	for i, r := range live {
		ids[i] = r.id
	}
	slices.Sort(ids)
	assigned := live[0].member.Status().Ranges
	for _, r := range live {
		if st := r.member.Status(); !slices.Equal(st.Members, ids) {
			return nil, fmt.Sprintf("%s sees members %v, not %v", r.id, st.Members, ids)
		}
	}
	owner := make([]*itReplica, len(ranges))
	for _, rg := range ranges {
		for _, r := range live {
			if r.member.Acting(rg.Index) {
				if owner[rg.Index] != nil {
					return nil, fmt.Sprintf("range %d acted on by %s and %s", rg.Index, owner[rg.Index].id, r.id)
				}
				owner[rg.Index] = r
			}
		}
		if owner[rg.Index] == nil {
			return nil, fmt.Sprintf("range %d has no owner", rg.Index)
		}
		if owner[rg.Index].id != assigned[rg.Index].Assigned {
			return nil, fmt.Sprintf("range %d owned by %s, assigned to %s", rg.Index, owner[rg.Index].id, assigned[rg.Index].Assigned)
		}
	}
	for _, r := range live {
		held := r.informer.RangeStatus()
		if len(held) != len(itOwned(r)) {
			return nil, fmt.Sprintf("%s's informer holds %d ranges, its member %d", r.id, len(held), len(itOwned(r)))
		}
		for _, st := range held {
			if !st.Synced || owner[st.Range.Index] != r {
				return nil, fmt.Sprintf("%s holds range %d synced=%v, owned by %s", r.id, st.Range.Index, st.Synced, owner[st.Range.Index].id)
			}
		}
	}
	return owner, ""
}

// itDynCacheProblem says how the replicas' caches differ from a fresh LIST of ns split by
// owner, "" when they do not.
func itDynCacheProblem(cs kubernetes.Interface, ns string, ranges []sharding.Range, owner, live []*itReplica) string {
	list, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	cached := 0
	for _, r := range live {
		cached += len(r.informer.GetStore().ListKeys())
	}
	if cached != len(list.Items) {
		return fmt.Sprintf("%d pods cached, %d on the server", cached, len(list.Items))
	}
	for i := range list.Items {
		pod := &list.Items[i]
		idx := -1
		for _, rg := range ranges {
			if in, _ := (cache.Shard{Key: cache.ShardByUID, Ranges: []cache.ShardRange{rg.Bounds}}).Contains(pod); in {
				idx = rg.Index
			}
		}
		for _, r := range live {
			obj, ok, _ := r.informer.GetStore().GetByKey(ns + "/" + pod.Name)
			if ok != (r == owner[idx]) {
				return fmt.Sprintf("pod %s (range %d, owner %s) cached by %s: %v", pod.Name, idx, owner[idx].id, r.id, ok)
			}
			if ok && obj.(*corev1.Pod).ResourceVersion != pod.ResourceVersion {
				return fmt.Sprintf("pod %s at %s in %s, %s on the server", pod.Name, obj.(*corev1.Pod).ResourceVersion, r.id, pod.ResourceVersion)
			}
		}
	}
	return ""
}

// itOwned returns the indices of the ranges r acts on.
func itOwned(r *itReplica) []int {
	var out []int
	for _, rg := range r.member.Ranges() {
		if r.member.Acting(rg.Index) {
			out = append(out, rg.Index)
		}
	}
	return out
}

// TestDynamicShards runs three replicas of a sharded pod controller in one process, each
// with its own clientset and identity, on a cluster with the ShardedListAndWatch gate on,
// while pods are created and deleted: at every steady state each pod is in the cache of
// exactly one live replica, the one acting on its range. One replica crashes (stops without
// releasing): the others take its ranges only after its range Leases expired, as their
// Lease timestamps show. A fourth joins: it lists exactly the ranges it takes, and the
// others list nothing again. One leaves cleanly: its ranges move without waiting for expiry.
func TestDynamicShards(t *testing.T) {
	env := testenv.Start(t, testenv.Options{FeatureGates: map[string]bool{testenv.ShardedListAndWatchGate: true}})
	if env == nil {
		return
	}
	cs := env.Clientset()
	ns := testenv.Namespace(t, cs)
	itCreatePods(t, cs, ns, "base", itDynPods, nil)
	w := itStartWriter(t, cs, ns)

	r0 := itStartReplica(t, env, ns, "r0", false)
	r1 := itStartReplica(t, env, ns, "r1", false)
	r2 := itStartReplica(t, env, ns, "r2", true)
	d := itDynSteady(t, cs, ns, w, r0, r1, r2)
	t.Logf("3 replicas steady in %v: r0 %v, r1 %v, r2 %v", d.Round(time.Millisecond), itOwned(r0), itOwned(r1), itOwned(r2))

	// Crash r2: it stops acting and its Leases stay as they were.
	crashed := itOwned(r2)
	require.NotEmpty(t, crashed)
	r2.halt()
	crashedAt := time.Now()
	leases := cs.CoordinationV1().Leases(ns)
	left := map[int]time.Time{}
	for _, i := range crashed {
		l, err := leases.Get(context.Background(), fmt.Sprintf("%s-range-%d-of-%d", itDynGroup, i, len(r0.member.Ranges())), metav1.GetOptions{})
		require.NoError(t, err)
		require.Equal(t, "r2", *l.Spec.HolderIdentity)
		left[i] = l.Spec.RenewTime.Time.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)
	}
	d = itDynSteady(t, cs, ns, w, r0, r1)
	t.Logf("after r2 crashed: steady in %v: r0 %v, r1 %v", time.Since(crashedAt).Round(time.Millisecond), itOwned(r0), itOwned(r1))
	for _, i := range crashed {
		l, err := leases.Get(context.Background(), fmt.Sprintf("%s-range-%d-of-%d", itDynGroup, i, len(r0.member.Ranges())), metav1.GetOptions{})
		require.NoError(t, err)
		assert.Contains(t, []string{"r0", "r1"}, *l.Spec.HolderIdentity, "range %d", i)
		acquired := l.Spec.AcquireTime.Time
		assert.False(t, acquired.Before(left[i]), "range %d taken at %v, before r2's Lease expired at %v", i, acquired, left[i])
		t.Logf("range %d: r2's Lease expired at %v, %s took it %v later, %v after the crash", i,
			left[i].Format("15:04:05.000"), *l.Spec.HolderIdentity, acquired.Sub(left[i]).Round(time.Millisecond), acquired.Sub(crashedAt).Round(time.Millisecond))
	}

	// r3 joins: it lists the ranges it takes; r0 and r1 list nothing again.
	before0, before1 := r0.listCounts(), r1.listCounts()
	r3 := itStartReplica(t, env, ns, "r3", false)
	d = itDynSteady(t, cs, ns, w, r0, r1, r3)
	taken := itOwned(r3)
	t.Logf("r3 joined: steady in %v: r0 %v, r1 %v, r3 %v", d.Round(time.Millisecond), itOwned(r0), itOwned(r1), taken)
	require.NotEmpty(t, taken)
	assert.Equal(t, before0, r0.listCounts(), "r0 relisted")
	assert.Equal(t, before1, r1.listCounts(), "r1 relisted")
	lists3 := r3.listCounts()
	assert.Len(t, lists3, len(taken), "r3 lists exactly the ranges it took: %v", lists3)
	for _, i := range taken {
		sel, err := cache.Shard{Key: cache.ShardByUID, Ranges: []cache.ShardRange{r3.member.Ranges()[i].Bounds}}.Selector()
		require.NoError(t, err)
		assert.Equal(t, 1, lists3[sel], "range %d", i)
	}

	// r0 leaves cleanly: its ranges move at once, without waiting for expiry.
	leaving := itOwned(r0)
	r0.halt()
	leftAt := time.Now()
	itDynSteady(t, cs, ns, w, r1, r3)
	t.Logf("r0 left %v: steady in %v: r1 %v, r3 %v", leaving, time.Since(leftAt).Round(time.Millisecond), itOwned(r1), itOwned(r3))
	w.mu.Lock()
	t.Logf("the writer created %d pods meanwhile", w.created)
	w.mu.Unlock()
}
