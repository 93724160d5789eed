package metadatainformer_test

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metadatafake "k8s.io/client-go/metadata/fake"

	metadatainformer "github.com/kinformer/kinformer/informers/metadata"
)

// docs/operability.md's warm restart of a metadata factory: WithSnapshotDir (a
// kinformer extension) makes its informers resume from
// "<resource>.<version>[.<group>].metadata.snap" without a LIST.
func ExampleWithSnapshotDir() {
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		fmt.Println(err)
		return
	}
	// The snapshot is tied to the cluster by the UID of its kube-system
	// namespace, which the factory reads with its client.
	client := metadatafake.NewSimpleMetadataClient(scheme, kubeSystemMetadata("9e2a4c0e-cluster-uid"), podMetadata("prod", "web-1", nil))
	dir, err := os.MkdirTemp("", "informers")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	for run := 1; run <= 2; run++ {
		factory := metadatainformer.NewSharedInformerFactoryWithOptions(client, 0,
			metadatainformer.WithNamespace("prod"),
			metadatainformer.WithSnapshotDir(dir)) // writes pods.v1.metadata.snap on stop
		informer := factory.ForResource(podsGVR)
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
	// run 1: cached [prod/web-1], LIST requests so far: 1
	// run 2: cached [prod/web-1], LIST requests so far: 1
}
