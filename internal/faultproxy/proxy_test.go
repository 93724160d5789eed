package faultproxy

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const fpToken = "fp-secret-token"

// fpUpstream is a fake API server for pods in namespace "ns": LIST returns fpPods pods,
// WATCH streams them as ADDED events (resourceVersion 1…n) and then stays open until the
// client goes away. It answers 401 without the right bearer token.
type fpUpstream struct {
	srv *httptest.Server
	n   int
	// bookmarks, set before the first request, makes a WATCH send the bookmark that ends
	// a streaming list's initial events after its first event and a periodic bookmark
	// after its second.
	bookmarks bool
	lists     atomic.Int64
	watches   atomic.Int64
	mu        sync.Mutex
	auth      []string
}

func fpNewUpstream(t *testing.T, n int) *fpUpstream {
	u := &fpUpstream{n: n}
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(u.serve))
	u.srv.EnableHTTP2 = true
	u.srv.StartTLS()
	t.Cleanup(u.srv.Close)
	return u
}

func fpPod(i int) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p%d", i), ResourceVersion: strconv.Itoa(i + 1)},
	}
}

func (u *fpUpstream) serve(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.auth = append(u.auth, r.Header.Get("Authorization"))
	u.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+fpToken {
		s := errorStatus(http.StatusUnauthorized, 0)
		s.Reason, s.Message = metav1.StatusReasonUnauthorized, "Unauthorized"
		writeStatus(w, s)
		return
	}
	info := parseRequest(r)
	enc := acceptedEncoding(r)
	switch {
	case info.Resource == "pods" && info.Verb == List:
		u.lists.Add(1)
		list := &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(u.n)}}
		for i := 0; i < u.n; i++ {
			list.Items = append(list.Items, *fpPod(i))
		}
		raw, err := encodeObject(enc, list)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if enc == encProtobuf {
			w.Header().Set("Content-Type", protobufMediaType)
		} else {
			w.Header().Set("Content-Type", jsonMediaType)
		}
		_, _ = w.Write(raw)
	case info.Resource == "pods" && info.Verb == Watch:
		u.watches.Add(1)
		w.Header().Set("Content-Type", watchContentType(enc))
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		write := func(eventType string, obj *corev1.Pod) bool {
			raw, _ := encodeObject(enc, obj)
			frame, _ := encodeEvent(enc, eventType, raw)
			if _, err := w.Write(frame); err != nil {
				return false
			}
			_ = rc.Flush()
			return true
		}
		for i := 0; i < u.n; i++ {
			if !write("ADDED", fpPod(i)) {
				return
			}
			if u.bookmarks && i < 2 {
				bookmark := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.Itoa(i + 1)}}
				if i == 0 {
					bookmark.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
				}
				if !write("BOOKMARK", bookmark) {
					return
				}
			}
		}
		<-r.Context().Done()
	default:
		http.NotFound(w, r)
	}
}

func (u *fpUpstream) config(token string) *rest.Config {
	cert := u.srv.Certificate()
	return &rest.Config{
		Host:            u.srv.URL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})},
	}
}

func fpProxy(t *testing.T, u *fpUpstream, opts Options) *Proxy {
	p, err := New(u.config(fpToken), opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })
	return p
}

// fpClient is a clientset through p, in JSON or protobuf.
func fpClient(t *testing.T, p *Proxy, proto bool) kubernetes.Interface {
	cfg := p.Config()
	if proto {
		cfg.ContentType = protobufMediaType
		cfg.AcceptContentTypes = protobufMediaType + "," + jsonMediaType
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

// fpEvents reads events from w until it closes or timeout passes, describing each as
// "TYPE name@rv", "TYPE *T", or "ERROR code reason cause".
func fpEvents(t *testing.T, w watch.Interface, max int, timeout time.Duration) (events []string, closed bool) {
	t.Helper()
	deadline := time.After(timeout)
	for len(events) < max {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return events, true
			}
			events = append(events, fpDescribe(ev))
		case <-deadline:
			return events, false
		}
	}
	return events, false
}

