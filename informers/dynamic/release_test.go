package dynamicinformer_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/informers"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
)

func TestReleaseResource(t *testing.T) {
	client, watches := newFakeClient(newObject(widgetsGVR, "Widget", "a", "w1", nil), newObject(podsGVR, "Pod", "a", "p1", nil))
	factory := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	releaser, ok := factory.(informers.ResourceReleaser)
	require.True(t, ok)
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
	require.NoError(t, goleak.Find(baseline), "the released informer left goroutines behind")
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
