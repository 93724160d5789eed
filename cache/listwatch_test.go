package cache

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	restfake "k8s.io/client-go/rest/fake"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

type ctxKey struct{}

// listWatchCalls records which function of a ListWatch ran and with which context.
type listWatchCalls struct {
	mu    sync.Mutex
	calls []string
}

func (c *listWatchCalls) add(name string, ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ctx != nil && ctx.Value(ctxKey{}) != nil {
		name += "+ctx"
	}
	c.calls = append(c.calls, name)
}

func newCountingListWatch(c *listWatchCalls, plainList, ctxList, plainWatch, ctxWatch bool) *ListWatch {
	lw := &ListWatch{}
	if plainList {
		lw.ListFunc = func(metav1.ListOptions) (runtime.Object, error) { c.add("ListFunc", nil); return &v1.PodList{}, nil }
	}
	if ctxList {
		lw.ListWithContextFunc = func(ctx context.Context, _ metav1.ListOptions) (runtime.Object, error) {
			c.add("ListWithContextFunc", ctx)
			return &v1.PodList{}, nil
		}
	}
	if plainWatch {
		lw.WatchFunc = func(metav1.ListOptions) (watch.Interface, error) {
			c.add("WatchFunc", nil)
			return watch.NewEmptyWatch(), nil
		}
	}
	if ctxWatch {
		lw.WatchFuncWithContext = func(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
			c.add("WatchFuncWithContext", ctx)
			return watch.NewEmptyWatch(), nil
		}
	}
	return lw
}

