package metadatainformer_test

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	kubefake "k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/cache"
	informerscorev1 "github.com/kinformer/kinformer/informers/core/v1"
	metadatainformer "github.com/kinformer/kinformer/informers/metadata"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	waitTimeout  = 20 * time.Second
	pollInterval = 2 * time.Millisecond
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func podMetadata(ns, name string, lbls map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
	}
}

// kubeSystemMetadata is the kube-system namespace of a cluster whose
// identity is uid.
func kubeSystemMetadata(uid string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: types.UID(uid)},
	}
}

func newFakeClient(t testing.TB, objs ...k8sruntime.Object) (*metadatafake.FakeMetadataClient, func() int) {
	scheme := metadatafake.NewTestScheme()
	require.NoError(t, metav1.AddMetaToScheme(scheme))
	client := metadatafake.NewSimpleMetadataClient(scheme, objs...)
	var mu sync.Mutex
	watches := 0
	client.PrependWatchReactor("*", func(clienttesting.Action) (bool, watch.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		watches++
		return false, nil, nil
	})
	return client, func() int {
		mu.Lock()
		defer mu.Unlock()
		return watches
	}
}

func objectKeys(objs []k8sruntime.Object) []string {
	var out []string
	for _, o := range objs {
		m := o.(*metav1.PartialObjectMetadata)
		out = append(out, m.Namespace+"/"+m.Name)
	}
	sort.Strings(out)
	return out
}

func TestMetadataFactoryListsFiltersAndTransforms(t *testing.T) {
	cases := []struct {
		name      string
		factory   func(c *metadatafake.FakeMetadataClient) metadatainformer.SharedInformerFactory
		want      []string
		transform bool
	}{
		{
			name: "all namespaces",
			factory: func(c *metadatafake.FakeMetadataClient) metadatainformer.SharedInformerFactory {
				return metadatainformer.NewSharedInformerFactory(c, 0)
			},
			want: []string{"a/p1", "a/p2", "b/p3"},
		},
		{
			name: "filtered by namespace and label",
			factory: func(c *metadatafake.FakeMetadataClient) metadatainformer.SharedInformerFactory {
				return metadatainformer.NewFilteredSharedInformerFactory(c, 0, "a", func(o *metav1.ListOptions) { o.LabelSelector = "app=web" })
			},
			want: []string{"a/p1"},
		},
		{
			name: "with transform",
			factory: func(c *metadatafake.FakeMetadataClient) metadatainformer.SharedInformerFactory {
				return metadatainformer.NewSharedInformerFactoryWithOptions(c, 0, nil, metadatainformer.WithTransform(func(obj interface{}) (interface{}, error) {
					m := obj.(*metav1.PartialObjectMetadata).DeepCopy()
					m.Annotations = map[string]string{"seen": "yes"}
					return m, nil
				}))
			},
			want:      []string{"a/p1", "a/p2", "b/p3"},
			transform: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			client, watches := newFakeClient(t,
				podMetadata("a", "p1", map[string]string{"app": "web"}),
				podMetadata("a", "p2", nil),
				podMetadata("b", "p3", map[string]string{"app": "web"}),
			)
			factory := tc.factory(client)
			pods := factory.ForResource(podsGVR)
			assert.True(t, pods == factory.ForResource(podsGVR))
			stop := make(chan struct{})
			defer factory.Shutdown()
			defer close(stop)
			factory.Start(stop)
			factory.Start(stop)
			require.Equal(t, map[schema.GroupVersionResource]bool{podsGVR: true}, factory.WaitForCacheSync(stop))
			require.Eventually(t, func() bool { return watches() > 0 }, waitTimeout, pollInterval)

			all, err := pods.Lister().List(labels.Everything())
			require.NoError(t, err)
			assert.Equal(t, tc.want, objectKeys(all))
			for _, o := range all {
				assert.Equal(t, tc.transform, o.(*metav1.PartialObjectMetadata).Annotations["seen"] == "yes")
			}

			_, err = client.Resource(podsGVR).Namespace("a").(metadatafake.MetadataClient).CreateFake(podMetadata("a", "p4", map[string]string{"app": "web"}), metav1.CreateOptions{})
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				_, err := pods.Lister().ByNamespace("a").Get("p4")
				return err == nil
			}, waitTimeout, pollInterval)
			_, err = pods.Lister().ByNamespace("a").Get("missing")
			require.True(t, apierrors.IsNotFound(err))
			assert.Equal(t, `pods "missing" not found`, err.Error())
		})
	}
}

