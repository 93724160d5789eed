package projection

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
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
