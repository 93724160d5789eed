package informers_test

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
)

const (
	mediaJSON         = "application/json"
	mediaProtobuf     = "application/vnd.kubernetes.protobuf"
	serverWaitTimeout = 30 * time.Second
)

// seenRequest is what the test server saw of one request.
type seenRequest struct {
	method string
	kind   string // "list", "watch" or "watchlist"
	path   string
	accept string
	// served is the media type the server answered in.
	served string
	query  string
}

// podServer speaks the API server's LIST and WATCH of pods in JSON and
// protobuf. It answers in protobuf when the request's Accept header names it
// and jsonOnly is false, else in JSON. Watches receive the events pushed with
// send; a streaming list (sendInitialEvents=true) is served when streaming is
// set (the listed pods as ADDED events, then the initial-events-end bookmark)
// and refused with 400 otherwise.
type podServer struct {
	t         *testing.T
	srv       *httptest.Server
	jsonOnly  bool
	streaming bool
	pods      []*corev1.Pod
	rv        string
	// warning, when set, is sent as a Warning header with every answer.
	warning string

	mu       sync.Mutex
	requests []seenRequest
	watchers []chan watch.Event
	closing  chan struct{}
}

func newPodServer(t *testing.T, jsonOnly, streaming bool, rv string, pods ...*corev1.Pod) *podServer {
	s := &podServer{t: t, jsonOnly: jsonOnly, streaming: streaming, pods: pods, rv: rv, closing: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		close(s.closing)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
	return s
}

// clientset returns a real clientset for the server, configured for
// contentType ("" leaves client-go's default).
func (s *podServer) clientset(t *testing.T, contentType string) *kubernetes.Clientset {
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.srv.URL, ContentConfig: rest.ContentConfig{ContentType: contentType}})
	require.NoError(t, err)
	return cs
}

// writes returns the requests seen that were no GET.
func (s *podServer) writes() []seenRequest {
	var out []seenRequest
	for _, r := range s.seen() {
		if r.method != http.MethodGet {
			out = append(out, r)
		}
	}
	return out
}

func (s *podServer) seen() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.requests...)
}

// send delivers ev to every open watch, each its own copy of the object
// (encoding sets its kind), and reports how many there were.
func (s *podServer) send(ev watch.Event) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watchers {
		w <- watch.Event{Type: ev.Type, Object: ev.Object.DeepCopyObject()}
	}
	return len(s.watchers)
}

func (s *podServer) openWatches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watchers)
}

func (s *podServer) serializer(media string) runtime.SerializerInfo {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), media)
	if !ok {
		s.t.Errorf("no serializer for %s", media)
	}
	return info
}

