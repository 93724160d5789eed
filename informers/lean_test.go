package informers_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/informers"
)

// freshPod builds a pod whose strings are all freshly allocated, as a
// decoder would produce them, so that shared strings in the cache can only
// come from interning.
func freshPod(ns, name string) *corev1.Pod {
	c := strings.Clone
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   c(ns),
			Name:        name,
			Labels:      map[string]string{c("app"): c("web"), c("pod-template-hash"): c("5d8f7c6b9"), c("name"): c(name)},
			Annotations: map[string]string{c("prometheus.io/scrape"): c("true")},
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: c("apps/v1"), Kind: c("ReplicaSet"), Name: c("web-5d8f7c6b9"), UID: "rs-uid"},
			},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1",
					FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}},
			},
		},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}
}

// TestMemoryLeanFactoryStripsCachedObjects checks WithMemoryLean on the typed factory: the
// lister returns the server's objects minus managedFields (plus what the
// user's transform added), identical label values of two pods share one
// string, and the user's WithTransform, given after WithMemoryLean, still
// runs, first, on the objects with their managedFields.
func TestMemoryLeanFactoryStripsCachedObjects(t *testing.T) {
	cs := newFakeClientset(freshPod("team-a", "a"), freshPod("team-a", "b"), freshPod("team-b", "c"))
	var userCalls, sawManaged atomic.Int64
	user := func(obj any) (any, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			userCalls.Add(1)
			if len(p.ManagedFields) > 0 {
				sawManaged.Add(1)
			}
			p.Labels["seen-by"] = strings.Clone("user")
		}
		return obj, nil
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithMemoryLean(), informers.WithTransform(user))
	lister := factory.Core().V1().Pods().Lister()
	startAndSync(t, factory)

	server, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, server.Items, 3)
	for i := range server.Items {
		want := server.Items[i].DeepCopy()
		require.NotEmpty(t, want.ManagedFields, "the server objects carry managedFields")
		want.ManagedFields = nil
		want.Labels["seen-by"] = "user"
		got, err := lister.Pods(want.Namespace).Get(want.Name)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	assert.Equal(t, int64(3), userCalls.Load())
	assert.Equal(t, int64(3), sawManaged.Load(), "the user's transform runs before managedFields are dropped")

	a, err := lister.Pods("team-a").Get("a")
	require.NoError(t, err)
	c, err := lister.Pods("team-b").Get("c")
	require.NoError(t, err)
	assert.Same(t, unsafe.StringData(a.Labels["pod-template-hash"]), unsafe.StringData(c.Labels["pod-template-hash"]), "identical label values share one string")
	assert.Same(t, unsafe.StringData(a.Labels["seen-by"]), unsafe.StringData(c.Labels["seen-by"]), "values the user's transform set are shared too")
	assert.Same(t, unsafe.StringData(a.Annotations["prometheus.io/scrape"]), unsafe.StringData(c.Annotations["prometheus.io/scrape"]))
	assert.Same(t, unsafe.StringData(a.OwnerReferences[0].Name), unsafe.StringData(c.OwnerReferences[0].Name))
	assert.NotSame(t, unsafe.StringData(a.Labels["name"]), unsafe.StringData(c.Labels["name"]))

	// Events after the sync are made lean too.
	_, err = cs.CoreV1().Pods("team-b").Create(context.Background(), freshPod("team-b", "d"), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		d, err := lister.Pods("team-b").Get("d")
		return err == nil && d.ManagedFields == nil && unsafe.StringData(d.Labels["app"]) == unsafe.StringData(a.Labels["app"])
	}, serverWaitTimeout, pollInterval)
	web, err := lister.List(labels.SelectorFromSet(labels.Set{"app": "web"}))
	require.NoError(t, err)
	assert.Len(t, web, 4)
}

// TestMemoryLeanAloneStripsManagedFields checks the option alone, and that a
// factory without it keeps managedFields.
func TestMemoryLeanAloneStripsManagedFields(t *testing.T) {
	for _, lean := range []bool{true, false} {
		cs := newFakeClientset(freshPod("ns", strings.Repeat("a", 3)))
		var opts []informers.SharedInformerOption
		if lean {
			opts = append(opts, informers.WithMemoryLean())
		}
		factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, opts...)
		lister := factory.Core().V1().Pods().Lister()
		startAndSync(t, factory)
		p, err := lister.Pods("ns").Get("aaa")
		require.NoError(t, err)
		assert.Equal(t, !lean, len(p.ManagedFields) > 0, "lean=%v", lean)
		assert.Equal(t, "web", p.Labels["app"])
	}
}
