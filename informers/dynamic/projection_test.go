package dynamicinformer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"

	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
	"github.com/kinformer/kinformer/projection"
)

var projWidgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

var widgetProjection = projection.MustNew("spec.size", "status.phase")

func widget(name, rv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"name": name, "namespace": "ns", "resourceVersion": rv, "uid": "uid-" + name,
			"labels":        map[string]any{"x": "y"},
			"managedFields": []any{map[string]any{"manager": "m"}},
		},
		"spec":   map[string]any{"size": int64(3), "color": "red", "parts": []any{"a", "b"}},
		"status": map[string]any{"phase": "Ready", "message": "all good"},
	}}
}

func projectedWidget(name, rv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"name": name, "namespace": "ns", "resourceVersion": rv, "uid": "uid-" + name,
			"annotations": map[string]any{projection.MarkerAnnotation: widgetProjection.Fingerprint()},
		},
		"spec":   map[string]any{"size": int64(3)},
		"status": map[string]any{"phase": "Ready"},
	}}
}

// widgetServer answers a LIST of widgets in JSON, and holds every WATCH
// open without events, recording the Accept header of each request.
type widgetServer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	accepts []string
}

func newWidgetServer(t *testing.T, items ...*unstructured.Unstructured) *widgetServer {
	s := &widgetServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.accepts = append(s.accepts, r.Header.Get("Accept"))
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "true" {
			if r.URL.Query().Get("sendInitialEvents") == "true" {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400}`)
				return
			}
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "WidgetList", "metadata": map[string]any{"resourceVersion": "10"}}}
		for _, it := range items {
			list.Items = append(list.Items, *it)
		}
		b, err := list.MarshalJSON()
		if err != nil {
			t.Errorf("encoding: %v", err)
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func runWidgetInformer(t *testing.T, client dynamic.Interface, opts ...dynamicinformer.DynamicSharedInformerOption) []any {
	t.Helper()
	f := dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(client, 0, opts...)
	inf := f.ForResource(projWidgetsGVR).Informer()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer func() {
		cancel()
		f.Shutdown()
	}()
	f.Start(ctx.Done())
	require.True(t, f.WaitForCacheSync(ctx.Done())[projWidgetsGVR])
	return inf.GetStore().List()
}

// TestWithProjectionReadsProjectedJSON: through a config, the informer asks
// the server for JSON and holds only the projected fields, marked.
func TestWithProjectionReadsProjectedJSON(t *testing.T) {
	srv := newWidgetServer(t, widget("a", "5"))
	cfg := &rest.Config{Host: srv.srv.URL}
	client, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	got := runWidgetInformer(t, client, dynamicinformer.WithProjection(projWidgetsGVR, widgetProjection, cfg))
	assert.Equal(t, []any{projectedWidget("a", "5")}, got)
	assert.True(t, widgetProjection.SharesMarker(got[0]), "the cached widget's annotations are the projection's shared marker map")
	srv.mu.Lock()
	defer srv.mu.Unlock()
	require.NotEmpty(t, srv.accepts)
	for _, a := range srv.accepts {
		assert.Equal(t, "application/json", a)
	}
}

// TestWithProjectionOnFakeDynamicClient: without a config the factory's
// client is used and its objects are projected once decoded.
func TestWithProjectionOnFakeDynamicClient(t *testing.T) {
	scheme := runtime.NewScheme()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme,
		map[schema.GroupVersionResource]string{projWidgetsGVR: "WidgetList"}, widget("a", "5"))
	got := runWidgetInformer(t, client, dynamicinformer.WithProjection(projWidgetsGVR, widgetProjection, nil))
	require.Len(t, got, 1)
	u := got[0].(*unstructured.Unstructured)
	want := projectedWidget("a", u.GetResourceVersion())
	assert.Equal(t, want, u)
	assert.True(t, widgetProjection.SharesMarker(u), "the cached widget's annotations are the projection's shared marker map")
}
