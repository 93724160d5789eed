package dynamicinformer_test

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
)

// TestDynamicFactoryMemoryLean checks WithMemoryLean on the dynamic factory:
// the lister returns the server's unstructured objects minus managedFields,
// label values are shared, and WithTransform runs first.
func TestDynamicFactoryMemoryLean(t *testing.T) {
	var objs []runtime.Object
	for _, name := range []string{"a", "b"} {
		// Fresh strings, as a decoder makes: sharing can only come from interning.
		u := newObject(widgetsGVR, "Widget", strings.Clone("ns"), name, map[string]string{strings.Clone("app"): strings.Clone("web")})
		u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}})
		objs = append(objs, u)
	}
	client, _ := newFakeClient(objs...)
	sawManaged := 0
	user := func(obj any) (any, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok && len(u.GetManagedFields()) > 0 {
			sawManaged++ // the informer's transform runs on one goroutine
		}
		return obj, nil
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(client, 0, dynamicinformer.WithTransform(user), dynamicinformer.WithMemoryLean())
	informer := factory.ForResource(widgetsGVR)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer func() {
		cancel()
		factory.Shutdown()
	}()
	factory.Start(ctx.Done())
	require.True(t, factory.WaitForCacheSync(ctx.Done())[widgetsGVR])

	var labels []map[string]string
	for _, name := range []string{"a", "b"} {
		obj, err := informer.Lister().ByNamespace("ns").Get(name)
		require.NoError(t, err)
		u := obj.(*unstructured.Unstructured)
		assert.Empty(t, u.GetManagedFields())
		assert.Equal(t, "web", u.GetLabels()["app"])
		labels = append(labels, u.GetLabels())
	}
	assert.Equal(t, 2, sawManaged)
	assert.Same(t, unsafe.StringData(labels[0]["app"]), unsafe.StringData(labels[1]["app"]))
}
