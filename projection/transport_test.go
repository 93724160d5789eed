package projection

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func answer(status int, contentType, body string) *http.Response {
	return &http.Response{
		StatusCode:    status,
		Header:        http.Header{"Content-Type": {contentType}, "Content-Length": {"1"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
	}
}

func get(t *testing.T, rt http.RoundTripper, rawURL string) (*http.Response, error) {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	return rt.RoundTrip(&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{"Accept": {"application/vnd.kubernetes.protobuf,application/json"}}})
}

const podListJSON = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[` +
	`{"metadata":{"name":"a","namespace":"ns","resourceVersion":"5","labels":{"app":"web"},"annotations":{"x":"y"}},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running","podIP":"10.0.0.1"}}]}`

func TestTransportProjectsJSONListAnswers(t *testing.T) {
	p := MustNew("metadata.labels", "spec.nodeName", "status.phase")
	rt, err := p.Transport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return answer(http.StatusOK, "application/json", podListJSON), nil
	}), &corev1.Pod{})
	require.NoError(t, err)
	resp, err := get(t, rt, "https://h/api/v1/pods?limit=500")
	require.NoError(t, err)
	assert.EqualValues(t, -1, resp.ContentLength)
	assert.Empty(t, resp.Header.Get("Content-Length"))
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	assert.JSONEq(t, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[`+
		`{"metadata":{"name":"a","namespace":"ns","resourceVersion":"5","labels":{"app":"web"},"annotations":{"`+MarkerAnnotation+`":"`+p.Fingerprint()+`"}},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}}]}`, string(body))
}

// TestTransportPassesThroughWhatItDoesNotProject: writes, error answers and
// other representations (a Table) reach the caller unchanged.
func TestTransportPassesThroughWhatItDoesNotProject(t *testing.T) {
	p := MustNew("spec.nodeName")
	for _, tc := range []struct {
		name   string
		method string
		resp   *http.Response
	}{
		{"a write", http.MethodPut, answer(http.StatusOK, "application/json", `{"kind":"Pod","spec":{"containers":[]}}`)},
		{"an error answer", http.MethodGet, answer(http.StatusGone, "application/json", `{"kind":"Status","code":410}`)},
		{"a table", http.MethodGet, answer(http.StatusOK, "application/json;as=Table;v=v1;g=meta.k8s.io", `{"kind":"Table","rows":[]}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, _ := io.ReadAll(tc.resp.Body)
			tc.resp.Body = io.NopCloser(bytes.NewReader(want))
			rt, err := p.Transport(roundTripFunc(func(*http.Request) (*http.Response, error) { return tc.resp, nil }), &corev1.Pod{})
			require.NoError(t, err)
			u, _ := url.Parse("https://h/api/v1/namespaces/ns/pods")
			resp, err := rt.RoundTrip(&http.Request{Method: tc.method, URL: u, Header: http.Header{}})
			require.NoError(t, err)
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
}

func TestTransportRefusesMediaTypesItCannotProject(t *testing.T) {
	p := MustNew("spec.nodeName")
	closed := false
	rt, err := p.Transport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		r := answer(http.StatusOK, "application/cbor", "\xa0")
		r.Body = closeSpy{Reader: strings.NewReader("\xa0"), closed: &closed}
		return r, nil
	}), &corev1.Pod{})
	require.NoError(t, err)
	_, err = get(t, rt, "https://h/api/v1/pods")
	require.ErrorContains(t, err, `media type "application/cbor"`)
	assert.True(t, closed, "the refused answer's body was not closed")

	// Protobuf with no Go type to read it by.
	rt, err = p.Transport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return answer(http.StatusOK, "application/vnd.kubernetes.protobuf", "k8s\x00"), nil
	}), nil)
	require.NoError(t, err)
	_, err = get(t, rt, "https://h/api/v1/pods")
	require.ErrorContains(t, err, "cannot project")
}

type closeSpy struct {
	io.Reader
	closed *bool
}

func (c closeSpy) Close() error {
	*c.closed = true
	return nil
}

// TestTransportWithoutTypeAsksForJSON: for custom resources (no Go type) the
// Transport asks for JSON, which it projects.
func TestTransportWithoutTypeAsksForJSON(t *testing.T) {
	p := MustNew("spec.size")
	for _, example := range []interface{ GetKind() string }{nil, &unstructured.Unstructured{}} {
		var accept string
		var ex *unstructured.Unstructured
		if example != nil {
			ex = example.(*unstructured.Unstructured)
		}
		next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			accept = r.Header.Get("Accept")
			return answer(http.StatusOK, "application/json", `{"kind":"WidgetList","items":[{"kind":"Widget","metadata":{"name":"w"},"spec":{"size":3,"color":"red"}}]}`), nil
		})
		var rt http.RoundTripper
		var err error
		if ex == nil {
			rt, err = p.Transport(next, nil)
		} else {
			rt, err = p.Transport(next, ex)
		}
		require.NoError(t, err)
		resp, err := get(t, rt, "https://h/apis/example.com/v1/widgets")
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "application/json", accept)
		assert.JSONEq(t, `{"kind":"WidgetList","items":[{"kind":"Widget","metadata":{"name":"w","annotations":{"`+MarkerAnnotation+`":"`+p.Fingerprint()+`"}},"spec":{"size":3}}]}`, string(body))
	}
}

