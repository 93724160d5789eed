package controllerruntime_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	kcache "github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/testenv"
	"github.com/kinformer/kinformer/interop/clientgo"
	"github.com/kinformer/kinformer/interop/controllerruntime"
)

// The tests of this file use controller-runtime's read-your-writes client
// (client.CacheOptions.EnableReadYourWritesConsistency): after a write
// through the manager's client, a cache read of the written key, or a list
// of its kind, waits until the cache has seen the write. Every read below
// follows its write at once, with no wait of the test's own, and must
// return exactly the written state: the resourceVersion the write returned,
// or NotFound after a delete.

// newConsistentClient builds and starts a manager against cfg on engine e
// whose client waits for its own writes (and reads unstructured objects
// from the cache too), and returns the client.
func newConsistentClient(t testing.TB, cfg *rest.Config, e engine) client.Client {
	t.Helper()
	mgr := newManager(t, cfg, e, manager.Options{
		Client: client.Options{Cache: &client.CacheOptions{
			Unstructured:                    true,
			EnableReadYourWritesConsistency: ptr.To(true),
		}},
	})
	startManager(t, mgr)
	return mgr.GetClient()
}

// readCtx bounds one read: a read-your-writes wait that never ends fails
// the test instead of hanging it.
func readCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// expectRead reads key into into through c at once and fails the test
// unless it returns the state written: resourceVersion rv.
func expectRead(t testing.TB, c client.Client, after string, key types.NamespacedName, into client.Object, rv string) {
	t.Helper()
	if err := c.Get(readCtx(t), key, into); err != nil {
		t.Fatalf("Get %s right after %s: %v", key, after, err)
	}
	if got := into.GetResourceVersion(); got != rv {
		t.Fatalf("Get %s right after %s: resourceVersion %s, want the write's %s", key, after, got, rv)
	}
}

// expectNotFound reads key into into through c at once and fails the test
// unless the cache no longer holds it.
func expectNotFound(t *testing.T, c client.Client, after string, key types.NamespacedName, into client.Object) {
	t.Helper()
	if err := c.Get(readCtx(t), key, into); !apierrors.IsNotFound(err) {
		t.Fatalf("Get %s right after %s: %v (resourceVersion %q), want NotFound", key, after, err, into.GetResourceVersion())
	}
}

// expectListed lists the pods of ns through c at once and fails the test
// unless they are exactly want, pod name to resourceVersion.
func expectListed(t *testing.T, c client.Client, after, ns string, want map[string]string) {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(readCtx(t), &pods, client.InNamespace(ns)); err != nil {
		t.Fatalf("List pods right after %s: %v", after, err)
	}
	got := map[string]string{}
	for _, p := range pods.Items {
		got[p.Name] = p.ResourceVersion
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("List pods right after %s: %v, want %v (name: resourceVersion)", after, got, want)
	}
}

// checkedCondition is the pod condition the tests write through the status
// subresource.
const checkedCondition corev1.PodConditionType = "example.com/Checked"

// podCondition returns the status of the condition of type ct on pod, ""
// when it has none.
func podCondition(pod *corev1.Pod, ct corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range pod.Status.Conditions {
		if c.Type == ct {
			return c.Status
		}
	}
	return ""
}

func TestConsistentClientReadsReturnEachPodWrite(t *testing.T) {
	env := sharedEnv(t)
	// A third engine: kinformer with handlers whose buffers coalesce by key,
	// which may hand the consistency handler a newer object before an older
	// one, but only once the cache holds both.
	coalescing := engine{name: "kinformer-coalescing", newInformer: controllerruntime.NewInformerFunc(
		controllerruntime.WithInformerOptions(clientgo.WithHandlerBufferPolicy(kcache.HandlerBufferCoalesceByKey)),
	)}
	for _, e := range append(slices.Clip(engines), coalescing) {
		t.Run(e.name, func(t *testing.T) { podWrites(t, env, e) })
	}
}

