package projection

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8sprotobuf "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/dynamic"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// TestGuardRefusesCBORUpdatesOfProjectedObjects: with client-go's CBOR
// gates on, a dynamic client sends its writes in CBOR; Guard refuses the
// Update of a projected object before anything reaches the server, and
// lets the Update of an object that is not projected through (in CBOR).
func TestGuardRefusesCBORUpdatesOfProjectedObjects(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.ClientsAllowCBOR, true)
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.ClientsPreferCBOR, true)

	var mu sync.Mutex
	var received []string // method and Content-Type of each request the server saw
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		received = append(received, r.Method+" "+r.Header.Get("Content-Type"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","resourceVersion":"8"}}`)
	}))
	defer srv.Close()

	client, err := dynamic.NewForConfig(GuardConfig(&rest.Config{Host: srv.URL}))
	require.NoError(t, err)
	widgets := client.Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}).Namespace("ns")

	full := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": "w", "namespace": "ns", "resourceVersion": "7"},
		"spec":       map[string]any{"size": int64(3), "color": "red"},
	}}
	p := MustNew("spec.size")
	projected, err := p.Apply(full)
	require.NoError(t, err)

	_, err = widgets.Update(context.Background(), projected.(*unstructured.Unstructured), metav1.UpdateOptions{})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrProjectedWrite), "got %v", err)
	mu.Lock()
	assert.Empty(t, received, "the projected object reached the server")
	mu.Unlock()

	_, err = widgets.Update(context.Background(), full, metav1.UpdateOptions{})
	require.NoError(t, err)
	mu.Lock()
	assert.Equal(t, []string{"PUT application/cbor"}, received)
	mu.Unlock()
}

