package debugview_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/debugview"
	"github.com/kinformer/kinformer/informers"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
)

const waitTimeout = 20 * time.Second

type noopHandler struct{}

func (noopHandler) OnAdd(interface{}, bool)   {}
func (noopHandler) OnUpdate(_, _ interface{}) {}
func (noopHandler) OnDelete(interface{})      {}

// TestDebugViewListsTypedAndDynamicFactories: a typed factory with a synced
// pod informer (one handler) and a configmap informer whose LISTs are
// forbidden, and a dynamic factory with one custom resource; the handler
// serves exactly their state as JSON.
func TestDebugViewListsTypedAndDynamicFactories(t *testing.T) {
	client := fake.NewClientset([]runtime.Object{
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}},
	}...)
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New(`User "bob" cannot list resource "configmaps"`))
	client.PrependReactor("list", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, forbidden
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	pods := factory.Core().V1().Pods().Informer()
	_, err := pods.AddEventHandler(noopHandler{})
	require.NoError(t, err)
	configMaps := factory.Core().V1().ConfigMaps().Informer()

	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{widgets: "WidgetList"})
	dfactory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	dfactory.ForResource(widgets).Informer()

	h, err := debugview.NewHandlerWithOptions(debugview.HandlerOptions{Detail: true}, factory, dfactory)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer func() {
		cancel()
		factory.Shutdown()
		dfactory.Shutdown()
	}()
	factory.StartWithContext(ctx)
	dfactory.Start(ctx.Done())
	require.True(t, cache.WaitForCacheSync(ctx.Done(), pods.HasSynced))
	require.True(t, cache.WaitForCacheSync(ctx.Done(), dfactory.ForResource(widgets).Informer().HasSynced))
	require.Eventually(t, func() bool {
		st, _ := cache.GetInformerStatus(configMaps)
		return st.LastError != nil
	}, waitTimeout, 5*time.Millisecond)

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/informers", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var got []debugview.Informer
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	require.Len(t, got, 3)
	// Times are real; check presence, then leave them out of the comparison.
	assert.NotNil(t, got[0].LastErrorTime)
	assert.Nil(t, got[0].LastList)
	assert.NotNil(t, got[1].LastList)
	assert.NotNil(t, got[2].LastList)
	assert.Nil(t, got[0].Confirmed, "never synced")
	assert.NotNil(t, got[1].Confirmed, "confirmed by its list")
	assert.NotNil(t, got[2].Confirmed, "confirmed by its list")
	for i := range got {
		got[i].LastList, got[i].LastErrorTime, got[i].LastWatchEvent, got[i].Confirmed = nil, nil, nil, nil
		got[i].ConfirmedResourceVersion = "" // the fake clients number them their own way
		got[i].LastSyncResourceVersion = ""  // the fake clients number them their own way
	}
	lists := func(initial, listError uint64) map[string]uint64 {
		return map[string]uint64{"initial": initial, "expired": 0, "watch_error": 0, "short_watch": 0, "list_error": listError, "stream_fallback": 0}
	}
	cmLists := got[0].Lists // one initial list, then as many retries as the backoff allowed
	require.Equal(t, uint64(1), cmLists["initial"])
	want := []debugview.Informer{
		{
			Type: "*v1.ConfigMap", Resource: "configmaps.v1", Started: true,
			Lists:           lists(1, cmLists["list_error"]),
			LastError:       "failed to list *v1.ConfigMap: " + forbidden.Error(),
			LastErrorReason: "forbidden",
			Handlers:        []debugview.Handler{},
		},
		{
			Type: "*v1.Pod", Resource: "pods.v1", Started: true, Synced: true, StoreSize: 2, DeltasProcessed: 2,
			Lists:    lists(1, 0),
			Handlers: []debugview.Handler{{Name: "github.com/kinformer/kinformer/debugview_test.noopHandler", Synced: true}},
		},
		{
			Type: "*unstructured.Unstructured", Resource: "widgets.v1.example.com", Started: true, Synced: true,
			Lists:    lists(1, 0),
			Handlers: []debugview.Handler{},
		},
	}
	assert.Equal(t, want, got)

	_, err = debugview.NewHandler(42)
	assert.EqualError(t, err, "debugview: cannot describe a int: want a kinformer informer factory or a cache.SharedIndexInformer")
}