func TestListWatchDispatch(t *testing.T) {
	ctx := context.WithValue(context.Background(), ctxKey{}, true)
	cases := []struct {
		name        string
		plain, wctx bool
		want        []string // List, ListWithContext, Watch, WatchWithContext
	}{
		{"only context functions", false, true, []string{"ListWithContextFunc", "ListWithContextFunc+ctx", "WatchFuncWithContext", "WatchFuncWithContext+ctx"}},
		{"only plain functions", true, false, []string{"ListFunc", "ListFunc", "WatchFunc", "WatchFunc"}},
		{"both", true, true, []string{"ListFunc", "ListWithContextFunc+ctx", "WatchFunc", "WatchFuncWithContext+ctx"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c listWatchCalls
			lw := newCountingListWatch(&c, tc.plain, tc.wctx, tc.plain, tc.wctx)
			_, err := lw.List(metav1.ListOptions{})
			require.NoError(t, err)
			_, err = lw.ListWithContext(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			_, err = lw.Watch(metav1.ListOptions{})
			require.NoError(t, err)
			_, err = lw.WatchWithContext(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.calls)
		})
	}
}

func TestListWatchWithoutFunctions(t *testing.T) {
	lw := &ListWatch{}
	_, err := lw.List(metav1.ListOptions{})
	assert.ErrorIs(t, err, errListWatchNoList)
	_, err = lw.ListWithContext(context.Background(), metav1.ListOptions{})
	assert.ErrorIs(t, err, errListWatchNoList)
	_, err = lw.Watch(metav1.ListOptions{})
	assert.ErrorIs(t, err, errListWatchNoWatch)
	_, err = lw.WatchWithContext(context.Background(), metav1.ListOptions{})
	assert.ErrorIs(t, err, errListWatchNoWatch)
}

// listWatchMethodsOnly implements only the context-free interfaces.
type listWatchMethodsOnly struct {
	c           *listWatchCalls
	noWatchList bool
}

func (p listWatchMethodsOnly) List(metav1.ListOptions) (runtime.Object, error) {
	p.c.add("List", nil)
	return &v1.PodList{}, nil
}

func (p listWatchMethodsOnly) Watch(metav1.ListOptions) (watch.Interface, error) {
	p.c.add("Watch", nil)
	return watch.NewEmptyWatch(), nil
}

func (p listWatchMethodsOnly) IsWatchListSemanticsUnSupported() bool { return p.noWatchList }

func TestToWithContextAdapters(t *testing.T) {
	ctx := context.Background()
	var c listWatchCalls
	plain := listWatchMethodsOnly{c: &c, noWatchList: true}

	l := ToListerWithContext(plain)
	_, err := l.ListWithContext(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	w := ToWatcherWithContext(plain)
	_, err = w.WatchWithContext(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	lw := ToListerWatcherWithContext(plain)
	_, err = lw.ListWithContext(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	_, err = lw.WatchWithContext(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"List", "Watch", "List", "Watch"}, c.calls)
	unsupported, ok := lw.(interface{ IsWatchListSemanticsUnSupported() bool })
	require.True(t, ok, "the adapter keeps the WatchList capability")
	assert.True(t, unsupported.IsWatchListSemanticsUnSupported())

	// Context-aware values are returned as they are.
	full := &ListWatch{}
	assert.Same(t, full, ToListerWithContext(full))
	assert.Same(t, full, ToWatcherWithContext(full))
	assert.Same(t, full, ToListerWatcherWithContext(full))

	assert.Nil(t, ToListerWithContext(nil))
	assert.Nil(t, ToWatcherWithContext(nil))
	assert.Nil(t, ToListerWatcherWithContext(nil))
}

func TestToListWatcherWithWatchListSemantics(t *testing.T) {
	var c listWatchCalls
	base := newCountingListWatch(&c, false, true, false, true)
	cases := []struct {
		name   string
		client any
		want   bool
	}{
		{"fake clientset", fake.NewSimpleClientset(), true}, //nolint:staticcheck // cheap fake, see TestReflectorWithFakeClientset
		{"client that supports it", fakeapi.New(), false},
		{"client that says it does not", fakeapi.New().WithoutWatchList(), true},
		{"client without the method", struct{}{}, false},
		{"nil client", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lw := ToListWatcherWithWatchListSemantics(base, tc.client)
			got, ok := lw.(interface{ IsWatchListSemanticsUnSupported() bool })
			require.True(t, ok)
			assert.Equal(t, tc.want, got.IsWatchListSemanticsUnSupported())
			_, err := lw.List(metav1.ListOptions{})
			require.NoError(t, err)
			_, err = ToListerWatcherWithContext(lw).WatchWithContext(context.Background(), metav1.ListOptions{})
			require.NoError(t, err)
		})
	}
}

// restServer answers a fake REST client: lists with a PodList, watches
// with one ADDED event; it records the requests.
type restServer struct {
	mu   sync.Mutex
	reqs []*url.URL
}

func (s *restServer) client(t *testing.T) *restfake.RESTClient {
	codec := scheme.Codecs.LegacyCodec(v1.SchemeGroupVersion)
	return &restfake.RESTClient{
		NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		GroupVersion:         v1.SchemeGroupVersion,
		Client: restfake.CreateHTTPClient(func(req *http.Request) (*http.Response, error) {
			s.mu.Lock()
			s.reqs = append(s.reqs, req.URL)
			s.mu.Unlock()
			header := http.Header{"Content-Type": []string{runtime.ContentTypeJSON}}
			if req.URL.Query().Get("watch") == "true" {
				pod, err := runtime.Encode(codec, newPod("w", "9"))
				require.NoError(t, err)
				body := []byte(`{"type":"ADDED","object":` + string(pod) + "}\n")
				return &http.Response{StatusCode: http.StatusOK, Header: header, Body: io.NopCloser(bytes.NewReader(body))}, nil
			}
			list, err := runtime.Encode(codec, newPodList("8", "", newPod("a", "7")))
			require.NoError(t, err)
			return &http.Response{StatusCode: http.StatusOK, Header: header, Body: io.NopCloser(bytes.NewReader(list))}, nil
		}),
	}
}

func (s *restServer) requests() []*url.URL {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*url.URL(nil), s.reqs...)
}

func TestNewListWatchFromClient(t *testing.T) {
	cases := []struct {
		name      string
		build     func(c Getter) *ListWatch
		namespace string
		wantQuery map[string]string
	}{
		{
			name: "field selector",
			build: func(c Getter) *ListWatch {
				return NewListWatchFromClient(c, "pods", "ns", fields.OneTermEqualSelector("spec.nodeName", "n1"))
			},
			namespace: "ns",
			wantQuery: map[string]string{"fieldSelector": "spec.nodeName=n1"},
		},
		{
			name: "everything, all namespaces",
			build: func(c Getter) *ListWatch {
				return NewListWatchFromClient(c, "pods", metav1.NamespaceAll, fields.Everything())
			},
			wantQuery: map[string]string{"fieldSelector": ""},
		},
		{
			name: "nil field selector",
			build: func(c Getter) *ListWatch {
				return NewListWatchFromClient(c, "pods", metav1.NamespaceAll, nil)
			},
			wantQuery: map[string]string{"fieldSelector": ""},
		},
		{
			name: "options modifier",
			build: func(c Getter) *ListWatch {
				return NewFilteredListWatchFromClient(c, "pods", "ns", func(o *metav1.ListOptions) { o.LabelSelector = "app=x" })
			},
			namespace: "ns",
			wantQuery: map[string]string{"labelSelector": "app=x"},
		},
		{
			name: "nil options modifier",
			build: func(c Getter) *ListWatch {
				return NewFilteredListWatchFromClient(c, "pods", "ns", nil)
			},
			namespace: "ns",
			wantQuery: map[string]string{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var srv restServer
			lw := tc.build(srv.client(t))
			require.NotNil(t, lw.ListFunc)
			require.NotNil(t, lw.WatchFunc)
			require.NotNil(t, lw.ListWithContextFunc)
			require.NotNil(t, lw.WatchFuncWithContext)

			opts := metav1.ListOptions{ResourceVersion: "5", Limit: 10}
			obj, err := lw.ListWithContext(context.Background(), opts)
			require.NoError(t, err)
			assert.Equal(t, "8", obj.(*v1.PodList).ResourceVersion)
			_, err = lw.List(opts)
			require.NoError(t, err)

			for _, start := range []func() (watch.Interface, error){
				func() (watch.Interface, error) { return lw.WatchWithContext(context.Background(), opts) },
				func() (watch.Interface, error) { return lw.Watch(opts) },
			} {
				w, err := start()
				require.NoError(t, err)
				ev, ok := <-w.ResultChan()
				require.True(t, ok)
				assert.Equal(t, watch.Added, ev.Type)
				assert.Equal(t, "w", ev.Object.(*v1.Pod).Name)
				w.Stop()
			}

			reqs := srv.requests()
			require.Len(t, reqs, 4)
			wantPath := "/pods"
			if tc.namespace != "" {
				wantPath = "/namespaces/" + tc.namespace + "/pods"
			}
			for i, u := range reqs {
				assert.Equal(t, wantPath, u.Path)
				q := u.Query()
				assert.Equal(t, "5", q.Get("resourceVersion"))
				assert.Equal(t, "10", q.Get("limit"))
				for k, v := range tc.wantQuery {
					assert.Equal(t, v, q.Get(k), "query %s", k)
				}
				if i < 2 {
					assert.Empty(t, q.Get("watch"), "list request")
				} else {
					assert.Equal(t, "true", q.Get("watch"), "watch request")
				}
			}
			assert.Equal(t, metav1.ListOptions{ResourceVersion: "5", Limit: 10}, opts, "the caller's options are not changed")
		})
	}
}