func TestTransportRejectsPathsTheTypeDoesNotHave(t *testing.T) {
	p := MustNew("spec.nodeNam")
	_, err := p.Transport(nil, &corev1.Pod{})
	require.ErrorContains(t, err, `"spec.nodeNam"`)
	assert.Equal(t, err, p.Check(&corev1.Pod{}), "Check gives Transport's error")
	assert.NoError(t, MustNew("spec.nodeName").Check(&corev1.Pod{}))
	assert.NoError(t, p.Check(nil), "no type: nothing to check")
	assert.NoError(t, p.Check(&unstructured.Unstructured{}), "no type: nothing to check")
	assert.Error(t, (*Projection)(nil).Check(&corev1.Pod{}))
}

func TestTransportReportsGarbageBodiesOnRead(t *testing.T) {
	rt, err := MustNew("spec.nodeName").Transport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return answer(http.StatusOK, "application/json", `{"kind":"PodList","items":[{"metadata":`), nil
	}), &corev1.Pod{})
	require.NoError(t, err)
	resp, err := get(t, rt, "https://h/api/v1/pods")
	require.NoError(t, err)
	_, err = io.ReadAll(resp.Body)
	require.ErrorContains(t, err, "projection:")
}

func TestApplyReturnsAProjectedMarkedCopy(t *testing.T) {
	p := MustNew("spec.nodeName")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"x": "y"}},
		Spec:       corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "c"}}},
	}
	got, err := p.Apply(pod)
	require.NoError(t, err)
	assert.Equal(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Annotations: map[string]string{MarkerAnnotation: p.Fingerprint()}},
		Spec:       corev1.PodSpec{NodeName: "n"},
	}, got)
	assert.Len(t, pod.Spec.Containers, 1, "Apply changed its argument")
	fp, ok := Marked(got)
	assert.True(t, ok)
	assert.Equal(t, p.Fingerprint(), fp)
	_, ok = Marked(pod)
	assert.False(t, ok)

	_, err = p.Apply(nil)
	require.Error(t, err)
	var nilPod *corev1.Pod
	_, err = p.Apply(nilPod)
	require.Error(t, err)
	_, err = (*Projection)(nil).Apply(pod)
	require.Error(t, err)
}

// TestGuardRefusesBodiesCarryingTheMarker covers the request shapes Guard
// sees: a server-side apply patch of a projected object (YAML or JSON),
// a write without the marker, and reads.
func TestGuardRefusesBodiesCarryingTheMarker(t *testing.T) {
	var sent []string
	g := Guard(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		var b []byte
		if r.Body != nil {
			b, _ = io.ReadAll(r.Body)
		}
		sent = append(sent, r.Method+" "+string(b))
		return answer(http.StatusOK, "application/json", "{}"), nil
	}))
	u, _ := url.Parse("https://h/api/v1/namespaces/ns/pods/a")
	req := func(method, contentType, body string) *http.Request {
		r := &http.Request{Method: method, URL: u, Header: http.Header{}}
		if contentType != "" {
			r.Header.Set("Content-Type", contentType)
		}
		if body != "" {
			r.Body = io.NopCloser(strings.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		return r
	}
	for _, body := range []string{
		"metadata:\n  annotations:\n    " + MarkerAnnotation + ": abc\n",
		`{"metadata":{"annotations":{"` + MarkerAnnotation + `":"abc"}}}`,
	} {
		_, err := g.RoundTrip(req(http.MethodPatch, "application/apply-patch+yaml", body))
		require.ErrorIs(t, err, ErrProjectedWrite)
	}
	assert.Empty(t, sent)

	_, err := g.RoundTrip(req(http.MethodPatch, "application/merge-patch+json", `{"spec":{"nodeName":"n"}}`))
	require.NoError(t, err)
	_, err = g.RoundTrip(req(http.MethodGet, "", ""))
	require.NoError(t, err)
	_, err = g.RoundTrip(req(http.MethodDelete, "", ""))
	require.NoError(t, err)
	assert.Equal(t, []string{`PATCH {"spec":{"nodeName":"n"}}`, "GET ", "DELETE "}, sent)

	failing := Guard(roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("unused") }))
	_, err = failing.RoundTrip(req(http.MethodPut, "application/json", `{"metadata":{"annotations":{"`+MarkerAnnotation+`":"x"}}}`))
	require.ErrorIs(t, err, ErrProjectedWrite)
}

