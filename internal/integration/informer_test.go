package integration

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/internal/testenv"
)

const itSyncPods = 5000

// TestPodInformerSyncAndEvents syncs 5,000 pods created through the API into the factory's pod
// informer, with the streaming list and with the paged LIST, then checks creates, updates, label changes and deletes, and
// that the store equals a fresh LIST.
func TestPodInformerSyncAndEvents(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	ns := testenv.Namespace(t, cs)
	start := time.Now()
	itCreatePods(t, cs, ns, "base", itSyncPods, map[string]string{"tier": "base"})
	t.Logf("created %d pods in %v", itSyncPods, time.Since(start).Round(time.Millisecond))

	for _, mode := range []struct {
		name      string
		streaming bool
	}{{"streaming-list", true}, {"paged-list", false}} {
		t.Run(mode.name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, mode.streaming)
			// Earlier subtests leave their own pods behind: the initial list is whatever the
			// namespace holds now.
			existing, err := itListPods(cs, ns)(context.Background())
			require.NoError(t, err)
			want := len(existing)
			require.GreaterOrEqual(t, want, itSyncPods)

			var counter itRequestCounter
			cs := kubernetes.NewForConfigOrDie(counter.wrap(env.Config()))

			factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
			pods := factory.Core().V1().Pods()
			informer := pods.Informer()
			var rec itRecorder
			reg, err := informer.AddEventHandler(rec.handler())
			require.NoError(t, err)
			itStartFactory(t, factory)
			took := itWaitSynced(t, 2*time.Minute, informer.HasSynced)
			t.Logf("%s: %d pods synced in %v", mode.name, want, took.Round(time.Millisecond))
			itWaitSynced(t, time.Minute, reg.HasSynced)

			require.Len(t, informer.GetStore().List(), want)
			require.Equal(t, want, rec.count("add", func(ev itEvent) bool { return ev.initial }))
			if mode.streaming {
				require.Positive(t, counter.watchList.Load(), "no streaming list request was made")
				require.Zero(t, counter.list.Load(), "a LIST was made although streaming was on")
			} else {
				require.Zero(t, counter.watchList.Load(), "a streaming list was made although it was off")
				require.Positive(t, counter.list.Load(), "no LIST request was made")
			}

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			prefix := mode.name
			itCreatePods(t, cs, ns, prefix, 10, nil)
			for i := 0; i < 10; i++ {
				name := fmt.Sprintf("%s-%d", prefix, i)
				patch := fmt.Sprintf(`{"metadata":{"labels":{"changed":"%d"}}}`, i)
				_, err := cs.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
				require.NoError(t, err)
			}
			for i := 0; i < 5; i++ {
				require.NoError(t, cs.CoreV1().Pods(ns).Delete(ctx, fmt.Sprintf("%s-%d", prefix, i), metav1.DeleteOptions{}))
			}
			itStoreMatchesServer(t, informer.GetStore(), itListPods(cs, ns), time.Minute)

			require.Eventually(t, func() bool {
				last := rec.last()
				for i := 0; i < 10; i++ {
					ev := last[fmt.Sprintf("%s/%s-%d", ns, prefix, i)]
					if i < 5 && ev.kind != "delete" {
						return false
					}
					if i >= 5 && (ev.kind != "update" || ev.labels["changed"] != strconv.Itoa(i)) {
						return false
					}
				}
				return true
			}, time.Minute, 50*time.Millisecond, "handler did not see the changes")
			for _, ev := range rec.snapshot() {
				if ev.kind == "add" && !ev.initial {
					require.Contains(t, ev.key, ns+"/"+prefix+"-", "unexpected add %+v", ev)
				}
				if ev.kind == "delete" {
					require.False(t, ev.unknown, "a delete seen live arrived as DeletedFinalStateUnknown: %+v", ev)
				}
			}
			require.Equal(t, 10, rec.count("add", func(ev itEvent) bool { return !ev.initial }))
			require.Equal(t, 5, rec.count("delete", nil))

			// The lister reads the same cache: it must agree with a fresh LIST too.
			listed, err := pods.Lister().Pods(ns).List(labels.Everything())
			require.NoError(t, err)
			fresh, err := itListPods(cs, ns)(ctx)
			require.NoError(t, err)
			require.Len(t, listed, len(fresh))
			for _, p := range fresh {
				got, err := pods.Lister().Pods(ns).Get(p.GetName())
				require.NoError(t, err)
				require.Equal(t, p.GetResourceVersion(), got.ResourceVersion)
			}
		})
	}
}

