package dynamicinformer_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/dynamic/fake"

	"github.com/kinformer/kinformer/cache"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
	"github.com/kinformer/kinformer/informers/internal/factorytest"
)

// runAndShutdown runs gvr's informer of a factory built with opts until it
// synced and shuts the factory down (see factorytest.RunAndShutdown).
func runAndShutdown(t *testing.T, client *fake.FakeDynamicClient, gvr schema.GroupVersionResource, opts ...dynamicinformer.DynamicSharedInformerOption) ([]string, []error) {
	t.Helper()
	return factorytest.RunAndShutdown(t, dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(client, 0, opts...), gvr, waitTimeout)
}

// TestDynamicFactoryOptionsConstructorAppliesOptions: the options constructor without options
// is NewDynamicSharedInformerFactory (all namespaces, no snapshot file), and
// WithNamespace and WithTweakListOptions restrict it as
// NewFilteredDynamicSharedInformerFactory's arguments do.
func TestDynamicFactoryOptionsConstructorAppliesOptions(t *testing.T) {
	objs := []runtime.Object{
		newObject(widgetsGVR, "Widget", "a", "w1", map[string]string{"app": "web"}),
		newObject(widgetsGVR, "Widget", "a", "w2", map[string]string{"app": "db"}),
		newObject(widgetsGVR, "Widget", "b", "w3", map[string]string{"app": "web"}),
	}
	for _, tc := range []struct {
		name string
		opts []dynamicinformer.DynamicSharedInformerOption
		want []string
	}{
		{"no options", nil, []string{"a/w1", "a/w2", "b/w3"}},
		{"nil option", []dynamicinformer.DynamicSharedInformerOption{nil}, []string{"a/w1", "a/w2", "b/w3"}},
		{"namespace", []dynamicinformer.DynamicSharedInformerOption{dynamicinformer.WithNamespace("a")}, []string{"a/w1", "a/w2"}},
		{"selector", []dynamicinformer.DynamicSharedInformerOption{dynamicinformer.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "app=web" })}, []string{"a/w1", "b/w3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, _ := newFakeClient(objs...)
			keys, errs := runAndShutdown(t, client, widgetsGVR, tc.opts...)
			assert.ElementsMatch(t, tc.want, keys)
			assert.Empty(t, errs)
		})
	}
}

// TestWithShardKeepsTheShardOfUnstructuredObjects: the dynamic factory's
// informers keep exactly the objects of the shard, and the fake client,
// which ignores the selector as a server without the ShardedListAndWatch
// gate does, is reported as ignoring it.
func TestWithShardKeepsTheShardOfUnstructuredObjects(t *testing.T) {
	shard := cache.Shard{Key: cache.ShardByUID, Ranges: []cache.ShardRange{{Start: "0x0000000000000000", End: "0x8000000000000000"}}}
	var objs []runtime.Object
	var want []string
	for i := range 40 {
		obj := newObject(widgetsGVR, "Widget", "a", fmt.Sprintf("w%d", i), nil)
		obj.SetUID(uuid.NewUUID())
		objs = append(objs, obj)
		if in, err := shard.Contains(obj); err == nil && in {
			want = append(want, "a/"+obj.GetName())
		}
	}
	require.NotEmpty(t, want)
	require.Less(t, len(want), len(objs))
	client, _ := newFakeClient(objs...)
	keys, errs := runAndShutdown(t, client, widgetsGVR, dynamicinformer.WithShard(shard))
	assert.ElementsMatch(t, want, keys)
	require.Len(t, errs, 1, "%v", errs)
	var ignored *cache.ShardSelectorIgnoredError
	assert.ErrorAs(t, errs[0], &ignored)
}