func TestClassifyRequestReadsPathsAsTheAPIServerDoes(t *testing.T) {
	for _, tc := range []struct {
		url                  string
		collection, watching bool
	}{
		{"https://h/api/v1/pods", true, false},
		{"https://h/api/v1/namespaces/ns/pods?limit=500", true, false},
		{"https://h/api/v1/namespaces/watch/pods", true, false},
		{"https://h/apis/watch/v1/things", true, false},
		{"https://h/api/v1/pods?watch=true", true, true},
		{"https://h/api/v1/pods?watch=1", true, true},
		{"https://h/api/v1/pods?watch=false", true, false},
		{"https://h/api/v1/pods?watch=0", true, false},
		{"https://h/api/v1/watch/namespaces/ns/pods", true, true},
		{"https://h/apis/apps/v1/watch/deployments", true, true},
		{"https://h/apis/apps/v1/namespaces/ns/deployments?watch=True&sendInitialEvents=true", true, true},
		{"https://h/prefix/of/a/proxy/api/v1/pods", true, false},
		{"https://h/api/v1/namespaces", true, false},
		{"https://h/api/v1/namespaces/ns", false, false},
		{"https://h/api/v1/namespaces/ns/pods/p", false, false},
		{"https://h/api/v1/namespaces/ns/pods/p/log", false, false},
		{"https://h/apis/apps/v1", false, false},
		{"https://h/openapi/v2", false, false},
		{"https://h/version", false, false},
	} {
		u, err := url.Parse(tc.url)
		require.NoError(t, err)
		collection, watching := classifyRequest(&http.Request{Method: http.MethodGet, URL: u})
		assert.Equal(t, tc.collection, collection, "collection: %s", tc.url)
		assert.Equal(t, tc.watching, watching, "watching: %s", tc.url)
	}
}

// TestTransportLeavesOtherReadsAlone: the GET of one object, a pod's log,
// and a collection asked for as a Table reach the server with their own
// Accept header and come back untouched, even from a JSON-only Transport;
// a LIST in namespace "watch" is projected as a LIST.
func TestTransportLeavesOtherReadsAlone(t *testing.T) {
	p := MustNew("spec.nodeName")
	var accepts []string
	answers := map[string]*http.Response{}
	rt, err := p.Transport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		accepts = append(accepts, r.Header.Get("Accept"))
		return answers[r.URL.Path], nil
	}), nil)
	require.NoError(t, err)
	for _, tc := range []struct{ path, accept, contentType, body string }{
		{"/api/v1/namespaces/ns/pods/p", "application/vnd.kubernetes.protobuf", "application/json", `{"kind":"Pod","spec":{"containers":[]}}`},
		{"/api/v1/namespaces/ns/pods/p/log", "*/*", "text/plain", "line 1\n"},
		{"/api/v1/namespaces/ns/pods", "application/json;as=Table;v=v1;g=meta.k8s.io", "application/json;as=Table;v=v1;g=meta.k8s.io", `{"kind":"Table"}`},
	} {
		accepts = nil
		answers[tc.path] = answer(http.StatusOK, tc.contentType, tc.body)
		u, _ := url.Parse("https://h" + tc.path)
		resp, err := rt.RoundTrip(&http.Request{Method: http.MethodGet, URL: u, Header: http.Header{"Accept": {tc.accept}}})
		require.NoError(t, err, tc.path)
		got, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, tc.body, string(got), tc.path)
		assert.Equal(t, []string{tc.accept}, accepts, tc.path)
	}

	answers["/api/v1/namespaces/watch/pods"] = answer(http.StatusOK, "application/json", podListJSON)
	resp, err := get(t, rt, "https://h/api/v1/namespaces/watch/pods")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(body), MarkerAnnotation, "a LIST in namespace watch is projected")
	assert.NotContains(t, string(body), `"image"`)
}

func TestGuardIgnoresTheMarkerTextOutsideAnAnnotationKey(t *testing.T) {
	var sent int
	g := Guard(roundTripFunc(func(*http.Request) (*http.Response, error) {
		sent++
		return answer(http.StatusOK, "application/json", "{}"), nil
	}))
	u, _ := url.Parse("https://h/api/v1/namespaces/ns/configmaps/docs")
	for _, tc := range []struct{ contentType, body string }{
		{"application/json", `{"data":{"readme":"objects read with kinformer.io/projection carry a marker"}}`},
		{"application/json", `{"metadata":{"annotations":{"kinformer.io/projection-owner":"team-a"}}}`},
		{"application/yaml", "metadata:\n  annotations:\n    kinformer.io/projection-owner: team-a\n"},
	} {
		_, err := g.RoundTrip(&http.Request{Method: http.MethodPut, URL: u, Header: http.Header{"Content-Type": {tc.contentType}}, Body: io.NopCloser(strings.NewReader(tc.body))})
		require.NoError(t, err, tc.body)
	}
	assert.Equal(t, 3, sent)
}
