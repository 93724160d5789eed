package controllerruntime_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	kcache "github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/testenv"
	"github.com/kinformer/kinformer/interop/controllerruntime"
)

// The hooks have the type controller-runtime declares.
var (
	_ newInformerFunc = crcache.Options{}.NewInformer
	_                 = crcache.Options{NewInformer: controllerruntime.NewInformer}
	_                 = crcache.Options{NewInformer: controllerruntime.NewInformerFunc()}
)

// podNames returns the namespace/name of each pod of list, sorted.
func podNames(list *corev1.PodList) []string {
	var out []string
	for i := range list.Items {
		out = append(out, list.Items[i].Namespace+"/"+list.Items[i].Name)
	}
	slices.Sort(out)
	return out
}

// objectNames returns the name of each object, sorted.
func objectNames[T client.Object](items []T) []string {
	var out []string
	for _, o := range items {
		out = append(out, o.GetName())
	}
	slices.Sort(out)
	return out
}

func TestReconcilerSeesPodsCreatedUpdatedAndDeleted(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	forEachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		ns := testenv.Namespace(t, cs)
		mgr := newManager(t, env.Config(), e, manager.Options{})
		r := newPodController(t, mgr, ns)
		startManager(t, mgr)

		// The controller's informer is the engine's: kinformer's can be
		// unwrapped and reports itself started and synced.
		informer, err := mgr.GetCache().GetInformer(ctx, &corev1.Pod{})
		if err != nil {
			t.Fatalf("GetInformer: %v", err)
		}
		k, ok := controllerruntime.Unwrap(informer)
		if ok != e.kinformer() {
			t.Fatalf("Unwrap of the pod informer: ok = %v, want %v", ok, e.kinformer())
		}
		if ok {
			status, _ := kcache.GetInformerStatus(k)
			if !status.Started || !status.Synced || status.Stopped {
				t.Fatalf("kinformer status of the controller's informer: %+v", status)
			}
		}

		key := types.NamespacedName{Namespace: ns, Name: "web-1"}
		createPod(t, cs, newPod(ns, key.Name, map[string]string{"app": "web"}))
		r.waitForView(t, key, "created", func(v podView) bool { return v.found && v.labels["app"] == "web" })

		pod, err := cs.CoreV1().Pods(ns).Get(ctx, key.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pod.Labels["tier"] = "front"
		if _, err := cs.CoreV1().Pods(ns).Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		r.waitForView(t, key, "updated", func(v podView) bool { return v.found && v.labels["tier"] == "front" })

		if err := cs.CoreV1().Pods(ns).Delete(ctx, key.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		r.waitForView(t, key, "deleted", func(v podView) bool { return !v.found })
		deletes := r.deletesOf(key)
		if len(deletes) != 1 || deletes[0].DeleteStateUnknown {
			t.Fatalf("delete events of %s: %+v, want one with its final state known", key, deletes)
		}
	})
}

