package informers_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
	"github.com/kinformer/kinformer/projection"
)

// benchProjection is the projection of the benchmarks: what a controller
// of pods placed on nodes reads.
var benchProjection = projection.MustNew(
	"metadata.labels", "metadata.ownerReferences",
	"spec.nodeName",
	"status.phase", "status.conditions",
)

// fullPod is a pod with fields on every level the projection drops.
func fullPod(ns, name, rv, label string) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, ResourceVersion: rv, UID: types.UID("uid-" + name),
			Labels:      map[string]string{"app": "web", "v": label},
			Annotations: map[string]string{"note": "dropped"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-uid",
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}},
			Generation:    3,
		},
		Spec: corev1.PodSpec{
			NodeName:   "node-1",
			Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1", Args: []string{"--port", "8080"}}},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			PodIP:      "10.0.0.1",
		},
	}
}

// projectedPod is what an informer with benchProjection holds for pod.
func projectedPod(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	obj, err := benchProjection.Apply(pod)
	require.NoError(t, err)
	p := obj.(*corev1.Pod)
	// What the server sends has no TypeMeta on list items, and the
	// decoder drops it for typed objects.
	p.TypeMeta = metav1.TypeMeta{}
	return p
}

// startSynced starts factory, waits until its informers synced and returns
// the context they run under; the factory shuts down when the test ends.
func startSynced(t *testing.T, factory informers.SharedInformerFactory) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), serverWaitTimeout)
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
	})
	factory.StartWithContext(ctx)
	require.NoError(t, factory.WaitForCacheSyncWithContext(ctx).AsError())
	return ctx
}

func TestProjectedPodHoldsOnlyTheProjectedFields(t *testing.T) {
	got := projectedPod(t, fullPod("ns", "a", "5", "1"))
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: "a", ResourceVersion: "5", UID: "uid-a",
			Labels:          map[string]string{"app": "web", "v": "1"},
			Annotations:     map[string]string{projection.MarkerAnnotation: benchProjection.Fingerprint()},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-uid"}},
		},
		Spec: corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
	assert.Equal(t, want, got)
}

// podsByKey returns the informer's store as key -> pod.
func podsByKey(store cache.Store) map[string]*corev1.Pod {
	out := map[string]*corev1.Pod{}
	for _, obj := range store.List() {
		p := obj.(*corev1.Pod).DeepCopy()
		// JSON keeps the kind and apiVersion the server sent with each
		// item, protobuf has none: compare the rest.
		p.TypeMeta = metav1.TypeMeta{}
		out[p.Namespace+"/"+p.Name] = p
	}
	return out
}

// TestWithProjectionKeepsOnlyProjectedFields runs the factory's pod informer
// with a projection against a server answering in protobuf or in JSON,
// through a LIST or a streaming list, then a watch: at every step the store
// holds exactly the projected, marked pods, and handlers receive them.
func TestWithProjectionKeepsOnlyProjectedFields(t *testing.T) {
	for _, tc := range []struct {
		name      string
		jsonOnly  bool
		streaming bool
	}{
		{"protobuf list", false, false},
		{"json list", true, false},
		{"protobuf streaming list", false, true},
		{"json streaming list", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := fullPod("ns", "a", "5", "1"), fullPod("ns", "b", "6", "1")
			srv := newPodServer(t, tc.jsonOnly, tc.streaming, "6", a, b)
			factory := informers.NewSharedInformerFactoryWithOptions(srv.clientset(t, ""), 0, informers.WithProjection(&corev1.Pod{}, benchProjection))
			inf := factory.Core().V1().Pods().Informer()
			var mu syncEvents
			_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(obj interface{}) { mu.add("add", obj) },
				UpdateFunc: func(_, obj interface{}) { mu.add("update", obj) },
				DeleteFunc: func(obj interface{}) { mu.add("delete", obj) },
			})
			require.NoError(t, err)
			ctx := startSynced(t, factory)

			assert.Equal(t, map[string]*corev1.Pod{"ns/a": projectedPod(t, a), "ns/b": projectedPod(t, b)}, podsByKey(inf.GetStore()))

			require.NoError(t, wait.PollUntilContextTimeout(ctx, time.Millisecond, serverWaitTimeout, true, func(context.Context) (bool, error) {
				return srv.openWatches() > 0, nil
			}))
			a2 := fullPod("ns", "a", "7", "2")
			a2.Status.Phase = corev1.PodSucceeded
			require.Equal(t, 1, srv.send(watch.Event{Type: watch.Modified, Object: a2}))
			require.Equal(t, 1, srv.send(watch.Event{Type: watch.Deleted, Object: fullPod("ns", "b", "8", "1")}))
			require.NoError(t, wait.PollUntilContextTimeout(ctx, time.Millisecond, serverWaitTimeout, true, func(context.Context) (bool, error) {
				return len(mu.snapshot()) == 4, nil
			}))
			assert.Equal(t, map[string]*corev1.Pod{"ns/a": projectedPod(t, a2)}, podsByKey(inf.GetStore()))
			events := mu.snapshot()
			assert.Equal(t, []string{"add ns/a 5", "add ns/b 6", "update ns/a 7", "delete ns/b 8"}, eventNames(events))
			for _, e := range events {
				fp, ok := projection.Marked(e.obj)
				assert.True(t, ok, "%s not marked", e.name)
				assert.Equal(t, benchProjection.Fingerprint(), fp)
				assert.Empty(t, e.obj.Spec.Containers, "%s holds containers", e.name)
			}
			updated := events[2].obj.DeepCopy()
			updated.TypeMeta = metav1.TypeMeta{}
			assert.Equal(t, projectedPod(t, a2), updated)
		})
	}
}

