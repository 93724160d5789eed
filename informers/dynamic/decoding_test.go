package dynamicinformer_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
)

// jsonPodServer answers LIST and WATCH of pods in JSON: three pods, then one
// MODIFIED event per watch; it refuses streaming lists, and records every
// request's method and URL (without the random watch timeout).
type jsonPodServer struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []string
}

func newJSONPodServer(t *testing.T) *jsonPodServer {
	s := &jsonPodServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

const decodingPod = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"%s","namespace":"ns","resourceVersion":"%d","labels":{"app":"x"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}],"priority":1e3},"status":{"phase":"Running","ratio":0.5}}`

func (s *jsonPodServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	// The watch timeout is random; the rest of the request is compared.
	q := r.URL.Query()
	q.Del("timeoutSeconds")
	s.requests = append(s.requests, r.Method+" "+r.URL.Path+"?"+q.Encode())
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Get("sendInitialEvents") == "true" {
		// No streaming lists: both sides fall back to LIST and WATCH.
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400}`)
		return
	}
	if r.URL.Query().Get("watch") == "true" {
		fmt.Fprintf(w, `{"type":"MODIFIED","object":`+decodingPod+"}\n", "b", 11)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	items := make([]string, 3)
	for i := range items {
		items[i] = fmt.Sprintf(decodingPod, string(rune('a'+i)), 5+i)
	}
	fmt.Fprintf(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[%s]}`, strings.Join(items, ","))
}

func (s *jsonPodServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// syncedPods runs factory's pod informer until it holds pod b at
// resourceVersion 11, and returns its objects by name.
func syncedPods(t *testing.T, factory dynamicinformer.DynamicSharedInformerFactory) map[string]*unstructured.Unstructured {
	t.Helper()
	inf := factory.ForResource(podsGVR).Informer()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); factory.Shutdown() })
	factory.Start(ctx.Done())
	require.Eventually(t, func() bool {
		obj, ok, err := inf.GetStore().GetByKey("ns/b")
		return err == nil && ok && obj.(*unstructured.Unstructured).GetResourceVersion() == "11"
	}, time.Minute, 5*time.Millisecond)
	out := map[string]*unstructured.Unstructured{}
	for _, obj := range inf.GetStore().List() {
		u := obj.(*unstructured.Unstructured)
		out[u.GetName()] = u
	}
	return out
}

// sharesKeys reports whether two decoded objects' "metadata" keys are one
// string, as kinformer's decoder shares keys and apimachinery's does not.
func sharesKeys(a, b *unstructured.Unstructured) bool {
	key := func(u *unstructured.Unstructured) *byte {
		for k := range u.Object {
			if k == "metadata" {
				return unsafe.StringData(k)
			}
		}
		return nil
	}
	return key(a) == key(b)
}

func TestWithRESTConfigDecodesWithKinformersDecoderGivingTheSameObjects(t *testing.T) {
	srv := newJSONPodServer(t)
	config := &rest.Config{Host: srv.srv.URL}
	client, err := dynamic.NewForConfig(config)
	require.NoError(t, err)

	plain := syncedPods(t, dynamicinformer.NewDynamicSharedInformerFactory(client, 0))
	plainRequests := srv.seen()
	fast := syncedPods(t, dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(client, 0, dynamicinformer.WithRESTConfig(config)))
	optedOut := syncedPods(t, dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(client, 0,
		dynamicinformer.WithRESTConfig(config), dynamicinformer.WithAPIMachineryDecoding(podsGVR)))
	all := srv.seen()

	require.Equal(t, plain, fast)
	require.Equal(t, plain, optedOut)
	require.False(t, sharesKeys(plain["a"], plain["c"]), "apimachinery's decoder shares no keys")
	require.True(t, sharesKeys(fast["a"], fast["c"]), "WithRESTConfig's informer did not decode with kinformer's decoder")
	require.False(t, sharesKeys(optedOut["a"], optedOut["c"]), "WithAPIMachineryDecoding's informer decoded with kinformer's decoder")

	// The same requests, in the same order, from each factory.
	n := len(plainRequests)
	require.Equal(t, 3*n, len(all), "%v", all)
	sortedEach := func(r []string) []string { r = append([]string(nil), r...); sort.Strings(r); return r }
	require.Equal(t, sortedEach(plainRequests), sortedEach(all[n:2*n]))
	require.Equal(t, sortedEach(plainRequests), sortedEach(all[2*n:]))
}
