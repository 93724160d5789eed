package kinformerprom_test

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/metrics/kinformerprom"
)

// docs/operability.md's metrics: one call registers every informer of a factory;
// the values are read at scrape time (here a Gather on a private registry
// instead of prometheus.DefaultRegisterer and an HTTP scrape).
func ExampleRegister() {
	client := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"}})
	factory := informers.NewSharedInformerFactory(client, 0)
	_ = factory.Core().V1().Pods().Informer()
	reg := prometheus.NewRegistry()
	if _, err := kinformerprom.Register(reg, factory); err != nil { // typed, dynamic or metadata factory, or one informer
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer factory.Shutdown()
	defer cancel()
	factory.StartWithContext(ctx)
	_ = factory.WaitForCacheSyncWithContext(ctx)

	families, err := reg.Gather()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, mf := range families {
		if mf.GetName() == "kinformer_informer_store_objects" {
			for _, m := range mf.GetMetric() {
				fmt.Println(mf.GetName(), m.GetGauge().GetValue())
			}
		}
	}
	// Output:
	// kinformer_informer_store_objects 1
}
