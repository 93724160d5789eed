package cache_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/cache"
)

func examplePod(namespace, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

// The README's quick start: a pod informer with a namespace index over a clientset (here
// client-go's fake one), a handler, and a read from the cache.
func ExampleNewSharedIndexInformer() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	client := fake.NewClientset(examplePod("default", "web-1"), examplePod("default", "web-2"), examplePod("kube-system", "dns"))
	// The fake clientset has no resourceVersions: an object created before the informer's
	// watch is open would be missed, so the example waits for the watch (a real server
	// replays from the list's resourceVersion instead).
	watching := make(chan struct{})
	var once sync.Once
	client.PrependWatchReactor("pods", func(clienttesting.Action) (bool, watch.Interface, error) {
		once.Do(func() { close(watching) })
		return false, nil, nil
	})
	// ToListWatcherWithWatchListSemantics lets the reflector ask the client whether it can
	// serve streaming lists (the fake clientset cannot), as client-go's informers do.
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Pods("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Pods("").Watch(ctx, o)
		},
	}, client)
	informer := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})

	added := make(chan string, 10)
	reg, err := informer.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			if !isInInitialList {
				added <- obj.(*corev1.Pod).Name
			}
		},
	})
	if err != nil {
		fmt.Println("AddEventHandler:", err)
		return
	}

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(runCtx)
	}()
	defer func() { stop(); <-done }()

	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced, reg.HasSynced) {
		fmt.Println("not synced")
		return
	}

	objs, err := informer.GetIndexer().ByIndex(cache.NamespaceIndex, "default")
	if err != nil {
		fmt.Println("ByIndex:", err)
		return
	}
	var names []string
	for _, obj := range objs {
		names = append(names, obj.(*corev1.Pod).Name)
	}
	sort.Strings(names)
	fmt.Println("pods in default:", names)

	select {
	case <-watching:
	case <-ctx.Done():
		fmt.Println("watch not started")
		return
	}
	if _, err := client.CoreV1().Pods("default").Create(ctx, examplePod("default", "web-3"), metav1.CreateOptions{}); err != nil {
		fmt.Println("Create:", err)
		return
	}
	select {
	case name := <-added:
		fmt.Println("added", name)
	case <-ctx.Done():
		fmt.Println("no add event")
	}
	// Output:
	// pods in default: [web-1 web-2]
	// added web-3
}
