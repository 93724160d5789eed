package gvrfactory

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/informers/internal/build"
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
	ns := newObject(NamespacesGVR, "Namespace", "", "kube-system", nil)
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

// countLists counts the LIST requests for gvr client has served so far.
func countLists(client *fake.FakeDynamicClient, gvr schema.GroupVersionResource) int {
	n := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" && a.GetResource() == gvr {
			n++
		}
	}
	return n
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

// fakeClient describes a fake dynamic client to a Factory, as the dynamic
// package describes its client.
func fakeClient(client *fake.FakeDynamicClient) Client {
	return Client{
		Client:    client,
		NewObject: func() runtime.Object { return &unstructured.Unstructured{} },
		ListAndWatch: func(gvr schema.GroupVersionResource, namespace string) (build.ListFunc, build.WatchFunc) {
			return func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
					return client.Resource(gvr).Namespace(namespace).List(ctx, opts)
				}, func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
					return client.Resource(gvr).Namespace(namespace).Watch(ctx, opts)
				}
		},
		Cluster: KubeSystemUID(client.Resource(NamespacesGVR).Get),
	}
}

// newFactory returns a ready Factory over client without resync, its
// options set by options in order, as a factory package's options do.
func newFactory(client *fake.FakeDynamicClient, options ...func(*Options)) *Factory {
	f := New(fakeClient(client), 0)
	for _, set := range options {
		set(&f.Options)
	}
	f.Init()
	return f
}
