// Command migrate is a program written against client-go's informers, listers and
// tools/cache, moved to kinformer by changing its import paths and nothing else.
//
// Before the move its imports read:
//
//	"k8s.io/client-go/informers"
//	listersappsv1 "k8s.io/client-go/listers/apps/v1"
//	listerscorev1 "k8s.io/client-go/listers/core/v1"
//	"k8s.io/client-go/tools/cache"
//
// and the move is one command over the source tree:
//
//	sed -i -e 's#k8s.io/client-go/tools/cache#github.com/kinformer/kinformer/cache#' \
//	       -e 's#k8s.io/client-go/informers#github.com/kinformer/kinformer/informers#' \
//	       -e 's#k8s.io/client-go/listers#github.com/kinformer/kinformer/listers#' $(git ls-files '*.go')
//
// It runs on client-go's fake clientset: it lists deployments and the pods they own through
// the listers, creates more objects, and prints what its handlers and listers see.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	listersappsv1 "github.com/kinformer/kinformer/listers/apps/v1"
	listerscorev1 "github.com/kinformer/kinformer/listers/core/v1"
)

func main() {
	timeout := flag.Duration("duration", 10*time.Second, "give up after this long")
	flag.Parse()
	if flag.NArg() > 0 || *timeout <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	err := run(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "migrate:", err)
		os.Exit(1)
	}
}

func pod(name, app string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{"app": app}}}
}

func run(ctx context.Context) error {
	replicas := int32(2)
	client := fake.NewSimpleClientset( //nolint:staticcheck // the fake a client-go program of this age would use
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
			Spec: appsv1.DeploymentSpec{Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		},
		pod("web-1", "web"), pod("web-2", "web"), pod("db-1", "db"),
	)

	// The fake clientset has no resourceVersions: a write made before the pod watch is open
	// would be lost, so the program notes when the watch opens and writes only after that.
	watching := make(chan struct{})
	var once sync.Once
	client.PrependWatchReactor("pods", func(clienttesting.Action) (bool, watch.Interface, error) {
		once.Do(func() { close(watching) })
		return false, nil, nil
	})

	factory := informers.NewSharedInformerFactoryWithOptions(client, 30*time.Second, informers.WithNamespace("default"))
	podInformer := factory.Core().V1().Pods()
	deployInformer := factory.Apps().V1().Deployments()

	events := make(chan string, 16)
	_, err := podInformer.Informer().AddEventHandler(cache.FilteringResourceEventHandler{
		FilterFunc: func(obj interface{}) bool {
			p, ok := obj.(*corev1.Pod)
			return ok && p.Labels["app"] == "web"
		},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj interface{}) {
				key, _ := cache.MetaNamespaceKeyFunc(obj)
				events <- "add " + key
			},
			DeleteFunc: func(obj interface{}) {
				key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
				events <- "delete " + key
			},
		},
	})
	if err != nil {
		return err
	}
	var podLister listerscorev1.PodLister = podInformer.Lister()
	var deployLister listersappsv1.DeploymentLister = deployInformer.Lister()

	factory.Start(ctx.Done())
	defer factory.Shutdown()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("cache for %v did not sync", typ)
		}
	}

	deployments, err := deployLister.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, d := range deployments {
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil {
			return err
		}
		pods, err := podLister.Pods(d.Namespace).List(sel)
		if err != nil {
			return err
		}
		names := make([]string, 0, len(pods))
		for _, p := range pods {
			names = append(names, p.Name)
		}
		sort.Strings(names)
		fmt.Printf("deployment %s/%s wants %d replicas, has %v\n", d.Namespace, d.Name, *d.Spec.Replicas, names)
	}

	var initial []string
	for range 2 {
		select {
		case e := <-events:
			initial = append(initial, e)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	sort.Strings(initial)
	fmt.Println("handler saw:", initial)

	select {
	case <-watching:
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, step := range []func() error{
		func() error {
			_, err := client.CoreV1().Pods("default").Create(ctx, pod("web-3", "web"), metav1.CreateOptions{})
			return err
		},
		func() error { return client.CoreV1().Pods("default").Delete(ctx, "web-1", metav1.DeleteOptions{}) },
	} {
		if err := retryUntilSeen(ctx, step, events); err != nil {
			return err
		}
	}
	_, err = podLister.Pods("default").Get("web-1")
	fmt.Println("lister after delete:", err)
	return nil
}

// retryUntilSeen runs write and waits for the handler to report it.
func retryUntilSeen(ctx context.Context, write func() error, events <-chan string) error {
	if err := write(); err != nil {
		return err
	}
	select {
	case e := <-events:
		fmt.Println("handler saw:", e)
		return nil
	case <-ctx.Done():
		return fmt.Errorf("event not seen: %w", ctx.Err())
	}
}
