package testenv

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// TestEnvLifecycle starts a cluster without the watch cache, so that etcd compaction is
// visible to watches, and walks through what the integration tests rely on: clients work,
// a restart keeps the port and the data, a second API server shares etcd, and a watch from
// a compacted resourceVersion is answered with 410 Expired.
func TestEnvLifecycle(t *testing.T) {
	env := Start(t, Options{APIServerFlags: []string{"--watch-cache=false"}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	cs := env.Clientset()
	v, err := cs.Discovery().ServerVersion()
	require.NoError(t, err)
	require.Equal(t, "v1.37.2", v.GitVersion)

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "lifecycle"}}
	_, err = cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	require.NoError(t, err)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "lifecycle"}}
	created, err := cs.CoreV1().ConfigMaps("lifecycle").Create(ctx, cm, metav1.CreateOptions{})
	require.NoError(t, err)

	first := env.APIServer(0)
	port := first.Port()
	require.NoError(t, first.Restart())
	require.Equal(t, port, first.Port())
	got, err := env.Clientset().CoreV1().ConfigMaps("lifecycle").Get(ctx, "a", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, created.UID, got.UID)

	second, err := env.AddAPIServer()
	require.NoError(t, err)
	require.NotEqual(t, port, second.Port())
	got, err = second.Clientset().CoreV1().ConfigMaps("lifecycle").Get(ctx, "a", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, created.UID, got.UID)

	for i := 0; i < 3; i++ {
		got.Data = map[string]string{"i": strconv.Itoa(i)}
		got, err = cs.CoreV1().ConfigMaps("lifecycle").Update(ctx, got, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	rev, err := env.CompactEtcd(ctx)
	require.NoError(t, err)
	require.Greater(t, rev, int64(0))

	w, err := cs.CoreV1().ConfigMaps("lifecycle").Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "watch closed without an event")
		require.Equal(t, watch.Error, ev.Type)
		err := apierrors.FromObject(ev.Object)
		require.True(t, apierrors.IsResourceExpired(err) || apierrors.IsGone(err), "want 410, got %v", err)
	case <-ctx.Done():
		t.Fatal("no event from a watch on a compacted resourceVersion")
	}

	first.Stop()
	require.False(t, first.Running())
	env.Stop()
	require.False(t, second.Running())
}