func TestManagerClientReadsFromTheCache(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	forEachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		ns := testenv.Namespace(t, cs)
		for _, p := range []struct{ name, app, node string }{{"a", "web", "n1"}, {"b", "web", "n2"}, {"c", "db", "n1"}} {
			pod := newPod(ns, p.name, map[string]string{"app": p.app})
			pod.Spec.NodeName = p.node
			createPod(t, cs, pod)
		}
		mgr := newManager(t, env.Config(), e, manager.Options{})
		indexer := mgr.GetFieldIndexer()
		if err := indexer.IndexField(ctx, &corev1.Pod{}, "metadata.name", func(o client.Object) []string {
			return []string{o.GetName()}
		}); err != nil {
			t.Fatalf("IndexField metadata.name: %v", err)
		}
		if err := indexer.IndexField(ctx, &corev1.Pod{}, "spec.nodeName", func(o client.Object) []string {
			return []string{o.(*corev1.Pod).Spec.NodeName}
		}); err != nil {
			t.Fatalf("IndexField spec.nodeName: %v", err)
		}
		startManager(t, mgr)
		c := mgr.GetClient()

		var pod corev1.Pod
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "a"}, &pod); err != nil || pod.Labels["app"] != "web" {
			t.Fatalf("Get a: %v, labels %v", err, pod.Labels)
		}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "missing"}, &pod); !apierrors.IsNotFound(err) {
			t.Fatalf("Get missing: %v, want NotFound", err)
		}

		list := func(opts ...client.ListOption) ([]string, error) {
			var pods corev1.PodList
			err := c.List(ctx, &pods, append([]client.ListOption{client.InNamespace(ns)}, opts...)...)
			return podNames(&pods), err
		}
		for _, tc := range []struct {
			name string
			opts []client.ListOption
			want []string
		}{
			{"everything", nil, []string{ns + "/a", ns + "/b", ns + "/c"}},
			{"label selector", []client.ListOption{client.MatchingLabels{"app": "web"}}, []string{ns + "/a", ns + "/b"}},
			{"field selector on metadata.name", []client.ListOption{client.MatchingFields{"metadata.name": "b"}}, []string{ns + "/b"}},
			{"field indexer", []client.ListOption{client.MatchingFields{"spec.nodeName": "n1"}}, []string{ns + "/a", ns + "/c"}},
			{"field indexer and label selector", []client.ListOption{client.MatchingFields{"spec.nodeName": "n1"}, client.MatchingLabels{"app": "web"}}, []string{ns + "/a"}},
		} {
			got, err := list(tc.opts...)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("List, %s: %v %v, want %v", tc.name, got, err, tc.want)
			}
		}
		// A field no indexer was registered for is an error, not an
		// empty list.
		if got, err := list(client.MatchingFields{"spec.restartPolicy": "Always"}); err == nil {
			t.Errorf("List by a field without an index: %v and no error", got)
		}

		// The cache follows writes: a new pod shows in the index.
		created := newPod(ns, "d", nil)
		created.Spec.NodeName = "n2"
		createPod(t, cs, created)
		eventually(t, "the pod created after the start is listed by its node", func() (bool, string) {
			got, err := list(client.MatchingFields{"spec.nodeName": "n2"})
			return err == nil && slices.Equal(got, []string{ns + "/b", ns + "/d"}), describeNames(got, err)
		})
	})
}

func TestByObjectRestrictsPodsAndDefaultTransformStripsManagedFields(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	forEachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		ns1, ns2 := testenv.Namespace(t, cs), testenv.Namespace(t, cs)
		web := createPod(t, cs, newPod(ns1, "web-1", map[string]string{"app": "web"}))
		createPod(t, cs, newPod(ns1, "db-1", map[string]string{"app": "db"}))
		createPod(t, cs, newPod(ns2, "web-2", map[string]string{"app": "web"}))
		if len(web.ManagedFields) == 0 {
			t.Fatal("the API server returned the created pod without managedFields: the transform check below could not fail")
		}
		if _, err := cs.CoreV1().ConfigMaps(ns2).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}

		mgr := newManager(t, env.Config(), e, manager.Options{Cache: crcache.Options{
			ByObject: map[client.Object]crcache.ByObject{&corev1.Pod{}: {
				Namespaces: map[string]crcache.Config{ns1: {}},
				Label:      labels.SelectorFromSet(labels.Set{"app": "web"}),
			}},
			DefaultTransform: crcache.TransformStripManagedFields(),
		}})
		startManager(t, mgr)
		c := mgr.GetClient()

		listPods := func() ([]string, error) {
			var pods corev1.PodList
			if err := c.List(ctx, &pods); err != nil {
				return nil, err
			}
			for i := range pods.Items {
				if pods.Items[i].ManagedFields != nil {
					t.Errorf("pod %s/%s read from the cache with managedFields", pods.Items[i].Namespace, pods.Items[i].Name)
				}
			}
			return podNames(&pods), nil
		}
		if got, err := listPods(); err != nil || !slices.Equal(got, []string{ns1 + "/web-1"}) {
			t.Fatalf("List pods: %v %v, want only %s/web-1", got, err, ns1)
		}
		var pod corev1.Pod
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns1, Name: "web-1"}, &pod); err != nil || pod.ManagedFields != nil {
			t.Fatalf("Get web-1: %v, managedFields %v", err, pod.ManagedFields)
		}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns1, Name: "db-1"}, &pod); !apierrors.IsNotFound(err) {
			t.Errorf("Get of a pod outside the label selector: %v, want NotFound", err)
		}
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns2, Name: "web-2"}, &pod); err == nil {
			t.Errorf("Get of a pod outside the cached namespace succeeded")
		}
		// The restriction is the pods'; config maps are cached from every
		// namespace, with the default transform.
		var cm corev1.ConfigMap
		if err := c.Get(ctx, types.NamespacedName{Namespace: ns2, Name: "settings"}, &cm); err != nil || cm.ManagedFields != nil {
			t.Errorf("Get config map: %v, managedFields %v", err, cm.ManagedFields)
		}

		// A pod entering the selection appears, one leaving it disappears.
		createPod(t, cs, newPod(ns1, "web-3", map[string]string{"app": "web"}))
		eventually(t, "a new pod of the selection is cached", func() (bool, string) {
			got, err := listPods()
			return err == nil && slices.Equal(got, []string{ns1 + "/web-1", ns1 + "/web-3"}), describeNames(got, err)
		})
		relabelled, err := cs.CoreV1().Pods(ns1).Get(ctx, "web-1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		relabelled.Labels["app"] = "db"
		if _, err := cs.CoreV1().Pods(ns1).Update(ctx, relabelled, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "a pod relabelled out of the selection leaves the cache", func() (bool, string) {
			got, err := listPods()
			return err == nil && slices.Equal(got, []string{ns1 + "/web-3"}), describeNames(got, err)
		})
	})
}

