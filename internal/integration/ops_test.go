package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
	"github.com/kinformer/kinformer/internal/testenv"
	"github.com/kinformer/kinformer/metrics/kinformerprom"
)

// closedPort returns a 127.0.0.1 port nothing listens on (a server that
// was stopped): it was bound and released.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// TestSyncErrorsFromTheAPIServer: the factory's (and the cache package's)
// wait says why an informer did not sync, with the real API server's errors:
// a user without list rights gets a 403 naming the resource and the verb
// (and, failing fast, at once); a group/version/resource the server does not
// serve gets a 404 (at once); a server nobody listens on gets connection
// refused at the deadline (not a permanent error).
func TestSyncErrorsFromTheAPIServer(t *testing.T) {
	env := sharedEnv(t)
	ns := testenv.Namespace(t, env.Clientset())

	t.Run("forbidden", func(t *testing.T) {
		cs := kubernetes.NewForConfigOrDie(env.APIServer(0).ConfigForToken(env.Token(itUserNobody)))
		factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns),
			informers.WithSyncOptions(cache.SyncOptions{FailFast: true}))
		factory.Core().V1().ConfigMaps().Informer()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer func() {
			cancel()
			factory.Shutdown()
		}()
		factory.StartWithContext(ctx)
		res := factory.WaitForCacheSyncWithContext(ctx)
		require.NoError(t, ctx.Err(), "did not fail fast")
		require.Error(t, res.Err)
		assert.True(t, apierrors.IsForbidden(res.Err), "%v", res.Err)
		assert.ErrorIs(t, res.Err, cache.ErrPermanentSyncFailure)
		var se *cache.InformerSyncError
		require.ErrorAs(t, res.Err, &se)
		assert.Equal(t, "*v1.ConfigMap", se.Type)
		assert.Equal(t, "configmaps.v1", se.Resource)
		msg := res.AsError().Error()
		assert.Contains(t, msg, fmt.Sprintf(`User "%s" cannot list resource "configmaps"`, itUserNobody))
		assert.Contains(t, msg, fmt.Sprintf(`in the namespace "%s"`, ns))
		t.Logf("%v", res.AsError())
	})

	t.Run("not served", func(t *testing.T) {
		dyn := dynamic.NewForConfigOrDie(env.Config())
		gvr := schema.GroupVersionResource{Group: "widgets.example.com", Version: "v1", Resource: "widgets"}
		factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
		informer := factory.ForResource(gvr).Informer()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer func() {
			cancel()
			factory.Shutdown()
		}()
		factory.Start(ctx.Done())
		res := cache.WaitForCacheSyncWithOptions(ctx, cache.SyncOptions{FailFast: true}, informer)
		require.NoError(t, ctx.Err(), "did not fail fast")
		assert.True(t, apierrors.IsNotFound(res.Err), "%v", res.Err)
		var se *cache.InformerSyncError
		require.ErrorAs(t, res.Err, &se)
		assert.Equal(t, "*unstructured.Unstructured", se.Type)
		assert.Equal(t, "widgets.v1.widgets.example.com", se.Resource)
		assert.Contains(t, res.Err.Error(), "the server could not find the requested resource")
	})

	t.Run("connection refused", func(t *testing.T) {
		cfg := env.APIServer(0).Config()
		cfg.Host = fmt.Sprintf("https://127.0.0.1:%d", closedPort(t))
		cs := kubernetes.NewForConfigOrDie(cfg)
		factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns),
			informers.WithSyncOptions(cache.SyncOptions{FailFast: true}))
		factory.Core().V1().ConfigMaps().Informer()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer func() {
			cancel()
			factory.Shutdown()
		}()
		factory.StartWithContext(ctx)
		res := factory.WaitForCacheSyncWithContext(ctx)
		require.Error(t, res.Err)
		assert.ErrorIs(t, res.Err, context.DeadlineExceeded, "a refused connection is not permanent")
		assert.NotErrorIs(t, res.Err, cache.ErrPermanentSyncFailure)
		assert.True(t, utilnet.IsConnectionRefused(res.Err), "%v", res.Err)
		var se *cache.InformerSyncError
		require.ErrorAs(t, res.Err, &se)
		assert.True(t, errors.Is(se, se.Err))
	})
}

// TestRelistReasonExpiredIsCounted: with the watch cache off, an informer
// whose watch is cut by an API server restart resumes from a resourceVersion
// etcd compacted meanwhile; the server answers 410 and the informer relists.
// The Prometheus collector counts that list under reason "expired".
func TestRelistReasonExpiredIsCounted(t *testing.T) {
	if !testenv.Available(t) {
		return
	}
	t.Parallel()
	env := testenv.Start(t, testenv.Options{APIServerFlags: []string{"--watch-cache=false"}})
	a := env.APIServer(0)
	cs := a.Clientset()
	watched := testenv.Namespace(t, cs)
	busy := testenv.Namespace(t, cs)
	itCreatePods(t, cs, watched, "pod", 3, nil)

	informer := cache.NewSharedIndexInformer(itPodLW(cs, watched), &corev1.Pod{}, 0, cache.Indexers{})
	reg := prometheus.NewPedanticRegistry()
	_, err := kinformerprom.Register(reg, informer)
	require.NoError(t, err)
	itRunInformer(t, informer)
	itWaitSynced(t, time.Minute, informer.HasSynced)

	// Move etcd's revision past the informer's without touching its
	// namespace, compact, and cut the watch.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for i := 0; i < 5; i++ {
		_, err := cs.CoreV1().ConfigMaps(busy).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err = env.CompactEtcd(ctx)
	require.NoError(t, err)
	require.NoError(t, a.Restart())

	expired := func() float64 {
		st, _ := cache.GetInformerStatus(informer)
		return float64(st.Lists[cache.RelistExpired])
	}
	require.Eventually(t, func() bool { return expired() >= 1 }, 2*time.Minute, 50*time.Millisecond, "no relist for 410")
	itStoreMatchesServer(t, informer.GetStore(), itListPods(cs, watched), time.Minute)

	st, _ := cache.GetInformerStatus(informer)
	t.Logf("lists by reason: %v, watch restarts %d, last error %v", st.Lists, st.WatchRestarts, st.LastError)
	assert.Equal(t, uint64(1), st.Lists[cache.RelistInitial])
	assert.Equal(t, uint64(1), st.Lists[cache.RelistExpired])
	n, err := testutil.GatherAndCount(reg, "kinformer_informer_lists_total")
	require.NoError(t, err)
	assert.Equal(t, len(cache.RelistReasons()), n)
	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "kinformer_informer_lists_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					got[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	assert.Equal(t, 1.0, got["expired"])
	assert.Equal(t, 1.0, got["initial"])
}
