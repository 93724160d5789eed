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
	client, watches := genClient(genObj(genWidgets, "Widget", "a", "w1", nil), genObj(genPods, "Pod", "a", "p1", nil))
	factory := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	releaser, ok := factory.(informers.ResourceReleaser)
	require.True(t, ok)
	ctx, cancel := context.WithTimeout(context.Background(), genWait)
	defer factory.Shutdown()
	defer cancel()

	pods := factory.ForResource(genPods)
	factory.Start(ctx.Done())
	require.Equal(t, map[schema.GroupVersionResource]bool{genPods: true}, factory.WaitForCacheSync(ctx.Done()))
	require.Eventually(t, func() bool { return watches(genPods) > 0 }, genWait, genTick)

	baseline := goleak.IgnoreCurrent()
	widgets := factory.ForResource(genWidgets)
	factory.Start(ctx.Done())
	require.True(t, factory.WaitForCacheSync(ctx.Done())[genWidgets])
	require.Eventually(t, func() bool { return watches(genWidgets) > 0 }, genWait, genTick)

	released, err := releaser.ReleaseResource(ctx, genWidgets)
	require.NoError(t, err)
	assert.True(t, released)
	assert.True(t, widgets.Informer().IsStopped())
	require.NoError(t, goleak.Find(baseline), "the released informer left goroutines behind")
	left, err := widgets.Lister().List(labels.Everything())
	require.NoError(t, err)
	assert.Empty(t, left)
	assert.Equal(t, map[schema.GroupVersionResource]bool{genPods: true}, factory.WaitForCacheSync(ctx.Done()))

	// The pods informer keeps delivering.
	_, err = client.Resource(genPods).Namespace("a").Create(ctx, genObj(genPods, "Pod", "a", "p2", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		l, _ := pods.Lister().List(labels.Everything())
		return len(l) == 2
	}, genWait, genTick)

	// A new informer for the same resource works.
	again := factory.ForResource(genWidgets)
	assert.False(t, again == widgets)
	factory.Start(ctx.Done())
	require.True(t, factory.WaitForCacheSync(ctx.Done())[genWidgets])
	got, err := again.Lister().ByNamespace("a").Get("w1")
	require.NoError(t, err)
	assert.Equal(t, "w1", got.(metav1.Object).GetName())

	released, err = releaser.ReleaseResource(ctx, schema.GroupVersionResource{Group: "none", Version: "v1", Resource: "things"})
	require.NoError(t, err)
	assert.False(t, released)
}
