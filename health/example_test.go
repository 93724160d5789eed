package health_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/health"
	"github.com/kinformer/kinformer/informers"
)

// A readiness probe over a factory whose Secrets informer is refused by
// RBAC: the probe answers 503 and names the informer and why, while the pod
// informer serves. (The fake clientset stands in for the API server.)
func ExampleNewHandler() {
	client := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"}})
	client.PrependReactor("list", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New("RBAC: access denied"))
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	_ = factory.Core().V1().Pods().Informer()
	_ = factory.Core().V1().Secrets().Informer()

	ready, err := health.NewHandler(health.Policy{}, factory) // fail while any informer is failing; bodies give reasons, not error texts (Policy.Detail)
	if err != nil {
		fmt.Println(err)
		return
	}
	// In a program: http.Handle("/readyz", ready)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer factory.Shutdown()
	defer cancel()
	factory.StartWithContext(ctx)
	// Wait until the pods have synced and the secrets' LIST was refused.
	for ctx.Err() == nil {
		r, _ := health.Check(health.Options{}, factory)
		if len(r.Unhealthy()) == 1 && r.Unhealthy()[0].Reason == health.ReasonForbidden {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	rec := httptest.NewRecorder()
	ready.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	var body health.ProbeResult
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.Code, body.State)
	for _, h := range body.Informers {
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%s %s %s %s", h.ID, h.State, h.Reason, h.Message)))
	}
	// Output:
	// 503 failing
	// pods.v1 ready
	// secrets.v1 failing forbidden not synced: the last list or watch failed (forbidden)
}
