package metadatainformer_test

import (
	"context"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	metadatainformer "github.com/kinformer/kinformer/informers/metadata"
)

// TestMetadataFactoryMemoryLean checks WithMemoryLean on the metadata factory: the
// lister returns the server's objects minus managedFields, label values are
// shared, and WithTransform runs first.
func TestMetadataFactoryMemoryLean(t *testing.T) {
	var objs []k8sruntime.Object
	for _, name := range []string{"a", "b"} {
		// Fresh strings, as a decoder makes: sharing can only come from interning.
		m := podMetadata(strings.Clone("ns"), name, map[string]string{strings.Clone("app"): strings.Clone("web"), "name": name})
		m.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}
		objs = append(objs, m)
	}
	client, _ := newFakeClient(t, objs...)
	sawManaged := 0
	user := func(obj any) (any, error) {
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok && len(m.ManagedFields) > 0 {
			sawManaged++ // the informer's transform runs on one goroutine
		}
		return obj, nil
	}
	factory := metadatainformer.NewSharedInformerFactoryWithOptions(client, 0, metadatainformer.WithTransform(user), metadatainformer.WithMemoryLean())
	informer := factory.ForResource(podsGVR)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer func() {
		cancel()
		factory.Shutdown()
	}()
	factory.Start(ctx.Done())
	for gvr, ok := range factory.WaitForCacheSync(ctx.Done()) {
		require.True(t, ok, gvr.String())
	}

	var got []*metav1.PartialObjectMetadata
	for _, name := range []string{"a", "b"} {
		obj, err := informer.Lister().ByNamespace("ns").Get(name)
		require.NoError(t, err)
		m := obj.(*metav1.PartialObjectMetadata)
		want := podMetadata("ns", name, map[string]string{"app": "web", "name": name})
		assert.Equal(t, want.ObjectMeta, m.ObjectMeta)
		got = append(got, m)
	}
	assert.Equal(t, 2, sawManaged)
	assert.Same(t, unsafe.StringData(got[0].Labels["app"]), unsafe.StringData(got[1].Labels["app"]))
	assert.Same(t, unsafe.StringData(got[0].Namespace), unsafe.StringData(got[1].Namespace))
}