// TestGuardVerdictFollowsTheDecodedBody: Guard decodes a write's body by its
// content type (JSON, YAML, CBOR, protobuf by the envelope's kind; a patch
// by its patch type) and refuses it only when it sets
// metadata.annotations[MarkerAnnotation]; the marker's text elsewhere (a
// label, a ConfigMap's data, a patch removing it) passes, unchanged; what
// it cannot decode, or carries a Content-Encoding, is refused.
func TestGuardVerdictFollowsTheDecodedBody(t *testing.T) {
	const (
		jsonPatch      = "application/json-patch+json"
		mergePatch     = "application/merge-patch+json"
		strategicPatch = "application/strategic-merge-patch+json"
		applyYAML      = "application/apply-patch+yaml"
		marker         = MarkerAnnotation
		escaped        = "kinformer.io~1projection"
	)
	markedPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Annotations: map[string]string{marker: "abc"}}}
	configMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", Labels: map[string]string{marker: "t"}}, Data: map[string]string{marker: "x", "x.yaml": "metadata:\n  annotations:\n    " + marker + ": abc\n"}}
	unknownKind := protobufBody(t, configMap)
	unknownKind = bytes.Replace(unknownKind, []byte("ConfigMap"), []byte("Configmap"), 1)

	for _, tc := range []struct {
		name, method, contentType, encoding string
		body                                []byte
		want                                error // nil: sent as it is
	}{
		{"JSON: the marker as a label key", http.MethodPut, "application/json", "", []byte(`{"metadata":{"name":"c","labels":{"` + marker + `":"t"}}}`), nil},
		{"JSON: YAML text in a ConfigMap value", http.MethodPut, "application/json", "", []byte(`{"kind":"ConfigMap","data":{"x.yaml":"metadata:\n  annotations:\n    ` + marker + `: abc\n"}}`), nil},
		{"JSON: the marker as a data key", http.MethodPost, "application/json; charset=utf-8", "", []byte(`{"kind":"ConfigMap","data":{"` + marker + `":"x"}}`), nil},
		{"JSON without a Content-Type", http.MethodPut, "", "", []byte(`{"data":{"` + marker + `":"x"}}`), nil},
		{"YAML: the marker as a data key", http.MethodPut, "application/yaml", "", []byte("kind: ConfigMap\ndata:\n  " + marker + ": x\n"), nil},
		{"protobuf: a ConfigMap with the marker as a label and data key", http.MethodPut, mediaProtobuf, "", protobufBody(t, configMap), nil},
		{"merge patch removing the marker", http.MethodPatch, mergePatch, "", []byte(`{"metadata":{"annotations":{"` + marker + `":null}}}`), nil},
		{"strategic merge patch removing the marker", http.MethodPatch, strategicPatch, "", []byte(`{"metadata":{"annotations":{"` + marker + `":null}}}`), nil},
		{"JSON Patch removing the marker", http.MethodPatch, jsonPatch, "", []byte(`[{"op":"remove","path":"/metadata/annotations/` + escaped + `"}]`), nil},
		{"JSON Patch adding another annotation (~0 escape)", http.MethodPatch, jsonPatch, "", []byte(`[{"op":"add","path":"/metadata/annotations/kinformer.io~01projection","value":"x"}]`), nil},
		{"JSON Patch testing the marker", http.MethodPatch, jsonPatch, "", []byte(`[{"op":"test","path":"/metadata/annotations/` + escaped + `","value":"abc"}]`), nil},

		{"JSON: a projected object", http.MethodPut, "application/json", "", []byte(`{"metadata":{"name":"a","annotations":{"` + marker + `":"abc"}}}`), ErrProjectedWrite},
		{"YAML: a projected object", http.MethodPost, "application/yaml", "", []byte("metadata:\n  annotations:\n    " + marker + ": abc\n"), ErrProjectedWrite},
		{"protobuf: a projected pod", http.MethodPut, mediaProtobuf, "", protobufBody(t, markedPod), ErrProjectedWrite},
		{"apply patch of a projected object", http.MethodPatch, applyYAML, "", []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  annotations:\n    " + marker + ": abc\n"), ErrProjectedWrite},
		{"merge patch setting the marker", http.MethodPatch, mergePatch, "", []byte(`{"metadata":{"annotations":{"` + marker + `":"abc"}}}`), ErrProjectedWrite},
		{"strategic merge patch replacing the annotations", http.MethodPatch, strategicPatch, "", []byte(`{"metadata":{"annotations":{"$patch":"replace","` + marker + `":"abc"}}}`), ErrProjectedWrite},
		{"JSON Patch adding the marker", http.MethodPatch, jsonPatch, "", []byte(`[{"op":"add","path":"/metadata/annotations/` + escaped + `","value":"abc"}]`), ErrProjectedWrite},
		{"JSON Patch copying into the marker", http.MethodPatch, jsonPatch, "", []byte(`[{"op":"copy","from":"/metadata/labels/x","path":"/metadata/annotations/` + escaped + `"}]`), ErrProjectedWrite},
		{"JSON Patch replacing the annotations", http.MethodPatch, jsonPatch, "", []byte(`[{"op":"replace","path":"/metadata/annotations","value":{"` + marker + `":"abc"}}]`), ErrProjectedWrite},
		{"JSON Patch replacing the metadata", http.MethodPatch, jsonPatch, "", []byte(`[{"op":"replace","path":"/metadata","value":{"annotations":{"` + marker + `":"abc"}}}]`), ErrProjectedWrite},
		{"JSON Patch replacing the whole object", http.MethodPatch, jsonPatch, "", []byte(`[{"op":"replace","path":"","value":{"metadata":{"annotations":{"` + marker + `":"abc"}}}}]`), ErrProjectedWrite},

		{"JSON Patch moving a value it added into the annotations", http.MethodPatch, jsonPatch, "", []byte(`[{"op":"add","path":"/spec/x","value":{"` + marker + `":"abc"}},{"op":"move","from":"/spec/x","path":"/metadata/annotations"}]`), ErrUndecodableWrite},
		{"JSON Patch copying into the metadata", http.MethodPatch, jsonPatch, "", []byte(`[{"op":"copy","from":"/spec/template/metadata","path":"/metadata"}]`), ErrUndecodableWrite},
		{"a compressed body", http.MethodPut, "application/json", "gzip", []byte(`{"metadata":{"name":"a"}}`), ErrUndecodableWrite},
		{"JSON cut short", http.MethodPut, "application/json", "", []byte(`{"metadata":`), ErrUndecodableWrite},
		{"protobuf of a kind Guard does not know", http.MethodPut, mediaProtobuf, "", unknownKind, ErrUndecodableWrite},
		{"a patch of an unknown type", http.MethodPatch, "text/plain", "", []byte(`{}`), ErrUndecodableWrite},
		{"a JSON Patch that is not a list of operations", http.MethodPatch, jsonPatch, "", []byte(`{"op":"add"}`), ErrUndecodableWrite},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sent [][]byte
			g := Guard(roundTripFunc(func(r *http.Request) (*http.Response, error) {
				b, err := io.ReadAll(r.Body)
				require.NoError(t, err)
				sent = append(sent, b)
				return answer(http.StatusOK, "application/json", "{}"), nil
			}))
			u, _ := url.Parse("https://h/api/v1/namespaces/ns/pods/a")
			req := &http.Request{Method: tc.method, URL: u, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(tc.body)), ContentLength: int64(len(tc.body))}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			if tc.encoding != "" {
				req.Header.Set("Content-Encoding", tc.encoding)
			}
			_, err := g.RoundTrip(req)
			if tc.want == nil {
				require.NoError(t, err)
				assert.Equal(t, [][]byte{tc.body}, sent)
				return
			}
			require.ErrorIs(t, err, tc.want)
			assert.Empty(t, sent, "a refused write reached the server")
		})
	}
}

// protobufBody encodes the core/v1 object obj in protobuf, as a typed
// client sends it (its kind in the envelope).
func protobufBody(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	encoder := scheme.Codecs.EncoderForVersion(k8sprotobuf.NewSerializer(scheme.Scheme, scheme.Scheme), corev1.SchemeGroupVersion)
	b, err := runtime.Encode(encoder, obj)
	require.NoError(t, err)
	return b
}

// TestCheckMarkedNamesTheObjectWithoutItsContent: CheckMarked accepts an
// object carrying the projection's marker, and refuses, with
// ErrUnmarkedObject naming the type and key (never the content), one
// without a marker or with another projection's.
func TestCheckMarkedNamesTheObjectWithoutItsContent(t *testing.T) {
	p := MustNew("spec.nodeName")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"secret": "s3cr3t"}}}
	marked, err := p.Apply(pod)
	require.NoError(t, err)
	require.NoError(t, p.CheckMarked(marked))

	err = p.CheckMarked(pod)
	require.ErrorIs(t, err, ErrUnmarkedObject)
	assert.Equal(t, "projection: object without the projection's marker annotation: *v1.Pod ns/a (a transform removed it?)", err.Error())

	other := MustNew("spec.hostname")
	err = other.CheckMarked(marked)
	require.ErrorIs(t, err, ErrUnmarkedObject)
	assert.Contains(t, err.Error(), "carries the marker of projection "+p.Fingerprint())
	assert.NotContains(t, err.Error(), "s3cr3t")
}
