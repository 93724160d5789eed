package factoryengine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kinformer/kinformer/cache"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// plainListWatch is a ListWatch that does not offer streaming lists, so
// that its informer lists at once.
type plainListWatch struct{ *cache.ListWatch }

func (plainListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// newInformer returns an informer of pods whose LIST returns nothing (or
// fails with listErr) and whose WATCH waits for the informer to stop.
func newInformer(listErr error) cache.SharedIndexInformer {
	lw := plainListWatch{&cache.ListWatch{
		ListFunc: func(metav1.ListOptions) (runtime.Object, error) {
			if listErr != nil {
				return nil, listErr
			}
			return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}, nil
		},
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}}
	return cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{})
}

func identity(i cache.SharedIndexInformer) cache.SharedIndexInformer { return i }

func TestEngineBuildsAnInformerOncePerKey(t *testing.T) {
	e := New(func(k string) string { return k }, identity)
	builds := 0
	build := func() (cache.SharedIndexInformer, bool) {
		builds++
		return newInformer(nil), true
	}
	first, ok := e.Get("pods", build)
	require.True(t, ok)
	again, ok := e.Get("pods", build)
	require.True(t, ok)
	assert.True(t, first == again, "same key, another informer")
	assert.Equal(t, 1, builds)

	_, ok = e.Get("secrets", nil)
	assert.False(t, ok, "no build function, no informer")
	_, ok = e.Get("secrets", func() (cache.SharedIndexInformer, bool) { return nil, false })
	assert.False(t, ok, "a build that declines keeps nothing")
	assert.Len(t, e.ListInformers(), 1)
}

func TestEngineListsInformersByKeyName(t *testing.T) {
	e := New(func(k int) string { return []string{"b", "c", "a"}[k] }, identity)
	want := map[int]cache.SharedIndexInformer{}
	for k := range 3 {
		want[k], _ = e.Get(k, func() (cache.SharedIndexInformer, bool) { return newInformer(nil), true })
	}
	got := e.ListInformers()
	require.Len(t, got, 3)
	assert.True(t, got[0] == want[2] && got[1] == want[0] && got[2] == want[1], "not ordered by name")
}

func TestEngineStartsWaitsReleasesAndShutsDown(t *testing.T) {
	e := New(func(k string) string { return k }, identity)
	pods, _ := e.Get("pods", func() (cache.SharedIndexInformer, bool) { return newInformer(nil), true })
	nodes, _ := e.Get("nodes", func() (cache.SharedIndexInformer, bool) { return newInformer(nil), true })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e.StartWithContext(ctx)
	synced, err := e.WaitForCacheSync(ctx, cache.SyncOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"pods": true, "nodes": true}, synced)

	released, err := e.Release(ctx, "pods")
	require.NoError(t, err)
	assert.True(t, released)
	assert.True(t, pods.IsStopped())
	assert.False(t, nodes.IsStopped())
	released, err = e.Release(ctx, "pods")
	require.NoError(t, err)
	assert.False(t, released, "released twice")
	synced, err = e.WaitForCacheSync(ctx, cache.SyncOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"nodes": true}, synced)

	cancel()
	e.Shutdown()
	assert.True(t, nodes.IsStopped())
	late, _ := e.Get("late", func() (cache.SharedIndexInformer, bool) { return newInformer(nil), true })
	e.StartWithContext(context.Background())
	e.Shutdown()
	assert.False(t, late.HasSynced(), "started after Shutdown")
}

func TestEngineWaitForCacheSyncNamesWhatDidNotSync(t *testing.T) {
	e := New(func(k string) string { return k }, identity)
	e.Get("pods", func() (cache.SharedIndexInformer, bool) { return newInformer(errors.New("no pods today")), true })
	runCtx, stop := context.WithCancel(context.Background())
	defer e.Shutdown()
	defer stop()
	e.StartWithContext(runCtx)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	synced, err := e.WaitForCacheSync(ctx, cache.SyncOptions{})
	assert.Equal(t, map[string]bool{"pods": false}, synced)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	var syncErr *cache.InformerSyncError
	assert.ErrorAs(t, err, &syncErr)
}
