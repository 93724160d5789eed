package unstructuredjson

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// dynamicJSON returns the JSON serializer of client-go's dynamic client.
func dynamicJSON(t *testing.T) runtime.Serializer {
	for _, info := range dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer.SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeJSON {
			return info.Serializer
		}
	}
	t.Fatal("the dynamic client has no JSON serializer")
	return nil
}

// requireSameSerializerDecoding decodes data with the dynamic client's JSON
// serializer and with jsonSerializer, into nil, a new Unstructured and a new
// UnstructuredList, and requires the same outcomes.
func requireSameSerializerDecoding(t *testing.T, base runtime.Serializer, data []byte) {
	t.Helper()
	ours := jsonSerializer{base: base}
	targets := []func() runtime.Object{
		func() runtime.Object { return nil },
		func() runtime.Object { return &unstructured.Unstructured{} },
		func() runtime.Object { return &unstructured.UnstructuredList{} },
	}
	for _, target := range targets {
		wantObj, wantGVK, wantErr := base.Decode(data, nil, target())
		gotObj, gotGVK, gotErr := ours.Decode(data, nil, target())
		if wantErr != nil || gotErr != nil {
			require.Errorf(t, gotErr, "into %T: client-go fails with %v, kinformer decodes %q", target(), wantErr, data)
			require.Errorf(t, wantErr, "into %T: kinformer fails with %v, client-go decodes %q", target(), gotErr, data)
			continue
		}
		if !reflect.DeepEqual(wantObj, gotObj) || !reflect.DeepEqual(wantGVK, gotGVK) {
			require.Equal(t, wantObj, gotObj, "into %T: %q", target(), data)
			require.Equal(t, wantGVK, gotGVK, "into %T: %q", target(), data)
			t.Fatalf("into %T: decoded differently (values print alike): %q", target(), data)
		}
	}
}

func TestJSONSerializerDecodesAsTheDynamicClients(t *testing.T) {
	base := dynamicJSON(t)
	extra := []string{
		`{"kind":"Status","apiVersion":"v1","status":"Failure","code":410,"reason":"Expired"}`,
		`{"kind":"WatchEvent","apiVersion":"v1","type":"ADDED","object":{}}`,
		`{"kind":"Pod","apiVersion":"a/b/c"}`,
		`{"kind":"Pod"}`,
		`{"apiVersion":"v1"}`,
		`{"KIND":"Pod","apiVersion":"v1"}`,
		`{"kind":"Pod","ApiVersion":"v1"}`,
		`{"kind":"Pod","apiVersion":5}`,
		`{"kind":null,"apiVersion":"v1"}`,
		`{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"}}],"metadata":{"resourceVersion":"7"}}`,
		`{"kind":"PodList","apiVersion":"v1","items":null}`,
	}
	for _, c := range append(edgeCases(), extra...) {
		requireSameSerializerDecoding(t, base, []byte(c))
	}
}

// podServer answers a dynamic client's LIST and WATCH of pods in namespace
// ns with fixed JSON, recording each request's method, URL and headers.
type podServer struct {
	mu       sync.Mutex
	requests []string
}

const (
	testList   = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[{"metadata":{"name":"a","namespace":"ns","labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]},"status":{"phase":"Running","n":1.5}},{"metadata":{"name":"b","namespace":"ns"},"spec":{"priority":1e3}}]}`
	testEvents = `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"c","namespace":"ns","resourceVersion":"11"}}}
{"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"c","namespace":"ns","resourceVersion":"12","annotations":{"k":"v"}}}}
{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"13"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version","reason":"Expired","code":410}}
`
)

func (s *podServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, fmt.Sprintf("%s %s accept=%q content-type=%q", r.Method, r.URL, r.Header.Get("Accept"), r.Header.Get("Content-Type")))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Get("watch") == "true" {
		_, _ = w.Write([]byte(testEvents))
		return
	}
	_, _ = w.Write([]byte(testList))
}

func (s *podServer) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.requests
	s.requests = nil
	return out
}

func TestClientListsAndWatchesAsTheDynamicClient(t *testing.T) {
	srv := &podServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	config := &rest.Config{Host: ts.URL}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	opts := metav1.ListOptions{LabelSelector: "app=x", ResourceVersion: "5", Limit: 100, AllowWatchBookmarks: true}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	dc, err := dynamic.NewForConfig(config)
	require.NoError(t, err)
	wantList, err := dc.Resource(gvr).Namespace("ns").List(ctx, opts)
	require.NoError(t, err)
	wantWatch, err := dc.Resource(gvr).Namespace("ns").Watch(ctx, opts)
	require.NoError(t, err)
	wantEvents := drain(t, wantWatch)
	wantRequests := srv.take()

	c, err := NewClient(config)
	require.NoError(t, err)
	gotList, err := c.List(ctx, gvr, "ns", opts)
	require.NoError(t, err)
	gotWatch, err := c.Watch(ctx, gvr, "ns", opts)
	require.NoError(t, err)
	gotEvents := drain(t, gotWatch)
	gotRequests := srv.take()

	require.Equal(t, wantList, gotList)
	require.Equal(t, wantEvents, gotEvents)
	require.Len(t, gotEvents, 4)
	require.IsType(t, &metav1.Status{}, gotEvents[3].Object, "an ERROR event's Status keeps its own type")
	require.Equal(t, wantRequests, gotRequests)

	_, err = c.List(ctx, gvr, "bad/ns", opts)
	require.Error(t, err)
}

func drain(t *testing.T, w watch.Interface) []watch.Event {
	t.Helper()
	defer w.Stop()
	var out []watch.Event
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-deadline:
			t.Fatal("the watch did not end")
		}
	}
}
