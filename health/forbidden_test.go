package health_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/health"
	"github.com/kinformer/kinformer/informers"
)

// forbiddenConfigMaps makes client refuse configmaps with 403: the first
// LIST (or watch) at once, every later one only once release is closed, so
// that the informer cannot retry while the test looks. It returns the number
// of refused requests so far.
func forbiddenConfigMaps(client *fake.Clientset, release <-chan struct{}) func() int {
	var mu sync.Mutex
	calls := 0
	refuse := func(clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n > 1 {
			<-release
		}
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "",
			errors.New(`User "bob" cannot list resource "configmaps" in API group "" at the cluster scope`))
	}
	client.PrependReactor("list", "configmaps", refuse)
	client.PrependWatchReactor("configmaps", func(a clienttesting.Action) (bool, watch.Interface, error) {
		_, _, err := refuse(a)
		return true, nil, err
	})
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return calls
	}
}

// TestForbiddenTypeFailsReadinessBeforeRetry checks, with the fake
// clientset, that an informer whose LIST is refused with 403 makes the
// readiness handler answer 503 naming it, with reason forbidden, after that
// one refusal and before any retry answers, while the pod informer of the
// same factory syncs and serves.
func TestForbiddenTypeFailsReadinessBeforeRetry(t *testing.T) {
	client := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"}})
	release := make(chan struct{})
	refused := forbiddenConfigMaps(client, release)
	factory := informers.NewSharedInformerFactory(client, 0)
	pods := factory.Core().V1().Pods()
	_ = pods.Informer()
	_ = factory.Core().V1().ConfigMaps().Informer()
	ready, err := health.NewHandler(health.Policy{Detail: true}, factory)
	require.NoError(t, err)
	podsOnly, err := health.NewHandler(health.Policy{Informers: []string{"pods"}}, factory)
	require.NoError(t, err)

	// Before Start: both not started.
	code, res := probe(t, ready)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, []string{"configmaps.v1/not_started", "pods.v1/not_started"}, failedOf(res))

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(factory.Shutdown)
	t.Cleanup(cancel)
	t.Cleanup(func() { close(release) }) // first: let the blocked retry end
	factory.StartWithContext(ctx)
	syncCtx, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	require.True(t, cache.WaitForCacheSync(syncCtx.Done(), pods.Informer().HasSynced), "pods synced")

	var report health.Report
	require.Eventually(t, func() bool {
		report, err = health.Check(health.Options{}, factory)
		return err == nil && report.State == health.Failing && len(report.Unhealthy()) == 1 && report.Unhealthy()[0].Reason == health.ReasonForbidden
	}, 20*time.Second, time.Millisecond)
	assert.LessOrEqual(t, refused(), 2, "at most the first refusal and a retry blocked before its answer")

	code, res = probe(t, ready)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.False(t, res.OK)
	assert.Equal(t, "failing", res.State)
	require.Len(t, res.Failed, 1)
	f := res.Failed[0]
	assert.Equal(t, "configmaps.v1", f.Informer)
	assert.Equal(t, "*v1.ConfigMap", f.Type)
	assert.Equal(t, "forbidden", f.Reason)
	assert.Contains(t, f.Message, `User "bob" cannot list resource "configmaps"`)
	assert.False(t, f.Synced)
	require.Len(t, res.Informers, 2) // in the factory's order, by type
	assert.Equal(t, "configmaps.v1", res.Informers[0].Informer)
	assert.Equal(t, "pods.v1", res.Informers[1].Informer)
	assert.Equal(t, "ready", res.Informers[1].State)

	// A policy over the pods alone passes, and the pod cache serves.
	code, res = probe(t, podsOnly)
	assert.Equal(t, http.StatusOK, code)
	assert.True(t, res.OK)
	got, err := pods.Lister().Pods("default").Get("web-1")
	require.NoError(t, err)
	assert.Equal(t, "web-1", got.Name)

	// HEAD: the status alone.
	rec := httptest.NewRecorder()
	ready.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/readyz", nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Zero(t, rec.Body.Len())
}

// probeBody is the JSON a probe handler writes.
type probeBody struct {
	OK        bool         `json:"ok"`
	State     string       `json:"state"`
	Failed    []probeEntry `json:"failed"`
	Informers []probeEntry `json:"informers"`
}

type probeEntry struct {
	Informer         string  `json:"informer"`
	Type             string  `json:"type"`
	State            string  `json:"state"`
	Reason           string  `json:"reason"`
	Message          string  `json:"message"`
	Synced           bool    `json:"synced"`
	StalenessSeconds float64 `json:"stalenessSeconds"`
}

// probe serves one GET to h and decodes its body.
func probe(t *testing.T, h http.Handler) (int, probeBody) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	data, err := io.ReadAll(rec.Result().Body)
	require.NoError(t, err)
	var body probeBody
	require.NoError(t, json.Unmarshal(data, &body), string(data))
	return rec.Code, body
}

// failedOf renders the failed informers of a body as "id/reason".
func failedOf(b probeBody) []string {
	var out []string
	for _, f := range b.Failed {
		out = append(out, f.Informer+"/"+f.Reason)
	}
	return out
}
