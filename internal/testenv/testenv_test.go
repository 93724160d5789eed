package testenv

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
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

// TestStopGraceKillsLingeringServers: with a short Options.StopGrace, stopping kube-apiserver
// while a watch keeps it alive, and restarting etcd while kube-apiserver watches it, end
// both processes with SIGKILL after the grace instead of waiting for them, and the restarted
// servers serve the data written before. Options.APIServerEnv reaches kube-apiserver's
// environment.
func TestStopGraceKillsLingeringServers(t *testing.T) {
	env := Start(t, Options{StopGrace: 200 * time.Millisecond, APIServerEnv: []string{"GOGC=400"}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := env.Clientset()
	cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "grace"}}, metav1.CreateOptions{})
	require.NoError(t, err)

	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()
	s := env.APIServer(0)
	s.mu.Lock()
	old := s.proc
	s.mu.Unlock()
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", old.cmd.Process.Pid))
	require.NoError(t, err)
	require.Contains(t, strings.Split(string(environ), "\x00"), "GOGC=400")
	// Without the grace, Stop would wait the default 10 s (the watch keeps kube-apiserver
	// alive for up to a minute): half of that is a wide margin for a 200 ms grace.
	began := time.Now()
	s.Stop()
	require.Less(t, time.Since(began), defaultStopGrace/2, "Stop did not honour the grace")
	require.EqualError(t, old.err, "signal: killed", "kube-apiserver with an open watch should be killed after the grace")
	require.NoError(t, s.Start())

	env.mu.Lock()
	oldEtcd := env.etcd
	env.mu.Unlock()
	exited := make(chan time.Duration, 1)
	began = time.Now()
	go func() {
		<-oldEtcd.exited
		exited <- time.Since(began)
	}()
	require.NoError(t, env.RestartEtcd())
	require.Less(t, <-exited, defaultStopGrace/2, "RestartEtcd did not honour the grace")
	require.EqualError(t, oldEtcd.err, "signal: killed", "etcd watched by kube-apiserver should be killed after the grace")

	require.Eventually(t, func() bool {
		got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "grace", metav1.GetOptions{})
		return err == nil && got.UID == cm.UID
	}, time.Minute, 100*time.Millisecond, "the restarted servers do not serve the configmap written before")
}