func fpDescribe(ev watch.Event) string {
	switch o := ev.Object.(type) {
	case *corev1.Pod:
		return fmt.Sprintf("%s %s@%s", ev.Type, o.Name, o.ResourceVersion)
	case *metav1.Status:
		cause := ""
		if o.Details != nil && len(o.Details.Causes) > 0 {
			cause = string(o.Details.Causes[len(o.Details.Causes)-1].Type)
		}
		return fmt.Sprintf("%s %d %s %s", ev.Type, o.Code, o.Reason, cause)
	}
	return fmt.Sprintf("%s %T", ev.Type, ev.Object)
}

func fpWatch(t *testing.T, cs kubernetes.Interface) watch.Interface {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	w, err := cs.CoreV1().Pods("ns").Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	return w
}

func TestPassThroughKeepsTheClientsToken(t *testing.T) {
	u := fpNewUpstream(t, 3)
	p := fpProxy(t, u, Options{})
	for _, proto := range []bool{false, true} {
		cs := fpClient(t, p, proto)
		l, err := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		require.Len(t, l.Items, 3)
		events, closed := fpEvents(t, fpWatch(t, cs), 3, 5*time.Second)
		require.False(t, closed)
		require.Equal(t, []string{"ADDED p0@1", "ADDED p1@2", "ADDED p2@3"}, events)
	}
	u.mu.Lock()
	for _, a := range u.auth {
		require.Equal(t, "Bearer "+fpToken, a)
	}
	u.mu.Unlock()

	// A wrong token reaches the server as it is and gets the server's 401.
	bad := kubernetes.NewForConfigOrDie(p.ConfigFor(u.config("wrong")))
	_, err := bad.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	require.True(t, apierrors.IsUnauthorized(err), "got %v", err)
	require.Empty(t, p.Counts())
	require.Equal(t, 3, p.Requests()[List])
	require.Equal(t, 2, p.Requests()[Watch])
}

func TestStatusFaults(t *testing.T) {
	u := fpNewUpstream(t, 2)
	p := fpProxy(t, u, Options{})
	cs := fpClient(t, p, false)
	ctx := context.Background()
	cases := []struct {
		kind  Kind
		check func(error) bool
	}{
		{Gone, apierrors.IsResourceExpired},
		{InternalError, apierrors.IsInternalError},
		{ServiceUnavailable, apierrors.IsServiceUnavailable},
	}
	for _, tc := range cases {
		in := p.Inject(Rule{Match: Match{Verb: List, Resource: "pods"}, Fault: Fault{Kind: tc.kind}, Times: 1})
		_, err := cs.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
		require.True(t, tc.check(err), "%s: got %v", tc.kind, err)
		require.Equal(t, 1, in.Fired())
		<-in.Done()
	}
	require.Zero(t, u.lists.Load(), "a faulted request reached the server")

	// 410 on a watch is a 200 with one ERROR event carrying the Status, in JSON and protobuf.
	for _, proto := range []bool{false, true} {
		p.Inject(Rule{Match: Match{Verb: Watch}, Fault: Fault{Kind: Gone}, Times: 1})
		events, closed := fpEvents(t, fpWatch(t, fpClient(t, p, proto)), 5, 5*time.Second)
		require.True(t, closed)
		require.Equal(t, []string{"ERROR 410 Expired "}, events, "protobuf %v", proto)
	}

	// 429 as the client sees it on the wire: the code, Retry-After and a Status body.
	p.Inject(Rule{Match: Match{Verb: List}, Fault: Fault{Kind: TooManyRequests, RetryAfterSeconds: 2}, Times: 1})
	hc, err := rest.HTTPClientFor(p.Config())
	require.NoError(t, err)
	resp, err := hc.Get(p.URL() + "/api/v1/namespaces/ns/pods")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	require.Equal(t, "2", resp.Header.Get("Retry-After"))
	require.Contains(t, string(body), `"reason":"TooManyRequests"`)
	// The REST client honours Retry-After and retries: one 429 costs a delay, not an error.
	p.Inject(Rule{Match: Match{Verb: List}, Fault: Fault{Kind: TooManyRequests, RetryAfterSeconds: 1}, Times: 1})
	start := time.Now()
	_, err = cs.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), time.Second)

	require.Equal(t, map[Kind]int{Gone: 3, InternalError: 1, ServiceUnavailable: 1, TooManyRequests: 2}, p.Counts())
}

