package debugview_test

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
	"github.com/kinformer/kinformer/debugview"
)

const sensitiveErrorText = `https://10.0.0.1:6443/api/v1/namespaces/payments/secrets?fieldSelector=metadata.name%3Dstripe-key: User "system:serviceaccount:payments:billing" cannot list`

// TestDebugViewBodyCarriesTheReasonNotTheErrorText: the debug view served by
// NewHandler gives the reason of the last failure, not its text.
func TestDebugViewBodyCarriesTheReasonNotTheErrorText(t *testing.T) {
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
	defer func() { cancel(); wg.Wait() }()
	require.Eventually(t, func() bool {
		st, _ := cache.GetInformerStatus(informer)
		return st.LastError != nil
	}, waitTimeout, time.Millisecond, "the LIST was not refused")

	h, err := debugview.NewHandler(informer)
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/informers", nil))
	body := rec.Body.String()
	assert.Contains(t, body, `"lastErrorReason": "forbidden"`)
	for _, leak := range []string{"10.0.0.1", "payments", "stripe-key", "system:serviceaccount", "cannot list"} {
		assert.NotContains(t, body, leak, "the debug view publishes the error text")
	}
}