type projectedEvent struct {
	name string
	obj  *corev1.Pod
}

// syncEvents records what handlers receive.
type syncEvents struct {
	mu     sync.Mutex
	events []projectedEvent
}

func (s *syncEvents) add(kind string, obj interface{}) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p := obj.(*corev1.Pod)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, projectedEvent{name: kind + " " + p.Namespace + "/" + p.Name + " " + p.ResourceVersion, obj: p})
}

func (s *syncEvents) snapshot() []projectedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]projectedEvent(nil), s.events...)
}

func eventNames(events []projectedEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.name
	}
	return out
}

// TestWithProjectionOnFakeClientset: with client-go's fake clientset the
// factory's informer delivers the same projected objects as over the wire.
func TestWithProjectionOnFakeClientset(t *testing.T) {
	a := fullPod("ns", "a", "", "1")
	client := fake.NewSimpleClientset(a) //nolint:staticcheck // no managed fields needed
	inf := runPodInformer(t, client, informers.WithProjection(&corev1.Pod{}, benchProjection))
	got := podsByKey(inf.GetStore())["ns/a"]
	require.NotNil(t, got)
	want := projectedPod(t, a)
	want.ResourceVersion = got.ResourceVersion
	assert.Equal(t, want, got)
}

// TestProjectionWithUnknownFieldFailsEveryList: a projection naming a field
// Pod does not have makes the informer's lists fail with an error naming
// the path, reported to the watch error handler; it never syncs.
func TestProjectionWithUnknownFieldFailsEveryList(t *testing.T) {
	bad := projection.MustNew("spec.noSuchField")
	for _, tc := range []struct {
		name   string
		client func(t *testing.T) *fake.Clientset
		wire   bool
	}{
		{"fake clientset", func(*testing.T) *fake.Clientset { return fake.NewSimpleClientset() }, false}, //nolint:staticcheck
		{"clientset", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var client kubernetes.Interface
			if tc.wire {
				client = newPodServer(t, false, false, "1").clientset(t, "")
			} else {
				client = tc.client(t)
			}
			inf := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithProjection(&corev1.Pod{}, bad)).Core().V1().Pods().Informer()
			errs := make(chan error, 10)
			require.NoError(t, inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
				select {
				case errs <- err:
				default:
				}
			}))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				inf.RunWithContext(ctx)
			}()
			defer func() {
				cancel()
				<-done
			}()
			select {
			case err := <-errs:
				assert.ErrorContains(t, err, `"spec.noSuchField"`)
			case <-time.After(serverWaitTimeout):
				t.Fatal("no list error reported")
			}
			assert.False(t, inf.HasSynced())
		})
	}
}

// TestGuardRefusesWritesOfProjectedObjects: a client built with GuardConfig
// refuses to update (or create) an object read from a projected informer,
// in JSON and protobuf, without sending it; other writes go through.
func TestGuardRefusesWritesOfProjectedObjects(t *testing.T) {
	for _, contentType := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		t.Run(contentType, func(t *testing.T) {
			srv := newPodServer(t, false, false, "1")
			cfg := &rest.Config{Host: srv.srv.URL, ContentConfig: rest.ContentConfig{ContentType: contentType}}
			guarded, err := kubernetes.NewForConfig(projection.GuardConfig(cfg))
			require.NoError(t, err)
			projected := projectedPod(t, fullPod("ns", "a", "5", "1"))
			_, err = guarded.CoreV1().Pods("ns").Update(context.Background(), projected, metav1.UpdateOptions{})
			require.ErrorIs(t, err, projection.ErrProjectedWrite)
			_, err = guarded.CoreV1().Pods("ns").Create(context.Background(), projected, metav1.CreateOptions{})
			require.ErrorIs(t, err, projection.ErrProjectedWrite)
			assert.Empty(t, srv.writes(), "a refused write reached the server")

			_, err = guarded.CoreV1().Pods("ns").Update(context.Background(), fullPod("ns", "a", "5", "1"), metav1.UpdateOptions{})
			require.False(t, errors.Is(err, projection.ErrProjectedWrite), "a full pod was refused: %v", err)
			assert.Len(t, srv.writes(), 1)
		})
	}
}

