package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
	"github.com/kinformer/kinformer/internal/testenv"
)

// TestFactoryInformersForSeveralGroups runs the factory's informers for deployments (apps),
// configmaps and services (core), namespaces (cluster-scoped core) and cluster roles
// (cluster-scoped rbac) against the real server: each syncs, sees a create, an update and a
// delete, and its lister equals a fresh LIST.
func TestFactoryInformersForSeveralGroups(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	ns := testenv.Namespace(t, cs)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	factory := informers.NewSharedInformerFactory(cs, 0)
	type resource struct {
		name     string
		informer cache.SharedIndexInformer
		create   func(name string) error
		update   func(name string) error
		remove   func(name string) error
		list     func(ctx context.Context) ([]metav1.Object, error)
	}
	label := map[string]string{"it": ns}
	meta := func(name string, namespaced bool) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: name, Labels: label}
		if namespaced {
			m.Namespace = ns
		}
		return m
	}
	relabel := `{"metadata":{"labels":{"updated":"yes"}}}`
	resources := []resource{
		{
			name:     "deployments",
			informer: factory.Apps().V1().Deployments().Informer(),
			create: func(name string) error {
				d := &appsv1.Deployment{ObjectMeta: meta(name, true), Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](1),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:1"}}},
					},
				}}
				_, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
				return err
			},
			update: func(name string) error {
				_, err := cs.AppsV1().Deployments(ns).Patch(ctx, name, "application/merge-patch+json", []byte(relabel), metav1.PatchOptions{})
				return err
			},
			remove: func(name string) error { return cs.AppsV1().Deployments(ns).Delete(ctx, name, metav1.DeleteOptions{}) },
			list: func(ctx context.Context) ([]metav1.Object, error) {
				l, err := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
				return itItems(l, err, func(l *appsv1.DeploymentList) []metav1.Object { return itPtrs(l.Items) })
			},
		},
		{
			name:     "configmaps",
			informer: factory.Core().V1().ConfigMaps().Informer(),
			create: func(name string) error {
				_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta(name, true)}, metav1.CreateOptions{})
				return err
			},
			update: func(name string) error {
				_, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, name, "application/merge-patch+json", []byte(relabel), metav1.PatchOptions{})
				return err
			},
			remove: func(name string) error { return cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{}) },
			list: func(ctx context.Context) ([]metav1.Object, error) {
				l, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
				return itItems(l, err, func(l *corev1.ConfigMapList) []metav1.Object { return itPtrs(l.Items) })
			},
		},
		{
			name:     "services",
			informer: factory.Core().V1().Services().Informer(),
			create: func(name string) error {
				s := &corev1.Service{ObjectMeta: meta(name, true), Spec: corev1.ServiceSpec{
					Ports: []corev1.ServicePort{{Port: 80}},
				}}
				_, err := cs.CoreV1().Services(ns).Create(ctx, s, metav1.CreateOptions{})
				return err
			},
			update: func(name string) error {
				_, err := cs.CoreV1().Services(ns).Patch(ctx, name, "application/merge-patch+json", []byte(relabel), metav1.PatchOptions{})
				return err
			},
			remove: func(name string) error { return cs.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{}) },
			list: func(ctx context.Context) ([]metav1.Object, error) {
				l, err := cs.CoreV1().Services("").List(ctx, metav1.ListOptions{})
				return itItems(l, err, func(l *corev1.ServiceList) []metav1.Object { return itPtrs(l.Items) })
			},
		},
		{
			// Namespaces cannot be deleted for good without a namespace controller: they stay
			// Terminating. The informer then sees an update, not a delete, so this entry
			// checks create and update, and the delete as a deletionTimestamp.
			name:     "namespaces",
			informer: factory.Core().V1().Namespaces().Informer(),
			create: func(name string) error {
				_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: meta(name, false)}, metav1.CreateOptions{})
				return err
			},
			update: func(name string) error {
				_, err := cs.CoreV1().Namespaces().Patch(ctx, name, "application/merge-patch+json", []byte(relabel), metav1.PatchOptions{})
				return err
			},
			list: func(ctx context.Context) ([]metav1.Object, error) {
				l, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
				return itItems(l, err, func(l *corev1.NamespaceList) []metav1.Object { return itPtrs(l.Items) })
			},
		},
		{
			name:     "clusterroles",
			informer: factory.Rbac().V1().ClusterRoles().Informer(),
			create: func(name string) error {
				r := &rbacv1.ClusterRole{ObjectMeta: meta(name, false), Rules: []rbacv1.PolicyRule{{
					APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"},
				}}}
				_, err := cs.RbacV1().ClusterRoles().Create(ctx, r, metav1.CreateOptions{})
				return err
			},
			update: func(name string) error {
				_, err := cs.RbacV1().ClusterRoles().Patch(ctx, name, "application/merge-patch+json", []byte(relabel), metav1.PatchOptions{})
				return err
			},
			remove: func(name string) error { return cs.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{}) },
			list: func(ctx context.Context) ([]metav1.Object, error) {
				l, err := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
				return itItems(l, err, func(l *rbacv1.ClusterRoleList) []metav1.Object { return itPtrs(l.Items) })
			},
		},
	}
	recs := make([]*itRecorder, len(resources))
	var synced []cache.InformerSynced
	for i, r := range resources {
		recs[i] = &itRecorder{}
		reg, err := r.informer.AddEventHandler(recs[i].handler())
		require.NoError(t, err)
		synced = append(synced, reg.HasSynced)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() {
		close(stop)
		factory.Shutdown()
	}()
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		require.True(t, ok, "%v did not sync", typ)
	}
	itWaitSynced(t, time.Minute, synced...)

	for i, r := range resources {
		name := fmt.Sprintf("%s-%s", ns, r.name)
		require.NoError(t, r.create(name), r.name)
		require.NoError(t, r.update(name), r.name)
		key := name
		if r.name != "namespaces" && r.name != "clusterroles" {
			key = ns + "/" + name
		}
		want := "update"
		if r.remove != nil {
			require.NoError(t, r.remove(name), r.name)
			want = "delete"
		}
		rec := recs[i]
		require.Eventually(t, func() bool { return rec.last()[key].kind == want }, time.Minute, 20*time.Millisecond,
			"%s: the handler's last event for %s is %+v, want %s", r.name, key, rec.last()[key], want)
		kinds := []string{}
		for _, ev := range rec.snapshot() {
			if ev.key == key {
				kinds = append(kinds, ev.kind)
			}
		}
		require.Equal(t, "add", kinds[0], "%s: events for %s: %v", r.name, key, kinds)
		require.Contains(t, kinds, "update", "%s: events for %s: %v", r.name, key, kinds)
		itStoreMatchesServer(t, r.informer.GetStore(), r.list, time.Minute)
	}
}

