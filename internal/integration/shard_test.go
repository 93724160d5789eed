package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/internal/testenv"
)

// itShardPodsEnv names the variable that sets how many pods the static shard tests create
// (default itShardPods, which fits make test); for example KINFORMER_SHARD_PODS=10000 for
// the size of the figures.
const itShardPodsEnv = "KINFORMER_SHARD_PODS"

// itShardPods is the default number of pods of the static shard tests.
const itShardPods = 400

// itShardCount is the number of static shards the tests split a resource into.
const itShardCount = 4

// itShardListModes are the two ways an informer lists.
var itShardListModes = []struct {
	name      string
	streaming bool
	request   string // the Request of a ShardSelectorIgnoredError in this mode
}{{"streaming-list", true, "streaming list"}, {"paged-list", false, "list"}}

// itShardPodCount returns the number of pods to create: itShardPods, or what
// KINFORMER_SHARD_PODS says.
func itShardPodCount(t *testing.T) int {
	t.Helper()
	v := os.Getenv(itShardPodsEnv)
	if v == "" {
		return itShardPods
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, "%s=%q", itShardPodsEnv, v)
	return n
}

// itShardWatch is one sharded informer of a test: its shard, its cache, and the
// ShardSelectorIgnoredErrors its watch error handler received.
type itShardWatch struct {
	shard    cache.Shard
	informer cache.SharedIndexInformer
	mu       sync.Mutex
	ignored  []*cache.ShardSelectorIgnoredError
}

func (w *itShardWatch) ignoredErrors() []*cache.ShardSelectorIgnoredError {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*cache.ShardSelectorIgnoredError(nil), w.ignored...)
}

// itStartShards starts one pod factory per shard of EvenShardRanges(n) by key, in namespace
// ns ("" for all), each on a clientset of its own, until the test ends, and waits until
// all have synced.
func itStartShards(t *testing.T, env *testenv.Env, key cache.ShardKey, n int, ns string) []*itShardWatch {
	t.Helper()
	ranges, err := cache.EvenShardRanges(n)
	require.NoError(t, err)
	watches := make([]*itShardWatch, n)
	synced := make([]cache.InformerSynced, n)
	for i, r := range ranges {
		w := &itShardWatch{shard: cache.Shard{Key: key, Ranges: []cache.ShardRange{r}}}
		cs := kubernetes.NewForConfigOrDie(env.Config())
		opts := []informers.SharedInformerOption{informers.WithShard(w.shard)}
		if ns != "" {
			opts = append(opts, informers.WithNamespace(ns))
		}
		factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, opts...)
		w.informer = factory.Core().V1().Pods().Informer()
		require.NoError(t, w.informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
			var ignored *cache.ShardSelectorIgnoredError
			if errors.As(err, &ignored) {
				w.mu.Lock()
				w.ignored = append(w.ignored, ignored)
				w.mu.Unlock()
				return
			}
			cache.DefaultWatchErrorHandler(ctx, r, err)
		}))
		itStartFactory(t, factory)
		watches[i], synced[i] = w, w.informer.HasSynced
	}
	d := itWaitSynced(t, 2*time.Minute, synced...)
	t.Logf("%d shards by %s synced in %v", n, key, d.Round(time.Millisecond))
	return watches
}

// itShardsMatchServer waits until the shards' caches are, together, what a fresh LIST of
// list returns: every pod in exactly one cache, the cache of its shard, at the server's
// resourceVersion. It fails with the difference after timeout.
func itShardsMatchServer(t *testing.T, shards []*itShardWatch, list func(ctx context.Context) ([]metav1.Object, error), timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var problem string
	for {
		problem = itShardsProblem(shards, list)
		if problem == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shards do not match the server after %v: %s", timeout, problem)
		}
		time.Sleep(200 * time.Millisecond) // polling interval between fresh LISTs
	}
}

// itShardsProblem returns how the shards' caches differ from a fresh LIST, "" when they
// do not.
func itShardsProblem(shards []*itShardWatch, list func(ctx context.Context) ([]metav1.Object, error)) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	objs, err := list(ctx)
	cancel()
	if err != nil {
		return "list failed: " + err.Error()
	}
	want := map[string]string{}
	for _, o := range objs {
		want[o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
	}
	got := map[string]string{}
	for i, s := range shards {
		for _, obj := range s.informer.GetStore().List() {
			o, err := metaOf(obj)
			if err != nil {
				return err.Error()
			}
			key := o.GetNamespace() + "/" + o.GetName()
			if _, dup := got[key]; dup {
				return fmt.Sprintf("pod %s is in two shards", key)
			}
			if in, err := s.shard.Contains(obj); err != nil || !in {
				return fmt.Sprintf("pod %s is in the cache of shard %d, outside its ranges (%v)", key, i, err)
			}
			got[key] = o.GetResourceVersion()
		}
	}
	return itMapDiff(want, got)
}

// itShardSizes returns the number of objects in each shard's cache.
func itShardSizes(shards []*itShardWatch) []int {
	sizes := make([]int, len(shards))
	for i, s := range shards {
		sizes[i] = len(s.informer.GetStore().ListKeys())
	}
	return sizes
}

