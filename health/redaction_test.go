package health_test

import (
	"context"
	"errors"
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

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/health"
)

// sensitiveErrorText is what a refused LIST's error says about the cluster:
// the server, the service account, the namespace and the selector watched.
const sensitiveErrorText = `https://10.0.0.1:6443/api/v1/namespaces/payments/secrets?fieldSelector=metadata.name%3Dstripe-key: User "system:serviceaccount:payments:billing" cannot list`

// refusedInformer runs an informer whose every LIST is refused with 403
// carrying sensitiveErrorText, until the test ends.
func refusedInformer(t *testing.T) cache.SharedIndexInformer {
	t.Helper()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New(sensitiveErrorText))
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, errors.New("no watch")
		},
	}
	informer := cache.NewSharedIndexInformer(lw, &corev1.Secret{}, 0, cache.Indexers{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { informer.RunWithContext(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	require.Eventually(t, func() bool {
		st, _ := cache.GetInformerStatus(informer)
		return st.LastError != nil
	}, 20*time.Second, time.Millisecond, "the LIST was not refused")
	return informer
}

// TestProbeBodyCarriesTheReasonNotTheErrorText: a probe body served to
// anyone names the informer, its state and reason, never the text of the
// error (the server's address, namespaces, selectors, the service account).
func TestProbeBodyCarriesTheReasonNotTheErrorText(t *testing.T) {
	informer := refusedInformer(t)
	h, err := health.NewHandler(health.Policy{}, informer)
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	body := rec.Body.String()
	assert.Contains(t, body, `"reason":"forbidden"`)
	for _, leak := range []string{"10.0.0.1", "payments", "stripe-key", "system:serviceaccount", "cannot list"} {
		assert.NotContains(t, body, leak, "the probe body publishes the error text")
	}
}