func TestStreamFaults(t *testing.T) {
	for _, proto := range []bool{false, true} {
		t.Run(fmt.Sprintf("protobuf=%v", proto), func(t *testing.T) {
			cases := []struct {
				fault      Fault
				want       []string
				wantClosed bool
			}{
				// Over HTTP/2 the server writes frames asynchronously, so how many of the
				// events before a connection cut reach the client is not exact; over
				// HTTP/1 (HTTP1Only) it is.
				{Fault{Kind: CloseConn, AfterFrames: 2}, []string{"ADDED p0@1", "ADDED p1@2"}, true},
				{Fault{Kind: CutFrame, AfterFrames: 1}, []string{"ADDED p0@1"}, true},
				{Fault{Kind: Garbage, AfterFrames: 1}, []string{"ADDED p0@1", "ERROR 500 InternalError ClientWatchDecoding"}, true},
				{Fault{Kind: NoObject, AfterFrames: 1}, []string{"ADDED p0@1", "ERROR 500 InternalError ClientWatchDecoding"}, true},
				{Fault{Kind: WrongType, AfterFrames: 1}, []string{"ADDED p0@1", "MODIFIED *v1.ConfigMap", "ADDED p1@2", "ADDED p2@3"}, false},
				{Fault{Kind: BookmarkNoRV, AfterFrames: 2}, []string{"ADDED p0@1", "ADDED p1@2", "BOOKMARK @", "ADDED p2@3"}, false},
				{Fault{Kind: BlackHole, SendHeaders: true, Hold: 300 * time.Millisecond}, nil, true},
				{Fault{Kind: Delay, Delay: 300 * time.Millisecond}, []string{"ADDED p0@1", "ADDED p1@2", "ADDED p2@3"}, false},
			}
			for _, tc := range cases {
				u := fpNewUpstream(t, 3)
				p := fpProxy(t, u, Options{HTTP1Only: tc.fault.Kind == CloseConn})
				in := p.Inject(Rule{Match: Match{Verb: Watch, Resource: "pods"}, Fault: tc.fault, Times: 1})
				start := time.Now()
				events, closed := fpEvents(t, fpWatch(t, fpClient(t, p, proto)), 4, 2*time.Second)
				require.Equal(t, tc.want, events, "%s", tc.fault.Kind)
				require.Equal(t, tc.wantClosed, closed, "%s: closed", tc.fault.Kind)
				require.Equal(t, map[Kind]int{tc.fault.Kind: 1}, p.Counts())
				require.Equal(t, 1, in.Fired())
				if tc.fault.Hold > 0 || tc.fault.Delay > 0 {
					require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
				}
				if tc.fault.Kind == BlackHole {
					require.Zero(t, u.watches.Load(), "a black hole must not reach the server")
				}
			}
		})
	}
}

// TestBlackHoleAfterBookmark: a watch reaches the server and is forwarded up to its
// first periodic bookmark, past the bookmark that ends the initial events, then goes
// silent for the hold and ends cleanly. A stream without a periodic bookmark is passed on
// untouched.
func TestBlackHoleAfterBookmark(t *testing.T) {
	fault := Fault{Kind: BlackHole, AfterBookmark: true, Hold: 300 * time.Millisecond}
	for _, proto := range []bool{false, true} {
		t.Run(fmt.Sprintf("protobuf=%v", proto), func(t *testing.T) {
			u := fpNewUpstream(t, 3)
			u.bookmarks = true
			p := fpProxy(t, u, Options{})
			in := p.Inject(Rule{Match: Match{Verb: Watch, Resource: "pods"}, Fault: fault, Times: 1})
			w := fpWatch(t, fpClient(t, p, proto))
			events, _ := fpEvents(t, w, 4, 5*time.Second)
			require.Equal(t, []string{"ADDED p0@1", "BOOKMARK @1", "ADDED p1@2", "BOOKMARK @2"}, events, "up to the periodic bookmark")
			events, closed := fpEvents(t, w, 1, 5*time.Second)
			require.Empty(t, events, "nothing after the periodic bookmark")
			require.True(t, closed, "the response ends when the hold runs out")
			require.Equal(t, map[Kind]int{BlackHole: 1}, p.Counts())
			require.Equal(t, 1, in.Fired())
			require.Equal(t, int64(1), u.watches.Load(), "the watch reached the server")
		})
		t.Run(fmt.Sprintf("no periodic bookmark, protobuf=%v", proto), func(t *testing.T) {
			u := fpNewUpstream(t, 3)
			p := fpProxy(t, u, Options{})
			p.Inject(Rule{Match: Match{Verb: Watch, Resource: "pods"}, Fault: fault, Times: 1})
			events, closed := fpEvents(t, fpWatch(t, fpClient(t, p, proto)), 3, 5*time.Second)
			require.Equal(t, []string{"ADDED p0@1", "ADDED p1@2", "ADDED p2@3"}, events)
			require.False(t, closed)
			require.Empty(t, p.Counts())
		})
	}
}