// TestWithProjectionSnapshotsAndMemoryLean: a factory with a projection and
// WithMemoryLean writes its snapshot under the projection; the same
// configuration resumes from it without a LIST and holds the same projected
// pods, while a factory with another projection, or none, rejects it and
// lists.
func TestWithProjectionSnapshotsAndMemoryLean(t *testing.T) {
	other := projection.MustNew("spec.nodeName")
	for _, tc := range []struct {
		name      string
		opts      []informers.SharedInformerOption
		wantError string
	}{
		{"same projection", []informers.SharedInformerOption{informers.WithProjection(&corev1.Pod{}, benchProjection), informers.WithMemoryLean()}, ""},
		{"another projection", []informers.SharedInformerOption{informers.WithProjection(&corev1.Pod{}, other)},
			"snapshot holds objects of projection " + benchProjection.Fingerprint() + ", this informer keeps objects of projection " + other.Fingerprint()},
		{"no projection", nil, "this informer keeps full objects"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := fullPod("ns", "a", "", "1")
			client := fake.NewSimpleClientset(a) //nolint:staticcheck // no managed fields needed
			dir := t.TempDir()
			first := runFactory(t, client, informers.WithSnapshotDir(dir), informers.WithProjection(&corev1.Pod{}, benchProjection), informers.WithMemoryLean())
			require.Empty(t, first.errors)
			require.Equal(t, 1, countPodLists(client))

			factory := informers.NewSharedInformerFactoryWithOptions(client, 0, append([]informers.SharedInformerOption{informers.WithSnapshotDir(dir)}, tc.opts...)...)
			inf := factory.Core().V1().Pods().Informer()
			var mu sync.Mutex
			var errs []error
			require.NoError(t, inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
				mu.Lock()
				defer mu.Unlock()
				errs = append(errs, err)
			}))
			startSynced(t, factory)
			got := podsByKey(inf.GetStore())["ns/a"]
			require.NotNil(t, got)
			mu.Lock()
			defer mu.Unlock()
			if tc.wantError == "" {
				assert.Equal(t, 1, countPodLists(client), "resumed without a LIST")
				assert.Empty(t, errs)
				want := projectedPod(t, a)
				want.ResourceVersion = got.ResourceVersion
				assert.Equal(t, want, got, "the snapshot holds the projected pod")
				return
			}
			assert.Equal(t, 2, countPodLists(client), "a normal LIST follows the rejection")
			require.NotEmpty(t, errs)
			var serr *cache.SnapshotError
			require.ErrorAs(t, errs[0], &serr)
			assert.Contains(t, serr.Error(), tc.wantError)
		})
	}
}

// TestWithProjectionRefusesObjectsATransformLeavesUnmarked: a transform
// that drops the projection's marker (here by clearing the annotations of
// the pods labelled strip) would hand out projected objects Guard cannot
// recognise; the informer refuses them: they never reach the cache and are
// counted in its status, while the objects the transform leaves marked are
// cached.
func TestWithProjectionRefusesObjectsATransformLeavesUnmarked(t *testing.T) {
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithProjection(&corev1.Pod{}, benchProjection),
		informers.WithTransform(func(obj interface{}) (interface{}, error) {
			if pod, ok := obj.(*corev1.Pod); ok && pod.Labels["strip"] == "yes" {
				pod.Annotations = nil
			}
			return obj, nil
		}))
	pods := factory.Core().V1().Pods()
	informer := pods.Informer()
	ctx := startSynced(t, factory)

	stripped := fullPod("ns", "stripped", "5", "1")
	stripped.Labels["strip"] = "yes"
	_, err := client.CoreV1().Pods("ns").Create(ctx, stripped, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = client.CoreV1().Pods("ns").Create(ctx, fullPod("ns", "kept", "6", "1"), metav1.CreateOptions{})
	require.NoError(t, err)
	// Watch events are applied in order: once the second pod is cached,
	// the first was handled.
	require.NoError(t, wait.PollUntilContextCancel(ctx, time.Millisecond, true, func(context.Context) (bool, error) {
		_, exists, err := informer.GetStore().GetByKey("ns/kept")
		return exists, err
	}))
	assert.Equal(t, []string{"ns/kept"}, informer.GetStore().ListKeys(), "the pod the transform left unmarked was cached")
	for _, obj := range informer.GetStore().List() {
		fp, ok := projection.Marked(obj)
		assert.True(t, ok && fp == benchProjection.Fingerprint(), "cached object without the marker")
	}
	status, ok := cache.GetInformerStatus(informer)
	require.True(t, ok)
	assert.EqualValues(t, 1, status.TransformRefused, "refusals counted")
}