// podWrites is TestConsistentClientReadsReturnEachPodWrite on one engine.
func podWrites(t *testing.T, env *testenv.Env, e engine) {
	cs := env.Clientset()
	ns := testenv.Namespace(t, cs)
	c := newConsistentClient(t, env.Config(), e)
	ctx := context.Background()
	key := types.NamespacedName{Namespace: ns, Name: "web"}
	var got corev1.Pod

	pod := newPod(ns, key.Name, map[string]string{"rev": "0"})
	if err := c.Create(ctx, pod); err != nil {
		t.Fatalf("Create: %v", err)
	}
	expectRead(t, c, "Create", key, &got, pod.ResourceVersion)
	expectListed(t, c, "Create", ns, map[string]string{"web": pod.ResourceVersion})

	// A run of updates, each read back before the next: each read must
	// see its own write, not the one before.
	for i := 1; i <= 5; i++ {
		pod.Labels["rev"] = fmt.Sprint(i)
		if err := c.Update(ctx, pod); err != nil {
			t.Fatalf("Update %d: %v", i, err)
		}
		expectRead(t, c, fmt.Sprintf("Update %d", i), key, &got, pod.ResourceVersion)
		if got.Labels["rev"] != fmt.Sprint(i) {
			t.Fatalf("Get right after Update %d: label rev=%s", i, got.Labels["rev"])
		}
	}

	before := pod.DeepCopy()
	pod.Labels["patched"] = "yes"
	if err := c.Patch(ctx, pod, client.MergeFrom(before)); err != nil {
		t.Fatalf("Patch: %v", err)
	}
	expectRead(t, c, "Patch", key, &got, pod.ResourceVersion)

	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: checkedCondition, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now(),
	})
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatalf("Status().Update: %v", err)
	}
	expectRead(t, c, "Status().Update", key, &got, pod.ResourceVersion)
	if podCondition(&got, checkedCondition) != corev1.ConditionTrue {
		t.Fatalf("Get right after Status().Update: conditions %+v", got.Status.Conditions)
	}
	expectListed(t, c, "Status().Update", ns, map[string]string{"web": pod.ResourceVersion})

	// A second pod, then a delete: the list must show the new one
	// and not the deleted one. The pod has no node, so the API
	// server removes it at once.
	other := newPod(ns, "db", nil)
	if err := c.Create(ctx, other); err != nil {
		t.Fatalf("Create db: %v", err)
	}
	if err := c.Delete(ctx, pod); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	expectNotFound(t, c, "Delete", key, &got)
	expectListed(t, c, "Delete", ns, map[string]string{"db": other.ResourceVersion})
}