// TestDynamicInformerForCustomResource creates a CustomResourceDefinition and runs the dynamic
// informer factory's informer over its objects, as unstructured objects.
func TestDynamicInformerForCustomResource(t *testing.T) {
	env := sharedEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := env.Clientset()
	dyn := dynamic.NewForConfigOrDie(env.Config())
	ns := testenv.Namespace(t, cs)

	gvr := schema.GroupVersionResource{Group: "it.kinformer.dev", Version: "v1", Resource: "widgets"}
	require.NoError(t, env.CreateCRD(ctx, gvr, "Widget"))
	widget := func(name string, size int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "it.kinformer.dev/v1", "kind": "Widget",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     map[string]any{"size": size},
		}}
	}
	_, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, widget("first", 1), metav1.CreateOptions{})
	require.NoError(t, err)

	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
	informer := factory.ForResource(gvr).Informer()
	var rec itRecorder
	reg, err := informer.AddEventHandler(rec.handler())
	require.NoError(t, err)
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() {
		close(stop)
		factory.Shutdown()
	}()
	for r, ok := range factory.WaitForCacheSync(ctx.Done()) {
		require.True(t, ok, "%v did not sync", r)
	}
	itWaitSynced(t, time.Minute, reg.HasSynced)

	_, err = dyn.Resource(gvr).Namespace(ns).Create(ctx, widget("second", 2), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = dyn.Resource(gvr).Namespace(ns).Patch(ctx, "first", "application/merge-patch+json", []byte(`{"spec":{"size":10}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	require.NoError(t, dyn.Resource(gvr).Namespace(ns).Delete(ctx, "second", metav1.DeleteOptions{}))

	require.Eventually(t, func() bool {
		last := rec.last()
		return last[ns+"/first"].kind == "update" && last[ns+"/second"].kind == "delete"
	}, time.Minute, 20*time.Millisecond, "events: %+v", rec.snapshot())
	obj, exists, err := informer.GetStore().GetByKey(ns + "/first")
	require.NoError(t, err)
	require.True(t, exists)
	size, _, _ := unstructured.NestedInt64(obj.(*unstructured.Unstructured).Object, "spec", "size")
	require.Equal(t, int64(10), size)
	itStoreMatchesServer(t, informer.GetStore(), func(ctx context.Context) ([]metav1.Object, error) {
		l, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		out := make([]metav1.Object, 0, len(l.Items))
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		return out, nil
	}, time.Minute)
}

// itItems turns a typed list and its error into metav1.Objects.
func itItems[L any](l L, err error, items func(L) []metav1.Object) ([]metav1.Object, error) {
	if err != nil {
		return nil, err
	}
	return items(l), nil
}

// itPtrs returns pointers to the elements of items as metav1.Objects.
func itPtrs[T any, PT interface {
	*T
	metav1.Object
}](items []T) []metav1.Object {
	out := make([]metav1.Object, len(items))
	for i := range items {
		out[i] = PT(&items[i])
	}
	return out
}