// TestWithProjectionSharesTheMarkerMap: the pods a projected informer
// caches, whose annotations are the marker alone, share one annotations
// map (listed and watched, protobuf and JSON, and from a fake clientset),
// and Guard refuses to write them back, as they are or copied. With a
// transform that adds an annotation in place, every pod gets a map of its
// own first: the shared map keeps the marker alone.
func TestWithProjectionSharesTheMarkerMap(t *testing.T) {
	for _, tc := range []struct {
		name      string
		jsonOnly  bool
		transform bool
	}{
		{"protobuf", false, false},
		{"json", true, false},
		{"protobuf with a transform", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newPodServer(t, tc.jsonOnly, false, "6", fullPod("ns", "a", "5", "1"), fullPod("ns", "b", "6", "1"))
			opts := []informers.SharedInformerOption{informers.WithProjection(&corev1.Pod{}, benchProjection)}
			if tc.transform {
				opts = append(opts, informers.WithTransform(func(obj interface{}) (interface{}, error) {
					if p, ok := obj.(*corev1.Pod); ok {
						p.Annotations["transformed"] = "yes"
					}
					return obj, nil
				}))
			}
			factory := informers.NewSharedInformerFactoryWithOptions(srv.clientset(t, ""), 0, opts...)
			inf := factory.Core().V1().Pods().Informer()
			ctx := startSynced(t, factory)
			require.NoError(t, wait.PollUntilContextTimeout(ctx, time.Millisecond, serverWaitTimeout, true, func(context.Context) (bool, error) {
				return srv.openWatches() > 0, nil
			}))
			require.Equal(t, 1, srv.send(watch.Event{Type: watch.Added, Object: fullPod("ns", "c", "7", "1")}))
			require.NoError(t, wait.PollUntilContextTimeout(ctx, time.Millisecond, serverWaitTimeout, true, func(context.Context) (bool, error) {
				return len(inf.GetStore().List()) == 3, nil
			}))
			for _, obj := range inf.GetStore().List() {
				pod := obj.(*corev1.Pod)
				assert.Equal(t, !tc.transform, benchProjection.SharesMarker(pod), "%s shares the marker map", pod.Name)
				require.NoError(t, benchProjection.CheckMarked(pod))
				if tc.transform {
					assert.Equal(t, map[string]string{projection.MarkerAnnotation: benchProjection.Fingerprint(), "transformed": "yes"}, pod.Annotations)
				}
			}
			probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{projection.MarkerAnnotation: benchProjection.Fingerprint()}}}
			require.True(t, benchProjection.ShareMarker(probe))
			assert.Equal(t, map[string]string{projection.MarkerAnnotation: benchProjection.Fingerprint()}, probe.Annotations, "the shared map holds the marker alone")

			guarded, err := kubernetes.NewForConfig(projection.GuardConfig(&rest.Config{Host: srv.srv.URL}))
			require.NoError(t, err)
			cached := podsByKey(inf.GetStore())["ns/a"]
			for _, pod := range []*corev1.Pod{cached, cached.DeepCopy()} {
				_, err = guarded.CoreV1().Pods("ns").Update(ctx, pod, metav1.UpdateOptions{})
				require.ErrorIs(t, err, projection.ErrProjectedWrite)
			}
			assert.Empty(t, srv.writes(), "a refused write reached the server")
		})
	}

	client := fake.NewSimpleClientset(fullPod("ns", "a", "", "1"), fullPod("ns", "b", "", "1")) //nolint:staticcheck // no managed fields needed
	inf := runPodInformer(t, client, informers.WithProjection(&corev1.Pod{}, benchProjection))
	for _, obj := range inf.GetStore().List() {
		assert.True(t, benchProjection.SharesMarker(obj), "a pod of the fake clientset shares the marker map")
	}
}