// itOutage runs an informer on API server A, stops A, changes pods through a second API
// server B, optionally compacts etcd, restarts A and checks that the informer converges to
// the server's state and its handler saw every delete. It returns the errors the watch
// error handler received.
func itOutage(t *testing.T, env *testenv.Env, compact bool) []error {
	a := env.APIServer(0)
	cs := a.Clientset()
	ns := testenv.Namespace(t, cs)
	itCreatePods(t, cs, ns, "pod", 100, map[string]string{"v": "1"})

	informer := cache.NewSharedIndexInformer(itPodLW(cs, ns), &corev1.Pod{}, 0, cache.Indexers{})
	var (
		errMu     sync.Mutex
		watchErrs []error
	)
	require.NoError(t, informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		errMu.Lock()
		watchErrs = append(watchErrs, err)
		errMu.Unlock()
	}))
	var rec itRecorder
	reg, err := informer.AddEventHandler(rec.handler())
	require.NoError(t, err)
	itRunInformer(t, informer)
	itWaitSynced(t, time.Minute, informer.HasSynced, reg.HasSynced)

	b, err := env.AddAPIServer()
	require.NoError(t, err)
	a.Stop()
	bcs := b.Clientset()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	itCreatePods(t, bcs, ns, "during", 50, nil)
	deleted := map[string]bool{}
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("pod-%d", i)
		require.NoError(t, bcs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}))
		deleted[ns+"/"+name] = true
	}
	for i := 20; i < 30; i++ {
		_, err := bcs.CoreV1().Pods(ns).Patch(ctx, fmt.Sprintf("pod-%d", i), types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"v":"2"}}}`), metav1.PatchOptions{})
		require.NoError(t, err)
	}
	if compact {
		_, err := env.CompactEtcd(ctx)
		require.NoError(t, err)
	}
	restarted := time.Now()
	require.NoError(t, a.Start())
	itStoreMatchesServer(t, informer.GetStore(), itListPods(bcs, ns), 90*time.Second)
	t.Logf("informer converged %v after the API server was ready again", time.Since(restarted).Round(time.Millisecond))

	require.Eventually(t, func() bool {
		last := rec.last()
		for key := range deleted {
			if last[key].kind != "delete" {
				return false
			}
		}
		for i := 20; i < 30; i++ {
			if last[fmt.Sprintf("%s/pod-%d", ns, i)].labels["v"] != "2" {
				return false
			}
		}
		return true
	}, time.Minute, 50*time.Millisecond, "handler did not see every delete and relabel")
	errMu.Lock()
	defer errMu.Unlock()
	return append([]error(nil), watchErrs...)
}

// TestInformerRecoversFromAPIServerRestart: with the watch cache on, the restarted API server
// answers the old resourceVersion with "too old resource version"; the informer relists.
func TestInformerRecoversFromAPIServerRestart(t *testing.T) {
	if !testenv.Available(t) {
		return
	}
	t.Parallel()
	env := testenv.Start(t, testenv.Options{})
	errs := itOutage(t, env, false)
	require.NotEmpty(t, errs, "the watch error handler heard of no failure during the outage")
}

// TestInformerRelistsAfterCompaction: with the watch cache off, watches are served by etcd;
// after compaction the resumed watch gets 410 Expired and the informer relists, reporting the
// 410 to the watch error handler (client-go only logs it).
func TestInformerRelistsAfterCompaction(t *testing.T) {
	if !testenv.Available(t) {
		return
	}
	t.Parallel()
	env := testenv.Start(t, testenv.Options{APIServerFlags: []string{"--watch-cache=false"}})
	errs := itOutage(t, env, true)
	saw410 := false
	for _, err := range errs {
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			saw410 = true
		}
	}
	require.True(t, saw410, "the watch error handler did not receive the 410; it got %v", errs)
}

// TestBookmarksAdvanceIdleInformer: an informer on a namespace where nothing changes still
// moves its LastSyncResourceVersion forward through bookmarks while other namespaces change.
func TestBookmarksAdvanceIdleInformer(t *testing.T) {
	env := sharedEnv(t)
	t.Parallel()
	cs := env.Clientset()
	idle := testenv.Namespace(t, cs)
	busy := testenv.Namespace(t, cs)
	itCreatePods(t, cs, idle, "idle", 3, nil)

	informer := cache.NewSharedIndexInformer(itPodLW(cs, idle), &corev1.Pod{}, 0, cache.Indexers{})
	itRunInformer(t, informer)
	itWaitSynced(t, time.Minute, informer.HasSynced)
	first, err := strconv.ParseUint(informer.LastSyncResourceVersion(), 10, 64)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "tick", Namespace: busy}}
	cm, err = cs.CoreV1().ConfigMaps(busy).Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)
	// The API server sends a bookmark to each watcher about once a minute; keep the global
	// resourceVersion moving meanwhile.
	deadline := time.Now().Add(150 * time.Second)
	for {
		rv, err := strconv.ParseUint(informer.LastSyncResourceVersion(), 10, 64)
		require.NoError(t, err)
		if rv > first {
			t.Logf("LastSyncResourceVersion moved from %d to %d with no change to the watched pods", first, rv)
			break
		}
		require.True(t, time.Now().Before(deadline), "no bookmark advanced LastSyncResourceVersion from %d", first)
		cm.Data = map[string]string{"t": time.Now().String()}
		cm, err = cs.CoreV1().ConfigMaps(busy).Update(ctx, cm, metav1.UpdateOptions{})
		require.NoError(t, err)
		time.Sleep(time.Second) // pace of the writes that move the resourceVersion
	}
	require.Len(t, informer.GetStore().List(), 3)
}