func TestNewFilteredMetadataInformerListsOneNamespace(t *testing.T) {
	client, _ := newFakeClient(t, podMetadata("a", "p1", nil), podMetadata("b", "p2", nil))
	informer := metadatainformer.NewFilteredMetadataInformer(client, podsGVR, "b", 0, cache.Indexers{}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { informer.Informer().RunWithContext(ctx) })
	defer wg.Wait()
	defer cancel()
	require.True(t, cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced))
	all, err := informer.Lister().List(labels.Everything())
	require.NoError(t, err)
	assert.Equal(t, []string{"b/p2"}, objectKeys(all))
}

// realisticPod is a pod of the size controllers typically see: two
// containers with env, resources and probes, and a populated status.
func realisticPod(i int) *corev1.Pod {
	name := fmt.Sprintf("web-%05d", i)
	container := func(n string) corev1.Container {
		return corev1.Container{
			Name:    n,
			Image:   "registry.example.com/team/" + n + ":v1.2.3",
			Command: []string{"/bin/server", "--port=8080", "--log-level=info"},
			Env: []corev1.EnvVar{
				{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "MODE", Value: "production"},
				{Name: "REGION", Value: "eu-west-1"},
			},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
			},
			Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz"}}},
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: name, UID: types.UID(fmt.Sprintf("uid-%05d", i)), ResourceVersion: "1",
			Labels:          map[string]string{"app": "web", "pod-template-hash": "5d8f7c6b9"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5d8f7c6b9", UID: "rs-uid"}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{container("app"), container("sidecar")}, NodeName: "node-1", ServiceAccountName: "web"},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.0.0.1", HostIP: "192.168.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.ContainersReady, Status: corev1.ConditionTrue}},
		},
	}
}

// heapPerObject runs informer until synced and returns the growth of the
// live heap per cached object, keeping the informer alive while measuring.
func heapPerObject(t *testing.T, n int, informer cache.SharedIndexInformer) float64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { informer.RunWithContext(ctx) })
	require.True(t, cache.WaitForCacheSync(ctx.Done(), informer.HasSynced))
	require.Len(t, informer.GetStore().ListKeys(), n)
	runtime.GC()
	runtime.ReadMemStats(&after)
	cancel()
	wg.Wait()
	runtime.KeepAlive(informer)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
}

// TestMetadataInformerCachesAPodInUnderHalfTheHeap measures the live heap an
// informer's cache costs per pod, typed versus metadata-only, and checks that
// the metadata informer needs well under half.
func TestMetadataInformerCachesAPodInUnderHalfTheHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	const n = 2000
	var typedObjs, metaObjs []k8sruntime.Object
	for i := range n {
		p := realisticPod(i)
		typedObjs = append(typedObjs, p)
		metaObjs = append(metaObjs, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: p.ObjectMeta})
	}
	kube := kubefake.NewSimpleClientset(typedObjs...) //nolint:staticcheck // no managed fields needed
	typed := heapPerObject(t, n, informerscorev1.NewPodInformer(kube, metav1.NamespaceAll, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}))
	client, _ := newFakeClient(t, metaObjs...)
	meta := heapPerObject(t, n, metadatainformer.NewFilteredMetadataInformer(client, podsGVR, metav1.NamespaceAll, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer())
	t.Logf("live heap per cached pod: typed informer %.0f B, metadata informer %.0f B (%.0f%%)", typed, meta, 100*meta/typed)
	assert.Less(t, meta, typed/2)
}
