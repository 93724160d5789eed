package clientgo_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/interop/clientgo"
)

// newInformer has the shape of controller-runtime's cache.Options.NewInformer
// hook: a program hands it to controller-runtime to get kinformer informers.
func newInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	return clientgo.NewSharedIndexInformer(lw, obj, resync, indexers, clientgo.WithHandlerBufferPolicy(cache.HandlerBufferCoalesceByKey))
}

// The hook's type, as controller-runtime declares it.
var _ func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer = newInformer

// A kinformer informer over client-go's fake clientset, used through
// client-go's types only, as a library taking them would; Unwrap reaches
// kinformer's status.
func ExampleNewSharedIndexInformer() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	client := fake.NewClientset(
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-2"}},
	)
	// The fake clientset has no resourceVersions: a pod created before the
	// watch is open would be missed, so the example waits for the watch.
	watching := make(chan struct{})
	var once sync.Once
	client.PrependWatchReactor("pods", func(clienttesting.Action) (bool, watch.Interface, error) {
		once.Do(func() { close(watching) })
		return false, nil, nil
	})
	lw := toolscache.ToListWatcherWithWatchListSemantics(&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Pods("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Pods("").Watch(ctx, o)
		},
	}, client)

	informer := newInformer(lw, &corev1.Pod{}, 0, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
	deleted := make(chan string, 10)
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			deleted <- obj.(*corev1.Pod).Name
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { informer.RunWithContext(ctx) })
	defer wg.Wait()
	defer cancel()
	if !toolscache.WaitFor(ctx, "pods", informer.HasSyncedChecker(), reg.HasSyncedChecker()) {
		fmt.Println("not synced")
		return
	}
	<-watching

	if err := client.CoreV1().Pods("default").Delete(ctx, "web-1", metav1.DeleteOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("deleted:", <-deleted)
	pods, _ := informer.GetIndexer().ByIndex(toolscache.NamespaceIndex, "default")
	fmt.Println("cached in default:", len(pods))

	k, _ := clientgo.Unwrap(informer)
	status, _ := cache.GetInformerStatus(k)
	fmt.Println("synced:", status.Synced, "store size:", status.StoreSize)
	// Output:
	// deleted: web-1
	// cached in default: 1
	// synced: true store size: 1
}
