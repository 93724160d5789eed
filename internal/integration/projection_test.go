package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kinformer/kinformer/informers"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
	"github.com/kinformer/kinformer/internal/testenv"
	"github.com/kinformer/kinformer/projection"
)

// TestProjectionAgainstTheAPIServer runs a typed (protobuf, streaming list)
// and a dynamic (JSON) informer of configmaps with a projection against the
// real kube-apiserver: both hold only the projected fields, marked, after
// the initial list and after an update arrives through the watch; a client
// built with GuardConfig refuses to write a projected object back, and the
// server's object keeps every field.
func TestProjectionAgainstTheAPIServer(t *testing.T) {
	env := sharedEnv(t)
	admin := env.Clientset()
	ns := testenv.Namespace(t, admin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns, Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"note": "dropped"}},
		Data:       map[string]string{"kept": "1", "big": "dropped"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	p := projection.MustNew("metadata.labels", "data.kept")
	factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(env.Config()), 0,
		informers.WithNamespace(ns), informers.WithProjection(&corev1.ConfigMap{}, p))
	typed := factory.Core().V1().ConfigMaps()
	typed.Informer()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	dynFactory := dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(dynamic.NewForConfigOrDie(env.Config()), 0,
		dynamicinformer.WithNamespace(ns), dynamicinformer.WithProjection(gvr, p, env.Config()))
	dyn := dynFactory.ForResource(gvr)
	dyn.Informer()
	defer func() {
		cancel()
		factory.Shutdown()
		dynFactory.Shutdown()
	}()
	factory.StartWithContext(ctx)
	dynFactory.Start(ctx.Done())
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
	require.True(t, dynFactory.WaitForCacheSync(ctx.Done())[gvr])

	check := func(wantKept string) {
		t.Helper()
		require.NoError(t, wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			cm, err := typed.Lister().ConfigMaps(ns).Get("cm")
			if err != nil || cm.Data["kept"] != wantKept {
				return false, nil
			}
			obj, err := dyn.Lister().ByNamespace(ns).Get("cm")
			return err == nil && obj.(*unstructured.Unstructured).Object["data"].(map[string]any)["kept"] == wantKept, nil
		}))
		cm, err := typed.Lister().ConfigMaps(ns).Get("cm")
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"kept": wantKept}, cm.Data)
		assert.Equal(t, map[string]string{"app": "web"}, cm.Labels)
		assert.Equal(t, map[string]string{projection.MarkerAnnotation: p.Fingerprint()}, cm.Annotations)
		assert.NotEmpty(t, cm.UID)
		assert.NotEmpty(t, cm.ResourceVersion)
		assert.True(t, cm.CreationTimestamp.IsZero(), "creationTimestamp is not projected")
		obj, err := dyn.Lister().ByNamespace(ns).Get("cm")
		require.NoError(t, err)
		u := obj.(*unstructured.Unstructured)
		assert.Equal(t, map[string]any{"kept": wantKept}, u.Object["data"])
		assert.Equal(t, map[string]string{"app": "web"}, u.GetLabels())
		assert.Equal(t, map[string]string{projection.MarkerAnnotation: p.Fingerprint()}, u.GetAnnotations())
		assert.Equal(t, cm.ResourceVersion, u.GetResourceVersion())
	}
	check("1")

	full, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{})
	require.NoError(t, err)
	full.Data["kept"] = "2"
	_, err = admin.CoreV1().ConfigMaps(ns).Update(ctx, full, metav1.UpdateOptions{})
	require.NoError(t, err)
	check("2")

	guarded := kubernetes.NewForConfigOrDie(projection.GuardConfig(env.Config()))
	cm, err := typed.Lister().ConfigMaps(ns).Get("cm")
	require.NoError(t, err)
	changed := cm.DeepCopy()
	changed.Data["kept"] = "3"
	_, err = guarded.CoreV1().ConfigMaps(ns).Update(ctx, changed, metav1.UpdateOptions{})
	require.ErrorIs(t, err, projection.ErrProjectedWrite)
	onServer, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"kept": "2", "big": "dropped"}, onServer.Data, "the refused write did not reach the server")
	assert.Equal(t, "dropped", onServer.Annotations["note"])
}
