package dynamicinformer_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/cache"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	waitTimeout  = 20 * time.Second
	pollInterval = 2 * time.Millisecond
)

var (
	widgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	podsGVR    = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

func newObject(gvr schema.GroupVersionResource, kind, ns, name string, lbls map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(gvr.GroupVersion().String())
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(lbls)
	return u
}

// kubeSystem is the kube-system namespace of a cluster whose identity is uid.
func kubeSystem(uid string) *unstructured.Unstructured {
	ns := newObject(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "Namespace", "", "kube-system", nil)
	ns.SetUID(types.UID(uid))
	return ns
}

// newFakeClient returns a fake dynamic client that knows widgets and pods and
// counts the watches opened per resource.
func newFakeClient(objs ...runtime.Object) (*fake.FakeDynamicClient, func(schema.GroupVersionResource) int) {
	client := fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		widgetsGVR: "WidgetList",
		podsGVR:    "PodList",
	}, objs...)
	var mu sync.Mutex
	watches := map[schema.GroupVersionResource]int{}
	client.PrependWatchReactor("*", func(a clienttesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		watches[a.GetResource()]++
		return false, nil, nil
	})
	return client, func(gvr schema.GroupVersionResource) int {
		mu.Lock()
		defer mu.Unlock()
		return watches[gvr]
	}
}

func objectKeys(objs []runtime.Object) []string {
	var out []string
	for _, o := range objs {
		u := o.(*unstructured.Unstructured)
		out = append(out, u.GetNamespace()+"/"+u.GetName())
	}
	sort.Strings(out)
	return out
}

func TestDynamicFactoryInformersAndListersPerResource(t *testing.T) {
	client, watches := newFakeClient(
		newObject(widgetsGVR, "Widget", "a", "w1", map[string]string{"app": "web"}),
		newObject(widgetsGVR, "Widget", "b", "w2", nil),
		newObject(podsGVR, "Pod", "a", "p1", nil),
	)
	factory := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	widgets := factory.ForResource(widgetsGVR)
	assert.True(t, widgets == factory.ForResource(widgetsGVR), "same GVR, another informer")
	assert.True(t, widgets.Informer() == factory.ForResource(widgetsGVR).Informer())
	pods := factory.ForResource(podsGVR)
	assert.False(t, pods.Informer() == widgets.Informer())

	events := make(chan string, 10)
	_, err := widgets.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { events <- "add " + obj.(*unstructured.Unstructured).GetName() },
		UpdateFunc: func(_, obj interface{}) { events <- "update " + obj.(*unstructured.Unstructured).GetName() },
		DeleteFunc: func(obj interface{}) {
			key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
			events <- "delete " + key
		},
	})
	require.NoError(t, err)
	stop := make(chan struct{})
	defer factory.Shutdown()
	defer close(stop)
	factory.Start(stop)
	assert.Equal(t, map[schema.GroupVersionResource]bool{widgetsGVR: true, podsGVR: true}, factory.WaitForCacheSync(stop))
	require.Eventually(t, func() bool { return watches(widgetsGVR) > 0 && watches(podsGVR) > 0 }, waitTimeout, pollInterval)

	expect := func(want ...string) {
		t.Helper()
		var got []string
		for range want {
			select {
			case e := <-events:
				got = append(got, e)
			case <-time.After(waitTimeout):
				t.Fatalf("timed out; got %v, want %v", got, want)
			}
		}
		assert.ElementsMatch(t, want, got)
	}
	expect("add w1", "add w2")

	all, err := widgets.Lister().List(labels.Everything())
	require.NoError(t, err)
	assert.Equal(t, []string{"a/w1", "b/w2"}, objectKeys(all))
	web, err := widgets.Lister().List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"a/w1"}, objectKeys(web))

	ctx := context.Background()
	res := client.Resource(widgetsGVR).Namespace("a")
	_, err = res.Create(ctx, newObject(widgetsGVR, "Widget", "a", "w3", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	expect("add w3")
	_, err = res.Update(ctx, newObject(widgetsGVR, "Widget", "a", "w3", map[string]string{"v": "2"}), metav1.UpdateOptions{})
	require.NoError(t, err)
	expect("update w3")
	got, err := widgets.Lister().ByNamespace("a").Get("w3")
	require.NoError(t, err)
	assert.Equal(t, "2", got.(*unstructured.Unstructured).GetLabels()["v"])
	require.NoError(t, res.Delete(ctx, "w3", metav1.DeleteOptions{}))
	expect("delete a/w3")

	_, err = widgets.Lister().ByNamespace("a").Get("w3")
	require.True(t, apierrors.IsNotFound(err))
	assert.Equal(t, `widgets.example.com "w3" not found`, err.Error())
	p, err := pods.Lister().ByNamespace("a").Get("p1")
	require.NoError(t, err)
	assert.Equal(t, "p1", p.(*unstructured.Unstructured).GetName())
}

func TestNewFilteredDynamicInformerListsOneNamespace(t *testing.T) {
	client, _ := newFakeClient(newObject(widgetsGVR, "Widget", "a", "w1", nil), newObject(widgetsGVR, "Widget", "b", "w2", nil))
	informer := dynamicinformer.NewFilteredDynamicInformer(client, widgetsGVR, "b", 0, cache.Indexers{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { informer.Informer().RunWithContext(ctx) })
	defer wg.Wait()
	defer cancel()
	require.True(t, cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced))
	all, err := informer.Lister().List(labels.Everything())
	require.NoError(t, err)
	assert.Equal(t, []string{"b/w2"}, objectKeys(all))
}

func TestDynamicInformerWithNilClientFailsWithoutPanic(t *testing.T) {
	informer := dynamicinformer.NewFilteredDynamicInformer(nil, widgetsGVR, "", 0, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { informer.Informer().RunWithContext(ctx) })
	// The LIST fails (no panic); the informer keeps retrying until stopped.
	cancel()
	wg.Wait()
	assert.False(t, informer.Informer().HasSynced())
}
