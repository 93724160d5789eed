package dynamicinformer_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/fake"

	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
)

// docs/operability.md's warm restart of a dynamic factory: the options constructor
// (a kinformer extension) takes a snapshot directory, next to the namespace
// and list options the filtered constructor takes as arguments. The snapshot
// is tied to the cluster by the UID of its kube-system namespace, which the
// factory reads with its client.
func ExampleNewDynamicSharedInformerFactoryWithOptions() {
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	client := fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{widgets: "WidgetList"},
		kubeSystem("9e2a4c0e-cluster-uid"),
		newObject(widgets, "Widget", "prod", "w1", nil))
	dir, err := os.MkdirTemp("", "informers")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	for run := 1; run <= 2; run++ {
		factory := dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(client, 0,
			dynamicinformer.WithNamespace("prod"),
			dynamicinformer.WithSnapshotDir(dir)) // writes widgets.v1.example.com.snap on stop
		informer := factory.ForResource(widgets)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		factory.Start(ctx.Done())
		factory.WaitForCacheSync(ctx.Done())
		cached := informer.Informer().GetStore().ListKeys()
		cancel()
		factory.Shutdown()
		lists := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "list" {
				lists++
			}
		}
		fmt.Printf("run %d: cached %v, LIST requests so far: %d\n", run, cached, lists)
	}
	// Output:
	// run 1: cached [prod/w1], LIST requests so far: 1
	// run 2: cached [prod/w1], LIST requests so far: 1
}
