package projection

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// markerTestProjection keeps no annotation: its objects' annotations are
// the marker alone.
var markerTestProjection = MustNew("metadata.labels", "spec.nodeName")

// markerTestPod is a full pod with annotations the projection drops.
func markerTestPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: name, ResourceVersion: "5", UID: types.UID("uid-" + name),
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{"note": "dropped"},
		},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
	}
}

// projectedMarkerTestPod is markerTestPod as read with the projection: its
// annotations the marker alone, in a map of its own.
func projectedMarkerTestPod(t testing.TB, name string) *corev1.Pod {
	t.Helper()
	obj, err := markerTestProjection.Apply(markerTestPod(name))
	require.NoError(t, err)
	return obj.(*corev1.Pod)
}

// projectedMarkerTestWidget is an unstructured object as read with the
// projection.
func projectedMarkerTestWidget(t testing.TB, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := markerTestProjection.Apply(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{
			"name": name, "namespace": "ns", "resourceVersion": "5",
			"labels": map[string]any{"app": "web"}, "annotations": map[string]any{"note": "dropped"},
		},
		"spec": map[string]any{"nodeName": "node-1", "size": int64(3)},
	}})
	require.NoError(t, err)
	return obj.(*unstructured.Unstructured)
}

func TestShareMarkerSharesOnlyTheMarkerAlone(t *testing.T) {
	fp := markerTestProjection.Fingerprint()
	a, b := projectedMarkerTestPod(t, "a"), projectedMarkerTestPod(t, "b")
	require.Equal(t, map[string]string{MarkerAnnotation: fp}, a.Annotations)
	assert.False(t, markerTestProjection.SharesMarker(a))
	assert.True(t, markerTestProjection.ShareMarker(a))
	assert.True(t, markerTestProjection.ShareMarker(b))
	assert.True(t, markerTestProjection.SharesMarker(a))
	assert.True(t, sameMap(a.Annotations, b.Annotations), "one map for both")
	assert.False(t, markerTestProjection.ShareMarker(a), "already shared")
	assert.NoError(t, markerTestProjection.CheckMarked(a))
	assert.Equal(t, map[string]string{MarkerAnnotation: fp}, a.Annotations)

	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "m", Annotations: map[string]string{MarkerAnnotation: fp}}}
	assert.True(t, markerTestProjection.ShareMarker(meta))
	assert.True(t, sameMap(meta.Annotations, a.Annotations))

	u := projectedMarkerTestWidget(t, "w")
	assert.True(t, markerTestProjection.ShareMarker(u))
	assert.True(t, markerTestProjection.SharesMarker(u))
	assert.NoError(t, markerTestProjection.CheckMarked(u))
	assert.Equal(t, map[string]string{MarkerAnnotation: fp}, u.GetAnnotations())

	for _, tc := range []struct {
		name string
		obj  any
	}{
		{"other annotations kept", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{MarkerAnnotation: fp, "kept": "x"}}}},
		{"another projection's marker", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{MarkerAnnotation: "0123456789abcdef"}}}},
		{"no annotations", &corev1.Pod{}},
		{"unstructured with other annotations", &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"annotations": map[string]any{MarkerAnnotation: fp, "kept": "x"}}}}},
		{"unstructured without metadata", &unstructured.Unstructured{Object: map[string]any{}}},
		{"a nil pod", (*corev1.Pod)(nil)},
		{"nil", nil},
		{"not an object", "text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.False(t, markerTestProjection.ShareMarker(tc.obj))
			assert.False(t, markerTestProjection.SharesMarker(tc.obj))
		})
	}

	// UnshareMarker gives back a map of its own with the same marker, which
	// may be modified without touching the shared one.
	assert.Same(t, a, markerTestProjection.UnshareMarker(a))
	assert.False(t, markerTestProjection.SharesMarker(a))
	a.Annotations["added"] = "by a transform"
	assert.Equal(t, map[string]string{MarkerAnnotation: fp}, b.Annotations)
	markerTestProjection.UnshareMarker(u)
	assert.False(t, markerTestProjection.SharesMarker(u))
	require.NoError(t, unstructured.SetNestedField(u.Object, "by a transform", "metadata", "annotations", "added"))
	assert.Equal(t, map[string]any{MarkerAnnotation: fp}, markerTestProjection.markerJSON)
	assert.Equal(t, map[string]string{MarkerAnnotation: fp}, markerTestProjection.marker)
}