// itChurnPods creates add pods of ns named prefix-…, and deletes those named base-from to
// base-(from+del-1).
func itChurnPods(t *testing.T, cs kubernetes.Interface, ns, prefix string, add int, base string, from, del int) {
	t.Helper()
	itCreatePods(t, cs, ns, prefix, add, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := from; i < from+del; i++ {
		require.NoError(t, cs.CoreV1().Pods(ns).Delete(ctx, fmt.Sprintf("%s-%d", base, i), metav1.DeleteOptions{}))
	}
}

// TestStaticShards splits the pods of a cluster with the ShardedListAndWatch gate on into
// four static shards, by uid over the pods of one namespace and by namespace over the pods
// of several, with streaming lists and with paged LISTs: together the four caches are
// exactly a fresh LIST, no pod is in two of them, and each holds its shard only, before
// and after pods are created and deleted; the server honours the selector, so nothing is
// reported as ignored.
func TestStaticShards(t *testing.T) {
	env := testenv.Start(t, testenv.Options{FeatureGates: map[string]bool{testenv.ShardedListAndWatchGate: true}})
	if env == nil {
		return
	}
	cs := env.Clientset()
	pods := itShardPodCount(t)

	t.Run("by-uid", func(t *testing.T) {
		ns := testenv.Namespace(t, cs)
		start := time.Now()
		itCreatePods(t, cs, ns, "base", pods, nil)
		t.Logf("created %d pods in %v", pods, time.Since(start).Round(time.Millisecond))
		for round, mode := range itShardListModes {
			t.Run(mode.name, func(t *testing.T) {
				clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, mode.streaming)
				shards := itStartShards(t, env, cache.ShardByUID, itShardCount, ns)
				itShardsMatchServer(t, shards, itListPods(cs, ns), time.Minute)
				t.Logf("shard sizes: %v", itShardSizes(shards))
				itChurnPods(t, cs, ns, fmt.Sprintf("more%d", round), pods/10, "base", round*(pods/20), pods/20)
				itShardsMatchServer(t, shards, itListPods(cs, ns), time.Minute)
				for i, s := range shards {
					assert.Empty(t, s.ignoredErrors(), "shard %d", i)
					st, _ := cache.GetInformerStatus(s.informer)
					assert.Zero(t, st.ShardIgnored, "shard %d", i)
				}
			})
		}
	})

	t.Run("by-namespace", func(t *testing.T) {
		namespaces := make([]string, 16)
		for i := range namespaces {
			namespaces[i] = testenv.Namespace(t, cs)
			itCreatePods(t, cs, namespaces[i], "base", max(pods/len(namespaces), 1), nil)
		}
		listAll := itListPods(cs, metav1.NamespaceAll)
		for round, mode := range itShardListModes {
			t.Run(mode.name, func(t *testing.T) {
				clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, mode.streaming)
				shards := itStartShards(t, env, cache.ShardByNamespace, itShardCount, "")
				itShardsMatchServer(t, shards, listAll, time.Minute)
				t.Logf("shard sizes: %v", itShardSizes(shards))
				itChurnPods(t, cs, namespaces[round], "more", 10, "base", 0, 5)
				extra := testenv.Namespace(t, cs)
				itCreatePods(t, cs, extra, "late", 10, nil)
				itShardsMatchServer(t, shards, listAll, time.Minute)
				for i, s := range shards {
					assert.Empty(t, s.ignoredErrors(), "shard %d", i)
				}
			})
		}
	})
}

// TestStaticShardOnAServerWithoutTheGate: the shared cluster runs without the
// ShardedListAndWatch gate, so it ignores the shard selector and sends every pod. Each of
// two shards still caches exactly its half, and each reports the server once, typed, as a
// plain LIST's (no shardInfo) or a streaming list's (pods outside the shard).
func TestStaticShardOnAServerWithoutTheGate(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	ns := testenv.Namespace(t, cs)
	itCreatePods(t, cs, ns, "base", 100, nil)
	for _, mode := range itShardListModes {
		t.Run(mode.name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, mode.streaming)
			shards := itStartShards(t, env, cache.ShardByUID, 2, ns)
			itShardsMatchServer(t, shards, itListPods(cs, ns), time.Minute)
			for i, s := range shards {
				ignored := s.ignoredErrors()
				require.Len(t, ignored, 1, "shard %d: one report per list cycle", i)
				assert.Equal(t, mode.request, ignored[0].Request, "shard %d", i)
				sel, err := s.shard.Selector()
				require.NoError(t, err)
				assert.Equal(t, sel, ignored[0].Selector)
				st, _ := cache.GetInformerStatus(s.informer)
				assert.Equal(t, uint64(1), st.ShardIgnored, "shard %d", i)
			}
			itCreatePods(t, cs, ns, "more-"+mode.name, 10, nil)
			itShardsMatchServer(t, shards, itListPods(cs, ns), time.Minute)
		})
	}
}
