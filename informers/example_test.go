package informers_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"

	// The client-go program this example was written as imported
	// k8s.io/client-go/tools/cache, k8s.io/client-go/informers and
	// k8s.io/client-go/listers/core/v1; only these paths changed.
	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	listerscorev1 "github.com/kinformer/kinformer/listers/core/v1"
)

// Example is a small controller written against client-go's informers,
// listers and tools/cache, moved to kinformer by changing import paths.
func Example() {
	client := fake.NewSimpleClientset(&corev1.Pod{ //nolint:staticcheck // fake for the example
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-1", Labels: map[string]string{"app": "web"}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	factory := informers.NewSharedInformerFactory(client, 0)
	defer factory.Shutdown()
	defer cancel()

	podInformer := factory.Core().V1().Pods()
	added := make(chan string, 1)
	_, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				added <- key
			}
		},
	})
	if err != nil {
		fmt.Println("add handler:", err)
		return
	}
	var lister listerscorev1.PodLister = podInformer.Lister()

	factory.StartWithContext(ctx)
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		fmt.Println("sync:", err)
		return
	}
	fmt.Println("added:", <-added)
	pods, _ := lister.Pods("default").List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	fmt.Println("web pods:", len(pods))
	_, err = lister.Pods("default").Get("web-2")
	fmt.Println(err)
	// Output:
	// added: default/web-1
	// web pods: 1
	// pod "web-2" not found
}
