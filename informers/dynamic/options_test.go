package dynamicinformer_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/fake"

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
