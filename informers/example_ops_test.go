package informers_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
)

// docs/operability.md's warm restart: a factory with a snapshot directory writes
// each informer's cache when it stops and resumes from it, without a LIST,
// when it starts again.
func ExampleWithSnapshotDir() {
	client := fake.NewSimpleClientset(&corev1.Pod{ //nolint:staticcheck // fake for the example
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"},
	})
	dir, err := os.MkdirTemp("", "informers")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	run := func() {
		factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
			informers.WithNamespace("default"),
			informers.WithSnapshotDir(dir)) // one file per informer, tied to the namespace and selectors
		pods := factory.Core().V1().Pods()
		_ = pods.Informer()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		factory.StartWithContext(ctx)
		if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
			fmt.Println(err)
		}
		cached, _ := pods.Lister().List(labels.Everything())
		cancel()
		factory.Shutdown() // the informer writes its snapshot as it stops
		lists := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "list" {
				lists++
			}
		}
		fmt.Printf("cached %d pod(s), LIST requests so far: %d\n", len(cached), lists)
	}
	run() // lists, then writes the snapshot
	run() // loads the snapshot and watches from its resourceVersion
	// Output:
	// cached 1 pod(s), LIST requests so far: 1
	// cached 1 pod(s), LIST requests so far: 1
}

// docs/operability.md's "Secrets stay off disk": without a key the Secrets informer
// writes no snapshot; with a 32-byte key (read from a mounted Secret or a
// key management service in a real program) it writes an encrypted one.
func ExampleWithSnapshotEncryptionKey() {
	client := fake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db-password"},
	})
	dir, err := os.MkdirTemp("", "informers")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	run := func(options ...informers.SharedInformerOption) {
		factory := informers.NewSharedInformerFactoryWithOptions(client, 0, append(options, informers.WithSnapshotDir(dir))...)
		secrets := factory.Core().V1().Secrets().Informer()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		factory.StartWithContext(ctx)
		if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
			fmt.Println(err)
		}
		cancel()
		factory.Shutdown()
		status, _ := cache.GetInformerStatus(secrets)
		files, _ := os.ReadDir(dir)
		fmt.Printf("snapshots skipped: %d, files: %d\n", status.SnapshotsSkipped, len(files))
	}
	run()
	key := make([]byte, cache.SnapshotKeySize) // use a real random key
	run(informers.WithSnapshotEncryptionKey(key))
	// Output:
	// snapshots skipped: 1, files: 0
	// snapshots skipped: 0, files: 1
}

// docs/operability.md's watch liveness: every informer of the factory restarts a
// watch that, after a periodic bookmark, delivered no event and no bookmark
// for 3 minutes.
func ExampleWithWatchIdleTimeout() {
	client := fake.NewSimpleClientset() //nolint:staticcheck // fake for the example
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithWatchIdleTimeout(3*time.Minute)) // negative: off, as in client-go
	_ = factory.Core().V1().Pods().Informer()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer factory.Shutdown()
	defer cancel()
	factory.StartWithContext(ctx)
	fmt.Println(factory.WaitForCacheSyncWithContext(ctx).AsError())
	// Output:
	// <nil>
}

// docs/operability.md's release of one informer: the pod informer stops and is
// forgotten while the config map informer keeps running.
func ExampleInformerReleaser() {
	client := fake.NewSimpleClientset() //nolint:staticcheck // fake for the example
	factory := informers.NewSharedInformerFactory(client, 0)
	pods := factory.Core().V1().Pods().Informer()
	configMaps := factory.Core().V1().ConfigMaps().Informer()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer factory.Shutdown()
	defer cancel()
	factory.StartWithContext(ctx)
	_ = factory.WaitForCacheSyncWithContext(ctx)

	released, err := factory.(informers.InformerReleaser).ReleaseInformer(ctx, &corev1.Pod{})
	fmt.Println(released, err, pods.IsStopped(), configMaps.IsStopped())
	// Output:
	// true <nil> true false
}

// docs/operability.md's sync diagnostics: with FailFast, waiting ends at once on a
// 403, and the error says which informer failed and why.
func ExampleWithSyncOptions() {
	client := fake.NewSimpleClientset() //nolint:staticcheck // fake for the example
	client.PrependReactor("list", "configmaps", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "",
			errors.New(`User "bob" cannot list resource "configmaps" in API group "" in the namespace "prod"`))
	})
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithSyncOptions(cache.SyncOptions{FailFast: true}))
	_ = factory.Core().V1().ConfigMaps().Informer()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer factory.Shutdown()
	defer cancel()
	factory.StartWithContext(ctx)
	err := factory.WaitForCacheSyncWithContext(ctx).AsError()
	var syncErr *cache.InformerSyncError
	fmt.Println(apierrors.IsForbidden(err), errors.As(err, &syncErr))
	// Output:
	// true true
}
