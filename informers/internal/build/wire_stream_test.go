package build

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/internal/bench"
	"github.com/kinformer/kinformer/internal/pbdecode"
)

// answer is what the test server answers a LIST with.
type answer struct {
	name        string
	status      int
	contentType string
	body        []byte
	// cut, when positive, ends the connection after that many bytes of
	// the body (the Content-Length announces the whole).
	cut int
}

// encodeProtobuf returns obj in the API server's protobuf form.
func encodeProtobuf(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	require.True(t, ok)
	b, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion), obj)
	require.NoError(t, err)
	return b
}

// TestStreamedListGivesTheTypedClientsResult sends the same LIST answers to
// client-go's typed client (its clientset asking protobuf, apimachinery's
// decoder), to a wireClient on kinformer's decoders without streaming, and
// to one whose transport decodes protobuf LISTs as they arrive (what the
// factory builds by default), and requires the same list or the same error
// text from all three: protobuf lists of 0, 1 and 30 benchmark pods, a list
// cut at several points, a list with a corrupted item, a JSON list, an
// error status in protobuf, a list whose connection ends early, and a list
// of another kind.
func TestStreamedListGivesTheTypedClientsResult(t *testing.T) {
	thirty := encodeProtobuf(t, bench.NewPodList(0, 30, "1000"))
	corrupted := append([]byte(nil), thirty...)
	corrupted[len(corrupted)/2] = 0xff
	corrupted[len(corrupted)/2+1] = 0xff
	status := encodeProtobuf(t, &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
	answers := []answer{
		{name: "empty list", body: encodeProtobuf(t, &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "7"}})},
		{name: "one pod", body: encodeProtobuf(t, bench.NewPodList(0, 1, "1000"))},
		{name: "thirty pods", body: thirty},
		{name: "cut at a third", body: thirty[:len(thirty)/3]},
		{name: "cut before the end", body: thirty[:len(thirty)-1]},
		{name: "corrupted item", body: corrupted},
		{name: "json", contentType: "application/json", body: []byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"a","namespace":"n"}}]}`)},
		{name: "status", status: http.StatusGone, body: status},
		{name: "connection ends early", body: thirty, cut: len(thirty) / 2},
		{name: "another kind", body: encodeProtobuf(t, &corev1.ConfigMapList{Items: []corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Name: "c"}}}})},
	}
	var current atomic.Pointer[answer]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		a := current.Load()
		ct := a.contentType
		if ct == "" {
			ct = runtime.ContentTypeProtobuf
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
		status := a.status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		if a.cut > 0 {
			_, _ = w.Write(a.body[:a.cut])
			panic(http.ErrAbortHandler)
		}
		_, _ = w.Write(a.body)
	}))
	defer srv.Close()

	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: runtime.ContentTypeProtobuf}})
	require.NoError(t, err)
	rc := cs.CoreV1().RESTClient().(*rest.RESTClient)
	newList := func() runtime.Object { return &corev1.PodList{} }
	plainRC, err := derivedRESTClient(rc, nil, clientSerializer(false))
	require.NoError(t, err)
	plain := &wireClient{rc: plainRC, resource: "pods", newList: newList}
	kind := listKindOf(newList)
	require.NotNil(t, kind)
	streamingRC, err := derivedRESTClient(rc, func(next http.RoundTripper) (http.RoundTripper, error) {
		return &streamingListTransport{next: next}, nil
	}, clientSerializer(false))
	require.NoError(t, err)
	streaming := &wireClient{rc: streamingRC, resource: "pods", newList: newList, listKind: kind}

	v, stop := pbdecode.StartVerification()
	defer stop()
	ctx := context.Background()
	for i := range answers {
		a := &answers[i]
		current.Store(a)
		want, wantErr := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		for name, wc := range map[string]*wireClient{"kinformer's decoders": plain, "streamed": streaming} {
			got, gotErr := wc.list(ctx, metav1.ListOptions{})
			require.Equalf(t, wantErr != nil, gotErr != nil, "%s, %s: client-go's error %v, ours %v", a.name, name, wantErr, gotErr)
			if wantErr != nil {
				require.Equal(t, wantErr.Error(), gotErr.Error(), a.name+", "+name)
				require.Equal(t, errors.Is(wantErr, io.ErrUnexpectedEOF), errors.Is(gotErr, io.ErrUnexpectedEOF), a.name+", "+name)
				continue
			}
			require.Truef(t, reflect.DeepEqual(want, got), "%s, %s: lists differ", a.name, name)
		}
	}
	require.Empty(t, v.Differences())
}

// TestStreamedListLeavesOtherRequestsAlone checks that the streaming
// transport hands back untouched the answers to requests that carry no
// listSlot.
func TestStreamedListLeavesOtherRequestsAlone(t *testing.T) {
	body := encodeProtobuf(t, bench.NewPodList(0, 2, "1000"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/pods", nil)
	require.NoError(t, err)
	resp, err := (&streamingListTransport{next: http.DefaultTransport}).RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, body, got)
	_, streamed := resp.Body.(*streamedListBody)
	require.False(t, streamed)
}