func TestRemoveInformerStopsItAndGetInformerBuildsAnother(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	forEachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		ns := testenv.Namespace(t, cs)
		mgr := newManager(t, env.Config(), e, manager.Options{})
		startManager(t, mgr)
		informers := mgr.GetCache()

		first, err := informers.GetInformer(ctx, &corev1.ConfigMap{})
		if err != nil || !first.HasSynced() {
			t.Fatalf("GetInformer: %v, synced %v", err, err == nil && first.HasSynced())
		}
		if err := informers.RemoveInformer(ctx, &corev1.ConfigMap{}); err != nil {
			t.Fatalf("RemoveInformer: %v", err)
		}
		eventually(t, "the removed informer stops", func() (bool, string) { return first.IsStopped(), "running" })
		if k, ok := controllerruntime.Unwrap(first); ok {
			if status, _ := kcache.GetInformerStatus(k); !status.Stopped {
				t.Errorf("kinformer status of the removed informer: %+v, want Stopped", status)
			}
		}

		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		second, err := informers.GetInformer(ctx, &corev1.ConfigMap{})
		if err != nil {
			t.Fatalf("GetInformer after RemoveInformer: %v", err)
		}
		if second == first || second.IsStopped() || !second.HasSynced() {
			t.Fatalf("GetInformer after RemoveInformer: same %v, stopped %v, synced %v", second == first, second.IsStopped(), second.HasSynced())
		}
		if _, ok := controllerruntime.Unwrap(second); ok != e.kinformer() {
			t.Errorf("Unwrap of the new informer: %v, want %v", ok, e.kinformer())
		}
		eventually(t, "the new informer caches a config map created after the removal", func() (bool, string) {
			var cms corev1.ConfigMapList
			err := mgr.GetClient().List(ctx, &cms, client.InNamespace(ns))
			names := objectNames(ptrs(cms.Items))
			return err == nil && slices.Equal(names, []string{"after"}), describeNames(names, err)
		})
	})
}

func TestManagerStopsWithoutLeavingGoroutines(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	forEachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		ns := testenv.Namespace(t, cs)
		before := goleak.IgnoreCurrent()

		mgr := newManager(t, env.Config(), e, manager.Options{})
		r := newPodController(t, mgr, ns)
		stop := startManager(t, mgr)
		key := types.NamespacedName{Namespace: ns, Name: "p"}
		createPod(t, cs, newPod(ns, key.Name, nil))
		r.waitForView(t, key, "created", func(v podView) bool { return v.found })
		// A metadata-only informer too, started after the manager.
		var cms metav1.PartialObjectMetadataList
		cms.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
		if err := mgr.GetClient().List(ctx, &cms, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}

		stop()
		ignore := append(testenv.LeakOptions(), before)
		if !e.kinformer() {
			// client-go's Reflector sometimes leaves controller-runtime's
			// filter of the metadata-only watch blocked on a send (see
			// drainingWatch in watch.go); kinformer's hook drains it.
			ignore = append(ignore, ignoreFilteredWatch)
		}
		goleak.VerifyNone(t, ignore...)
	})
}

// ptrs returns a pointer to each element of items.
func ptrs[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// describeNames describes a list of names and an error for a failure
// message.
func describeNames(names []string, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// unstructuredKind is an empty unstructured object of a kind.
func unstructuredKind(kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	return u
}