func (s *podServer) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	media := mediaJSON
	if !s.jsonOnly && strings.Contains(r.Header.Get("Accept"), mediaProtobuf) {
		media = mediaProtobuf
	}
	kind := "list"
	if q.Get("watch") == "true" {
		kind = "watch"
		if q.Get("sendInitialEvents") == "true" {
			kind = "watchlist"
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, seenRequest{method: r.Method, kind: kind, path: r.URL.Path, accept: r.Header.Get("Accept"), served: media, query: r.URL.RawQuery})
	s.mu.Unlock()

	if s.warning != "" {
		w.Header().Add("Warning", `299 - "`+s.warning+`"`)
	}
	info := s.serializer(media)
	encoder := scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
	switch kind {
	case "list":
		list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: s.rv}}
		for _, p := range s.pods {
			list.Items = append(list.Items, *p)
		}
		b, err := runtime.Encode(encoder, list)
		if err != nil {
			s.t.Errorf("encoding the list: %v", err)
		}
		w.Header().Set("Content-Type", media)
		_, _ = w.Write(b)
		return
	case "watchlist":
		if !s.streaming {
			w.Header().Set("Content-Type", mediaJSON)
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"no streaming lists here","reason":"BadRequest","code":400}`)
			return
		}
	}

	ch := make(chan watch.Event, 100)
	s.mu.Lock()
	s.watchers = append(s.watchers, ch)
	s.mu.Unlock()
	ct := media
	if media == mediaProtobuf {
		ct += ";stream=watch"
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	frames := info.StreamSerializer.Framer.NewFrameWriter(w)
	flusher := w.(http.Flusher)
	write := func(ev watch.Event) bool {
		obj, err := runtime.Encode(encoder, ev.Object)
		if err != nil {
			s.t.Errorf("encoding a watch event: %v", err)
			return false
		}
		out := &metav1.WatchEvent{Type: string(ev.Type), Object: runtime.RawExtension{Raw: obj}}
		if err := info.StreamSerializer.Serializer.Encode(out, frames); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	if kind == "watchlist" {
		for _, p := range s.pods {
			if !write(watch.Event{Type: watch.Added, Object: p}) {
				return
			}
		}
		bookmark := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: s.rv, Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
		if !write(watch.Event{Type: watch.Bookmark, Object: bookmark}) {
			return
		}
	} else {
		flusher.Flush()
	}
	for {
		select {
		case ev := <-ch:
			if !write(ev) {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
}

func servedPod(ns, name, rv string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, Labels: lbls, UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}
}

// storeState returns the store as key -> resourceVersion/label "v".
func storeState(store cache.Store) map[string]string {
	out := map[string]string{}
	for _, obj := range store.List() {
		p := obj.(*corev1.Pod)
		out[p.Namespace+"/"+p.Name] = p.ResourceVersion + "/" + p.Labels["v"] + "/" + p.Spec.NodeName
	}
	return out
}

// runPodInformer starts cs's factory pod informer (with opts) and waits for it to
// sync.
func runPodInformer(t *testing.T, cs kubernetes.Interface, opts ...informers.SharedInformerOption) cache.SharedIndexInformer {
	t.Helper()
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, opts...)
	inf := factory.Core().V1().Pods().Informer()
	startSynced(t, factory)
	return inf
}

func firstMediaType(accept string) string {
	first, _, _ := strings.Cut(accept, ",")
	m, _, err := mime.ParseMediaType(strings.TrimSpace(first))
	if err != nil {
		return first
	}
	return m
}

// TestFactoryAsksForProtobuf runs the factory's pod informer over a real
// clientset configured for JSON (and left on its default) against a server
// speaking protobuf: every LIST and WATCH asks for protobuf first, the server
// answers protobuf, and the store follows the listed pods and the watch
// events exactly. With streaming on, the initial state comes from a protobuf
// streaming list and no LIST is made.
func TestFactoryAsksForProtobuf(t *testing.T) {
	for _, tc := range []struct {
		name        string
		contentType string
		streaming   bool
		namespace   string
	}{
		{"json-config/list", mediaJSON, false, ""},
		{"json-config/streaming-list", mediaJSON, true, ""},
		{"default-config/list", "", false, ""},
		{"json-config/namespace", mediaJSON, false, "team-a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newPodServer(t, false, tc.streaming, "10",
				servedPod("team-a", "a", "5", map[string]string{"v": "1"}),
				servedPod("team-b", "b", "6", map[string]string{"v": "1"}))
			var opts []informers.SharedInformerOption
			opts = append(opts, informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "v" }))
			if tc.namespace != "" {
				opts = append(opts, informers.WithNamespace(tc.namespace))
			}
			inf := runPodInformer(t, srv.clientset(t, tc.contentType), opts...)
			assert.Equal(t, map[string]string{"team-a/a": "5/1/node-1", "team-b/b": "6/1/node-1"}, storeState(inf.GetStore()),
				"the server serves both pods whatever the namespace; the store holds what was served")

			require.Eventually(t, func() bool { return srv.openWatches() == 1 }, serverWaitTimeout, time.Millisecond)
			upd := servedPod("team-a", "a", "11", map[string]string{"v": "2"})
			upd.Spec.NodeName = "node-2"
			srv.send(watch.Event{Type: watch.Modified, Object: upd})
			srv.send(watch.Event{Type: watch.Added, Object: servedPod("team-a", "c", "12", map[string]string{"v": "1"})})
			srv.send(watch.Event{Type: watch.Deleted, Object: servedPod("team-b", "b", "13", map[string]string{"v": "1"})})
			want := map[string]string{"team-a/a": "11/2/node-2", "team-a/c": "12/1/node-1"}
			require.Eventually(t, func() bool {
				return assert.ObjectsAreEqual(want, storeState(inf.GetStore()))
			}, serverWaitTimeout, time.Millisecond, "store: %v", storeState(inf.GetStore()))

			reqs := srv.seen()
			kinds := map[string]int{}
			for _, r := range reqs {
				kinds[r.kind]++
				assert.Equal(t, mediaProtobuf, firstMediaType(r.accept), "%s %s asked for %q", r.kind, r.path, r.accept)
				assert.Contains(t, r.accept, mediaJSON, "JSON must stay acceptable")
				assert.Equal(t, mediaProtobuf, r.served)
				assert.Contains(t, r.query, "labelSelector=v", "tweakListOptions must reach the server")
				wantPath := "/api/v1/pods"
				if tc.namespace != "" {
					wantPath = "/api/v1/namespaces/" + tc.namespace + "/pods"
				}
				assert.Equal(t, wantPath, r.path)
			}
			if tc.streaming {
				assert.Equal(t, map[string]int{"watchlist": 1}, kinds)
			} else {
				// Without server support the reflector first tries a streaming
				// list (refused with 400), then lists and watches.
				assert.Equal(t, 1, kinds["list"], "requests: %+v", reqs)
				assert.Equal(t, 1, kinds["watch"], "requests: %+v", reqs)
			}
		})
	}
}

// TestFactoryDecodesJSONFromServersWithoutProtobuf checks that a server that
// answers JSON to the protobuf-first Accept header (as servers without
// protobuf support and custom resources do) still syncs and watches.
func TestFactoryDecodesJSONFromServersWithoutProtobuf(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			srv := newPodServer(t, true, streaming, "10", servedPod("ns", "a", "5", map[string]string{"v": "1"}))
			inf := runPodInformer(t, srv.clientset(t, mediaProtobuf))
			assert.Equal(t, map[string]string{"ns/a": "5/1/node-1"}, storeState(inf.GetStore()))
			require.Eventually(t, func() bool { return srv.openWatches() == 1 }, serverWaitTimeout, time.Millisecond)
			srv.send(watch.Event{Type: watch.Modified, Object: servedPod("ns", "a", "11", map[string]string{"v": "2"})})
			require.Eventually(t, func() bool {
				return assert.ObjectsAreEqual(map[string]string{"ns/a": "11/2/node-1"}, storeState(inf.GetStore()))
			}, serverWaitTimeout, time.Millisecond)
			for _, r := range srv.seen() {
				assert.Equal(t, mediaProtobuf, firstMediaType(r.accept))
				assert.Equal(t, mediaJSON, r.served)
			}
		})
	}
}

// wrappedClientset is a kubernetes.Interface wrapping a real clientset, as programs
// do to add behaviour to the typed clients. The factory must go through the
// typed clients then, not around them.
type wrappedClientset struct {
	*kubernetes.Clientset
}

// TestWrappedClientsetUsesTypedClient checks the fallback: a wrapper of a
// clientset is used through its typed clients, which send the Accept header
// of the clientset's configuration (JSON here).
func TestWrappedClientsetUsesTypedClient(t *testing.T) {
	srv := newPodServer(t, false, false, "10", servedPod("ns", "a", "5", map[string]string{"v": "1"}))
	inf := runPodInformer(t, wrappedClientset{srv.clientset(t, mediaJSON)})
	assert.Equal(t, map[string]string{"ns/a": "5/1/node-1"}, storeState(inf.GetStore()))
	reqs := srv.seen()
	require.NotEmpty(t, reqs)
	for _, r := range reqs {
		assert.Equal(t, mediaJSON, firstMediaType(r.accept), "%s", r.kind)
		assert.Equal(t, mediaJSON, r.served)
	}
}

// TestFactoryWorksWithFakeClientset checks the other fallback: fake clientsets
// (whose REST clients are nil) keep working through their typed clients.
func TestFactoryWorksWithFakeClientset(t *testing.T) {
	cs := newFakeClientset(servedPod("ns", "a", "5", map[string]string{"v": "1"}))
	inf := runPodInformer(t, cs)
	assert.Equal(t, []string{"ns/a"}, inf.GetStore().ListKeys())
	_, err := cs.CoreV1().Pods("ns").Create(context.Background(), servedPod("ns", "b", "", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(inf.GetStore().ListKeys()) == 2 }, serverWaitTimeout, time.Millisecond)
}

// TestSnapshotScopeNamesTheServer: the snapshot of a factory over a
// clientset is tied to the clientset's API server. A factory over another
// server (same objects, same namespace) rejects it with a
// *cache.SnapshotError and lists; the same server resumes from it without a
// LIST.
func TestSnapshotScopeNamesTheServer(t *testing.T) {
	pods := []*corev1.Pod{servedPod("ns", "a", "10", nil), servedPod("ns", "b", "11", nil)}
	first := newPodServer(t, false, true, "11", pods...)
	other := newPodServer(t, false, true, "11", pods...)
	dir := t.TempDir()
	lists := func(s *podServer) int {
		n := 0
		for _, r := range s.seen() {
			if r.kind == "list" || r.kind == "watchlist" {
				n++
			}
		}
		return n
	}
	run := func(s *podServer) []error {
		factory := informers.NewSharedInformerFactoryWithOptions(s.clientset(t, ""), 0, informers.WithSnapshotDir(dir), informers.WithNamespace("ns"))
		inf := factory.Core().V1().Pods().Informer()
		var mu sync.Mutex
		var errs []error
		require.NoError(t, inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
		}))
		ctx, cancel := context.WithTimeout(context.Background(), serverWaitTimeout)
		defer cancel()
		factory.StartWithContext(ctx)
		require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
		assert.Equal(t, map[string]string{"ns/a": "10//node-1", "ns/b": "11//node-1"}, storeState(inf.GetStore()))
		cancel()
		factory.Shutdown()
		mu.Lock()
		defer mu.Unlock()
		return errs
	}
	require.Empty(t, run(first))
	require.Equal(t, 1, lists(first))

	errs := run(other)
	assert.Equal(t, 1, lists(other), "the other server's factory listed")
	require.NotEmpty(t, errs)
	var serr *cache.SnapshotError
	require.ErrorAs(t, errs[0], &serr)
	assert.Contains(t, serr.Error(), `server=`+strconv.Quote(first.srv.URL))
	assert.Contains(t, serr.Error(), `server=`+strconv.Quote(other.srv.URL))

	// The other server's run rewrote the file for itself; the first server
	// lists again, then resumes from its own snapshot without a LIST.
	require.NotEmpty(t, run(first))
	require.Equal(t, 2, lists(first))
	require.Empty(t, run(first))
	assert.Equal(t, 2, lists(first), "resumed without a LIST")
}

// warningRecorder is a rest.WarningHandler that records the warnings it is
// given.
type warningRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *warningRecorder) HandleWarningHeader(code int, agent string, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, text)
}

func (r *warningRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

func TestFactoryReportsWarningsToTheClientsetsHandler(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []informers.SharedInformerOption
	}{
		{"generated decoders", nil},
		{"apimachinery's decoder", []informers.SharedInformerOption{informers.WithAPIMachineryDecoding(&corev1.Pod{})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newPodServer(t, false, false, "10", servedPod("ns", "a", "5", nil))
			s.warning = "pods are deprecated here"
			recorder := &warningRecorder{}
			cs, err := kubernetes.NewForConfig(&rest.Config{Host: s.srv.URL, WarningHandler: recorder})
			require.NoError(t, err)
			runPodInformer(t, cs, tc.opts...)
			// The LIST's warning, then the WATCH's once it is open.
			require.Eventually(t, func() bool { return recorder.count() >= 2 && s.openWatches() > 0 }, time.Minute, 10*time.Millisecond)
			recorder.mu.Lock()
			defer recorder.mu.Unlock()
			for _, w := range recorder.seen {
				require.Equal(t, "pods are deprecated here", w)
			}
		})
	}
}
