package gvrfactory

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/informers"
)

func TestFactoryAppliesNamespaceAndListOptions(t *testing.T) {
	client, watches := newFakeClient(
		newObject(widgetsGVR, "Widget", "a", "w1", map[string]string{"app": "web"}),
		newObject(widgetsGVR, "Widget", "a", "w2", nil),
		newObject(widgetsGVR, "Widget", "b", "w3", map[string]string{"app": "web"}),
	)
	var tweaks atomic.Int32
	factory := newFactory(client, func(o *Options) {
		o.Namespace = "a"
		o.TweakListOptions = func(o *metav1.ListOptions) {
			tweaks.Add(1)
			o.LabelSelector = "app=web"
		}
	})
	widgets := factory.ForResource(widgetsGVR)
	ctx, cancel := context.WithCancel(context.Background())
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	require.Equal(t, map[schema.GroupVersionResource]bool{widgetsGVR: true}, factory.WaitForCacheSync(ctx.Done()))
	require.Eventually(t, func() bool { return watches(widgetsGVR) > 0 }, waitTimeout, pollInterval)
	all, err := widgets.Lister().List(labels.Everything())
	require.NoError(t, err)
	assert.Equal(t, []string{"a/w1"}, objectKeys(all))
	// One LIST and one WATCH at least.
	assert.GreaterOrEqual(t, tweaks.Load(), int32(2))
}

func TestFactoryStartsLateInformersAndNothingAfterShutdown(t *testing.T) {
	client, _ := newFakeClient()
	factory := newFactory(client)
	stop := make(chan struct{})
	widgets := factory.ForResource(widgetsGVR)
	factory.Start(stop)
	require.True(t, factory.WaitForCacheSync(stop)[widgetsGVR])
	// Requested after Start: not running until Start is called again.
	pods := factory.ForResource(podsGVR)
	assert.Equal(t, map[schema.GroupVersionResource]bool{widgetsGVR: true}, factory.WaitForCacheSync(stop))
	assert.False(t, pods.Informer().HasSynced())
	factory.Start(stop)
	assert.Equal(t, map[schema.GroupVersionResource]bool{widgetsGVR: true, podsGVR: true}, factory.WaitForCacheSync(stop))
	assert.True(t, widgets.Informer().HasSynced())

	close(stop)
	factory.Shutdown()
	factory.Shutdown()
	// After Shutdown nothing starts.
	late := factory.ForResource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"})
	factory.Start(make(chan struct{}))
	factory.Shutdown()
	assert.False(t, late.Informer().HasSynced(), "informer requested after Shutdown was started")
}

func TestFactoryShutdownStopsItsInformersAndStartsNoMore(t *testing.T) {
	client, _ := newFakeClient()
	factory := newFactory(client)
	ctx, cancel := context.WithCancel(context.Background())
	pods := factory.ForResource(podsGVR)
	factory.Start(ctx.Done())
	require.True(t, factory.WaitForCacheSync(ctx.Done())[podsGVR])
	cancel()
	factory.Shutdown()
	assert.True(t, pods.Informer().IsStopped())
	late := factory.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"})
	factory.Start(make(chan struct{}))
	factory.Shutdown()
	assert.False(t, late.Informer().HasSynced(), "informer requested after Shutdown was started")
}

func TestReleaseResource(t *testing.T) {
	client, watches := newFakeClient(newObject(widgetsGVR, "Widget", "a", "w1", nil), newObject(podsGVR, "Pod", "a", "p1", nil))
	factory := newFactory(client)
	var releaser informers.ResourceReleaser = factory
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer factory.Shutdown()
	defer cancel()

	pods := factory.ForResource(podsGVR)
	factory.Start(ctx.Done())
	require.Equal(t, map[schema.GroupVersionResource]bool{podsGVR: true}, factory.WaitForCacheSync(ctx.Done()))
	require.Eventually(t, func() bool { return watches(podsGVR) > 0 }, waitTimeout, pollInterval)

	baseline := goleak.IgnoreCurrent()
	widgets := factory.ForResource(widgetsGVR)
	factory.Start(ctx.Done())
	require.True(t, factory.WaitForCacheSync(ctx.Done())[widgetsGVR])
	require.Eventually(t, func() bool { return watches(widgetsGVR) > 0 }, waitTimeout, pollInterval)

	released, err := releaser.ReleaseResource(ctx, widgetsGVR)
	require.NoError(t, err)
	assert.True(t, released)
	assert.True(t, widgets.Informer().IsStopped())
	// A stopped goroutine may still be listed for a moment after it signalled
	// that it is done: look again until the deadline before calling it a leak.
	var leaked error
	if !assert.Eventually(t, func() bool {
		leaked = goleak.Find(baseline)
		return leaked == nil
	}, waitTimeout, 10*time.Millisecond) {
		require.NoError(t, leaked, "the released informer left goroutines behind")
	}
	left, err := widgets.Lister().List(labels.Everything())
	require.NoError(t, err)
	assert.Empty(t, left)
	assert.Equal(t, map[schema.GroupVersionResource]bool{podsGVR: true}, factory.WaitForCacheSync(ctx.Done()))

	// The pods informer keeps delivering.
	_, err = client.Resource(podsGVR).Namespace("a").Create(ctx, newObject(podsGVR, "Pod", "a", "p2", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		l, _ := pods.Lister().List(labels.Everything())
		return len(l) == 2
	}, waitTimeout, pollInterval)

	// A new informer for the same resource works.
	again := factory.ForResource(widgetsGVR)
	assert.False(t, again == widgets)
	factory.Start(ctx.Done())
	require.True(t, factory.WaitForCacheSync(ctx.Done())[widgetsGVR])
	got, err := again.Lister().ByNamespace("a").Get("w1")
	require.NoError(t, err)
	assert.Equal(t, "w1", got.(metav1.Object).GetName())

	released, err = releaser.ReleaseResource(ctx, schema.GroupVersionResource{Group: "none", Version: "v1", Resource: "things"})
	require.NoError(t, err)
	assert.False(t, released)
}
