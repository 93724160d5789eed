package debugview_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kinformer/kinformer/debugview"
	"github.com/kinformer/kinformer/informers"
)

// docs/operability.md's debug view: serve every informer's state of a factory as
// JSON (here asked once through httptest instead of a listening server).
func ExampleNewHandler() {
	client := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"}})
	factory := informers.NewSharedInformerFactory(client, 0)
	_ = factory.Core().V1().Pods().Informer()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer factory.Shutdown()
	defer cancel()
	factory.StartWithContext(ctx)
	_ = factory.WaitForCacheSyncWithContext(ctx)

	h, err := debugview.NewHandler(factory) // typed, dynamic or metadata factories, or informers
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/informers", h)

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/informers", nil))
	var view []debugview.Informer
	if err := json.Unmarshal(rec.Body.Bytes(), &view); err != nil {
		fmt.Println(err)
		return
	}
	for _, i := range view {
		fmt.Printf("%s %s synced=%v objects=%d\n", i.Type, i.Resource, i.Synced, i.StoreSize)
	}
	// Output:
	// *v1.Pod pods.v1 synced=true objects=1
}