func TestListBodyFaults(t *testing.T) {
	u := fpNewUpstream(t, 3)
	p := fpProxy(t, u, Options{})
	cs := fpClient(t, p, false)
	for _, k := range []Kind{CutFrame, Garbage} {
		p.Inject(Rule{Match: Match{Verb: List}, Fault: Fault{Kind: k}, Times: 1})
		_, err := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
		require.Error(t, err, "%s", k)
		var status apierrors.APIStatus
		require.NotErrorAs(t, err, &status, "%s must not look like a server answer: %v", k, err)
	}
	require.Equal(t, int64(2), u.lists.Load())
	// A GET whose connection is closed before the answer is retried by the REST client.
	p.Inject(Rule{Match: Match{Verb: List}, Fault: Fault{Kind: CloseConn}, Times: 1})
	l, err := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, l.Items, 3)
	require.Equal(t, int64(3), u.lists.Load(), "the closed request must not have reached the server")
	require.Equal(t, 4, p.Requests()[List])
	require.Equal(t, map[Kind]int{CutFrame: 1, Garbage: 1, CloseConn: 1}, p.Counts())
}

func TestBlackHoleWithoutHeadersHoldsTheCall(t *testing.T) {
	u := fpNewUpstream(t, 1)
	p := fpProxy(t, u, Options{})
	p.Inject(Rule{Match: Match{Verb: Watch}, Fault: Fault{Kind: BlackHole}})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := fpClient(t, p, false).CoreV1().Pods("ns").Watch(ctx, metav1.ListOptions{})
	require.Error(t, err)
	require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	require.Zero(t, u.watches.Load())
}

func TestMatchingAndProbability(t *testing.T) {
	u := fpNewUpstream(t, 1)
	run := func(seed uint64) (string, map[Kind]int) {
		p := fpProxy(t, u, Options{Seed: seed})
		p.Inject(Rule{Match: Match{Resource: "configmaps"}, Fault: Fault{Kind: InternalError}})
		p.Inject(Rule{Match: Match{Verb: List, Namespace: "ns", Probability: 0.5}, Fault: Fault{Kind: ServiceUnavailable}})
		cs := fpClient(t, p, false)
		var sb strings.Builder
		for i := 0; i < 40; i++ {
			_, err := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				require.True(t, apierrors.IsServiceUnavailable(err), "%v", err)
				sb.WriteByte('x')
			} else {
				sb.WriteByte('.')
			}
		}
		_, err := cs.CoreV1().ConfigMaps("ns").List(context.Background(), metav1.ListOptions{})
		require.True(t, apierrors.IsInternalError(err), "%v", err)
		return sb.String(), p.Counts()
	}
	a, ca := run(7)
	b, cb := run(7)
	c, _ := run(8)
	require.Equal(t, a, b, "the same seed must fault the same requests")
	require.Equal(t, ca, cb)
	require.NotEqual(t, a, c)
	require.Equal(t, 1, ca[InternalError])
	require.Equal(t, strings.Count(a, "x"), ca[ServiceUnavailable])
	require.InDelta(t, 20, ca[ServiceUnavailable], 12)
}

