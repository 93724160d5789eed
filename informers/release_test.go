package informers_test

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
)

// nameRecorder records the names a handler is told about.
type nameRecorder struct {
	mu    sync.Mutex
	names []string
}

func (n *nameRecorder) handler() cache.ResourceEventHandler {
	add := func(obj interface{}) {
		n.mu.Lock()
		defer n.mu.Unlock()
		m, _ := obj.(metav1.Object)
		if m != nil {
			n.names = append(n.names, m.GetName())
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: add, UpdateFunc: func(_, obj interface{}) { add(obj) }}
}

func (n *nameRecorder) get() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.names...)
}

func TestReleaseInformerKeepsOthersRunning(t *testing.T) {
	client := newFakeClientset(newPod("ns", "p1", nil), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}})
	watches := countWatches(client)
	factory := informers.NewSharedInformerFactory(client, 0)
	releaser, ok := factory.(informers.InformerReleaser)
	require.True(t, ok, "the factory implements InformerReleaser")

	pods := &nameRecorder{}
	_, err := factory.Core().V1().Pods().Informer().AddEventHandler(pods.handler())
	require.NoError(t, err)
	ctx := startAndSync(t, factory)
	watches.waitFor(t, podsGVR)

	// Everything running so far (the pod informer) is part of the baseline;
	// whatever the config map informer starts must be gone after release.
	baseline := goleak.IgnoreCurrent()
	cmInformer := factory.Core().V1().ConfigMaps().Informer()
	cms := &nameRecorder{}
	_, err = cmInformer.AddEventHandler(cms.handler())
	require.NoError(t, err)
	cmLister := factory.Core().V1().ConfigMaps().Lister()
	factory.StartWithContext(ctx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
	cmGVR := podsGVR
	cmGVR.Resource = "configmaps"
	watches.waitFor(t, cmGVR)
	require.Eventually(t, func() bool { return len(cms.get()) == 1 }, waitTimeout, pollInterval)

	released, err := releaser.ReleaseInformer(ctx, &corev1.ConfigMap{})
	require.NoError(t, err)
	assert.True(t, released)
	assert.True(t, cmInformer.IsStopped())
	// A stopped goroutine may still be listed for a moment after it signalled
	// that it is done: look again until the deadline before calling it a leak.
	var leaked error
	if !assert.Eventually(t, func() bool {
		leaked = goleak.Find(baseline, goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run"))
		return leaked == nil
	}, waitTimeout, 10*time.Millisecond) {
		require.NoError(t, leaked, "the released informer left goroutines behind")
	}
	all, err := cmLister.List(labels.Everything())
	require.NoError(t, err)
	assert.Empty(t, all, "the released informer's cache is emptied")
	assert.NotContains(t, factory.WaitForCacheSyncWithContext(ctx).Synced, typeOf(&corev1.ConfigMap{}), "no longer started")

	// The other informer keeps delivering; the released one's handler
	// gets nothing more.
	_, err = client.CoreV1().Pods("ns").Create(ctx, newPod("ns", "p2", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = client.CoreV1().ConfigMaps("ns").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c2"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(pods.get()) == 2 }, waitTimeout, pollInterval)
	assert.Equal(t, []string{"p1", "p2"}, pods.get())

	// A new request builds a new informer that works.
	again := factory.Core().V1().ConfigMaps().Informer()
	assert.False(t, again == cmInformer, "a new informer after release")
	fresh := &nameRecorder{}
	_, err = again.AddEventHandler(fresh.handler())
	require.NoError(t, err)
	factory.StartWithContext(ctx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
	require.Eventually(t, func() bool { return len(fresh.get()) == 2 }, waitTimeout, pollInterval)
	assert.ElementsMatch(t, []string{"c1", "c2"}, fresh.get())
	assert.Equal(t, []string{"c1"}, cms.get(), "the released informer's handler got nothing after release")

	// Releasing what is not there.
	released, err = releaser.ReleaseInformer(ctx, &corev1.Secret{})
	require.NoError(t, err)
	assert.False(t, released)
	_, err = releaser.ReleaseInformer(ctx, nil)
	assert.Error(t, err)
}

// A requested but never started informer is just dropped.
func TestReleaseInformerNotStarted(t *testing.T) {
	factory := informers.NewSharedInformerFactory(newFakeClientset(), 0)
	defer factory.Shutdown()
	first := factory.Core().V1().Pods().Informer()
	released, err := factory.(informers.InformerReleaser).ReleaseInformer(context.Background(), &corev1.Pod{})
	require.NoError(t, err)
	assert.True(t, released)
	assert.False(t, first == factory.Core().V1().Pods().Informer())
}

// A release whose context ends before the informer stopped reports it.
func TestReleaseInformerContextEnds(t *testing.T) {
	client := newFakeClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	block := make(chan struct{})
	_, err := factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(interface{}) { <-block },
	})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	defer factory.Shutdown()
	factory.StartWithContext(ctx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
	_, err = client.CoreV1().Pods("ns").Create(ctx, newPod("ns", "p", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	// Wait until the handler is blocked in the add.
	require.Eventually(t, func() bool {
		l, _ := factory.Core().V1().Pods().Lister().List(labels.Everything())
		return len(l) == 1
	}, waitTimeout, pollInterval)
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	released, err := factory.(informers.InformerReleaser).ReleaseInformer(short, &corev1.Pod{})
	assert.True(t, released)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	close(block)
}

func typeOf(obj interface{}) reflect.Type { return reflect.TypeOf(obj) }