// Guard still sees the marker in every write of an object whose
// annotations are the shared map: the object sent as it is, or a copy
// (DeepCopy copies the map), encoded in JSON or protobuf, by Update,
// Create and every kind of patch, typed and unstructured. Nothing reaches
// the server.
func TestGuardRefusesEveryWriteOfASharedMarkerObject(t *testing.T) {
	var mu sync.Mutex
	var received []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		received = append(received, r.Method+" "+r.URL.Path)
		mu.Unlock()
		http.Error(w, "unexpected", http.StatusInternalServerError)
	}))
	defer srv.Close()
	ctx := context.Background()

	pod := projectedMarkerTestPod(t, "a")
	require.True(t, markerTestProjection.ShareMarker(pod))
	for _, contentType := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		client, err := kubernetes.NewForConfig(GuardConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: contentType}}))
		require.NoError(t, err)
		pods := client.CoreV1().Pods("ns")
		for name, obj := range map[string]*corev1.Pod{"as cached": pod, "a copy": pod.DeepCopy(), "a copy of a copy": pod.DeepCopyObject().(*corev1.Pod).DeepCopy()} {
			_, err = pods.Update(ctx, obj, metav1.UpdateOptions{})
			assert.ErrorIs(t, err, ErrProjectedWrite, "%s: Update of %s", contentType, name)
			_, err = pods.Create(ctx, obj, metav1.CreateOptions{})
			assert.ErrorIs(t, err, ErrProjectedWrite, "%s: Create of %s", contentType, name)
			_, err = pods.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
			assert.ErrorIs(t, err, ErrProjectedWrite, "%s: UpdateStatus of %s", contentType, name)
		}
	}
	client, err := kubernetes.NewForConfig(GuardConfig(&rest.Config{Host: srv.URL}))
	require.NoError(t, err)
	whole, err := json.Marshal(pod.DeepCopy())
	require.NoError(t, err)
	annotations, err := json.Marshal(pod.DeepCopy().Annotations)
	require.NoError(t, err)
	for _, patch := range []struct {
		pt   types.PatchType
		body []byte
	}{
		{types.MergePatchType, whole},
		{types.StrategicMergePatchType, whole},
		{types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/annotations","value":` + string(annotations) + `}]`)},
	} {
		_, err = client.CoreV1().Pods("ns").Patch(ctx, "a", patch.pt, patch.body, metav1.PatchOptions{})
		assert.ErrorIs(t, err, ErrProjectedWrite, "%s patch", patch.pt)
	}

	widget := projectedMarkerTestWidget(t, "w")
	require.True(t, markerTestProjection.ShareMarker(widget))
	dyn, err := dynamic.NewForConfig(GuardConfig(&rest.Config{Host: srv.URL}))
	require.NoError(t, err)
	widgets := dyn.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("ns")
	for name, obj := range map[string]*unstructured.Unstructured{"as cached": widget, "a copy": widget.DeepCopy(), "a JSON copy": {Object: runtime.DeepCopyJSON(widget.Object)}} {
		_, err = widgets.Update(ctx, obj, metav1.UpdateOptions{})
		assert.ErrorIs(t, err, ErrProjectedWrite, "unstructured Update of %s", name)
		_, err = widgets.Create(ctx, obj, metav1.CreateOptions{})
		assert.ErrorIs(t, err, ErrProjectedWrite, "unstructured Create of %s", name)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, received, "a refused write reached the server")
}