func TestTimesRemoveAndCloseAll(t *testing.T) {
	u := fpNewUpstream(t, 2)
	p := fpProxy(t, u, Options{})
	cs := fpClient(t, p, false)
	in := p.Inject(Rule{Match: Match{Verb: List}, Fault: Fault{Kind: InternalError}, Times: 2})
	for i := 0; i < 3; i++ {
		_, err := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
		assert.Equal(t, i < 2, err != nil, "request %d: %v", i, err)
	}
	select {
	case <-in.Done():
	default:
		t.Fatal("Done not closed after Times requests")
	}
	in2 := p.Inject(Rule{Match: Match{Verb: List}, Fault: Fault{Kind: InternalError}})
	in2.Remove()
	<-in2.Done()
	_, err := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)

	// CutActive cuts the open watch it selects, and only that one.
	w := fpWatch(t, cs)
	events, _ := fpEvents(t, w, 2, 5*time.Second)
	require.Len(t, events, 2)
	require.Equal(t, 1, p.Active(Match{Verb: Watch}))
	require.Zero(t, p.CutActive(Match{Verb: Watch, Resource: "configmaps"}))
	require.Equal(t, 1, p.CutActive(Match{Verb: Watch, Resource: "pods"}))
	events, closed := fpEvents(t, w, 2, 5*time.Second)
	require.True(t, closed, "the watch survived CutActive: %v", events)
	require.LessOrEqual(t, len(events), 1, "at most the client's report of the reset stream: %v", events)
	require.Eventually(t, func() bool { return p.Active(Match{}) == 0 }, 5*time.Second, 10*time.Millisecond)

	w = fpWatch(t, cs)
	events, _ = fpEvents(t, w, 2, 5*time.Second)
	require.Len(t, events, 2)
	require.GreaterOrEqual(t, p.CloseAll(), 1)
	events, closed = fpEvents(t, w, 1, 5*time.Second)
	require.True(t, closed, "the watch survived CloseAll: %v", events)
	require.Empty(t, events)
}

func TestCloseEndsBlackHoles(t *testing.T) {
	u := fpNewUpstream(t, 1)
	p, err := New(u.config(fpToken), Options{})
	require.NoError(t, err)
	p.Inject(Rule{Match: Match{Verb: Watch}, Fault: Fault{Kind: BlackHole, SendHeaders: true}})
	w := fpWatch(t, fpClient(t, p, false))
	done := make(chan struct{})
	go func() {
		defer close(done)
		require.NoError(t, p.Close())
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return while a black hole was open")
	}
	events, closed := fpEvents(t, w, 1, 5*time.Second)
	require.True(t, closed, "events %v", events)
}

func TestEndActiveEndsWatchesCleanly(t *testing.T) {
	u := fpNewUpstream(t, 2)
	p, err := New(u.config(fpToken), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	cs := fpClient(t, p, false)

	w := fpWatch(t, cs)
	events, _ := fpEvents(t, w, 2, 5*time.Second)
	require.Len(t, events, 2)
	require.Zero(t, p.EndActive(Match{Verb: Watch, Resource: "configmaps"}))
	require.Equal(t, 1, p.EndActive(Match{Verb: Watch, Resource: "pods"}))
	// The stream ends as a server ends a watch at its timeout: no error event first.
	events, closed := fpEvents(t, w, 1, 5*time.Second)
	require.True(t, closed, "the watch survived EndActive: %v", events)
	require.Empty(t, events)
	require.Empty(t, p.Counts(), "ending a watch is not a fault")
	require.Eventually(t, func() bool { return p.Active(Match{}) == 0 }, 5*time.Second, 10*time.Millisecond)
}

func TestNoWatchListRejectsOnlyStreamingLists(t *testing.T) {
	u := fpNewUpstream(t, 2)
	p, err := New(u.config(fpToken), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	p.Inject(Rule{Match: Match{Resource: "pods"}, Fault: Fault{Kind: NoWatchList}})
	cs := fpClient(t, p, false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	sendInitialEvents := true
	_, err = cs.CoreV1().Pods("ns").Watch(ctx, metav1.ListOptions{
		SendInitialEvents: &sendInitialEvents, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true,
	})
	require.Error(t, err)
	assert.True(t, apierrors.IsInvalid(err), "want 422 Invalid, got %v", err)
	assert.Contains(t, err.Error(), "sendInitialEvents is forbidden")
	assert.Equal(t, map[Kind]int{NoWatchList: 1}, p.Counts())

	// A plain watch and a LIST pass, and are not counted.
	events, _ := fpEvents(t, fpWatch(t, cs), 2, 5*time.Second)
	require.Len(t, events, 2)
	list, err := cs.CoreV1().Pods("ns").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, list.Items, 2)
	assert.Equal(t, map[Kind]int{NoWatchList: 1}, p.Counts())
}