func TestConsistentClientReadsReturnUnstructuredAndMetadataOnlyWrites(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	configMapKind := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	forEachEngine(t, func(t *testing.T, e engine) {
		ns := testenv.Namespace(t, cs)
		c := newConsistentClient(t, env.Config(), e)
		ctx := context.Background()

		// Unstructured writes go through server-side apply. controller-runtime
		// v0.25.2 records a Create, Update or Patch of an
		// *unstructured.Unstructured under the typed representation of its
		// kind (writeTargetFor's case for any client.Object), so that an
		// unstructured read after one of them does not wait, on either
		// engine; an unstructured apply configuration and a Delete are
		// recorded under the unstructured representation.
		t.Run("unstructured", func(t *testing.T) {
			key := types.NamespacedName{Namespace: ns, Name: "unstructured"}
			got := unstructuredOf(configMapKind)
			var rv string
			for i := 0; i <= 3; i++ {
				cm := unstructuredOf(configMapKind)
				cm.SetNamespace(ns)
				cm.SetName(key.Name)
				if err := unstructured.SetNestedField(cm.Object, fmt.Sprint(i), "data", "rev"); err != nil {
					t.Fatal(err)
				}
				if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(cm), client.FieldOwner("consistency-test")); err != nil {
					t.Fatalf("Apply %d: %v", i, err)
				}
				if cm.GetResourceVersion() == rv {
					t.Fatalf("Apply %d left the resourceVersion at %s: the read below could not fail", i, rv)
				}
				rv = cm.GetResourceVersion()
				expectRead(t, c, fmt.Sprintf("Apply %d", i), key, got, rv)
				if rev, _, _ := unstructured.NestedString(got.Object, "data", "rev"); rev != fmt.Sprint(i) {
					t.Fatalf("Get right after Apply %d: data.rev=%q", i, rev)
				}
			}
			if err := c.Delete(ctx, got); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			expectNotFound(t, c, "Delete", key, unstructuredOf(configMapKind))
		})

		t.Run("metadata-only", func(t *testing.T) {
			key := types.NamespacedName{Namespace: ns, Name: "metadata"}
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: key.Name},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			meta := &metav1.PartialObjectMetadata{}
			meta.SetGroupVersionKind(configMapKind)
			meta.SetNamespace(ns)
			meta.SetName(key.Name)
			got := &metav1.PartialObjectMetadata{}
			got.SetGroupVersionKind(configMapKind)
			for i := 1; i <= 3; i++ {
				patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"metadata":{"labels":{"rev":"%d"}}}`, i))
				if err := c.Patch(ctx, meta, patch); err != nil {
					t.Fatalf("Patch %d: %v", i, err)
				}
				expectRead(t, c, fmt.Sprintf("Patch %d", i), key, got, meta.GetResourceVersion())
				if got.Labels["rev"] != fmt.Sprint(i) {
					t.Fatalf("Get right after Patch %d: labels %v", i, got.Labels)
				}
			}
			if err := c.Delete(ctx, meta); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			expectNotFound(t, c, "Delete", key, got)
		})
	})
}

// unstructuredOf is an empty unstructured object of kind gvk.
func unstructuredOf(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// TestConsistentClientReadsReturnWritesAcrossARelist stops the API server
// the manager reads through, creates a pod through a second API server on
// the same etcd, and starts the first again, so that the informer must
// relist (its watch cannot resume: 410). Writes made right after the
// restart, while the informer is still recovering, must be read back as
// written: the consistency handler hears of them through the relist or the
// new watch.
func TestConsistentClientReadsReturnWritesAcrossARelist(t *testing.T) {
	watched, other, ok := outageCluster(t)
	if !ok {
		return
	}
	cs := watched.Clientset()
	forEachEngine(t, func(t *testing.T, e engine) {
		ns := testenv.Namespace(t, cs)
		c := newConsistentClient(t, watched.Config(), e)
		ctx := context.Background()
		key := types.NamespacedName{Namespace: ns, Name: "web"}
		var got corev1.Pod

		pod := newPod(ns, key.Name, map[string]string{"rev": "0"})
		if err := c.Create(ctx, pod); err != nil {
			t.Fatalf("Create: %v", err)
		}
		expectRead(t, c, "Create", key, &got, pod.ResourceVersion)

		watched.Stop()
		missed := createPod(t, other.Clientset(), newPod(ns, "missed", nil))
		if err := watched.Start(); err != nil {
			t.Fatalf("restart the watched API server: %v", err)
		}

		pod.Labels["rev"] = "1"
		if err := c.Update(ctx, pod); err != nil {
			t.Fatalf("Update after the restart: %v", err)
		}
		expectRead(t, c, "Update after the restart", key, &got, pod.ResourceVersion)
		// The pod created while the watch was down reaches the cache only
		// through the relist, and a list waits for the update above, so
		// it shows once the informer has relisted.
		eventually(t, "the relist brings the pod created while the watch was down", func() (bool, string) {
			var m corev1.Pod
			err := c.Get(readCtx(t), types.NamespacedName{Namespace: ns, Name: missed.Name}, &m)
			return err == nil && m.ResourceVersion == missed.ResourceVersion, fmt.Sprintf("%v %q", err, m.ResourceVersion)
		})

		pod.Labels["rev"] = "2"
		if err := c.Update(ctx, pod); err != nil {
			t.Fatalf("Update after the relist: %v", err)
		}
		expectRead(t, c, "Update after the relist", key, &got, pod.ResourceVersion)
		expectListed(t, c, "Update after the relist", ns, map[string]string{"web": pod.ResourceVersion, "missed": missed.ResourceVersion})
		if err := c.Delete(ctx, pod); err != nil {
			t.Fatalf("Delete after the relist: %v", err)
		}
		expectNotFound(t, c, "Delete after the relist", key, &got)
		expectListed(t, c, "Delete after the relist", ns, map[string]string{"missed": missed.ResourceVersion})
	})
}

// TestConsistentClientReadsAfterRemoveInformerWaitForTheRemovedOne pins a
// limitation of controller-runtime v0.25.2 that both engines share: the
// read-your-writes client registers its handler once per kind, on the
// informer of the time, and never again. After RemoveInformer and a new
// GetInformer, its handler still listens to the removed informer, so a read
// after a write waits until its context ends, although the new informer has
// the write.
func TestConsistentClientReadsAfterRemoveInformerWaitForTheRemovedOne(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	forEachEngine(t, func(t *testing.T, e engine) {
		ns := testenv.Namespace(t, cs)
		mgr := newManager(t, env.Config(), e, manager.Options{
			Client: client.Options{Cache: &client.CacheOptions{EnableReadYourWritesConsistency: ptr.To(true)}},
		})
		startManager(t, mgr)
		c := mgr.GetClient()
		ctx := context.Background()
		key := types.NamespacedName{Namespace: ns, Name: "web"}
		var got corev1.Pod

		pod := newPod(ns, key.Name, map[string]string{"rev": "0"})
		if err := c.Create(ctx, pod); err != nil {
			t.Fatalf("Create: %v", err)
		}
		expectRead(t, c, "Create", key, &got, pod.ResourceVersion)

		if err := mgr.GetCache().RemoveInformer(ctx, &corev1.Pod{}); err != nil {
			t.Fatalf("RemoveInformer: %v", err)
		}
		if _, err := mgr.GetCache().GetInformer(ctx, &corev1.Pod{}); err != nil {
			t.Fatalf("GetInformer after RemoveInformer: %v", err)
		}
		pod.Labels["rev"] = "1"
		if err := c.Update(ctx, pod); err != nil {
			t.Fatalf("Update: %v", err)
		}
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if err := c.Get(short, key, &got); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Get after RemoveInformer and Update: %v (resourceVersion %s), want the wait to end with its context", err, got.ResourceVersion)
		}
		// The new informer has the write: a read that does not wait sees it.
		eventually(t, "the new informer caches the update", func() (bool, string) {
			err := c.Get(ctx, key, &got, client.DisableReadYourWritesConsistency)
			return err == nil && got.ResourceVersion == pod.ResourceVersion, fmt.Sprintf("%v %s", err, got.ResourceVersion)
		})
	})
}
