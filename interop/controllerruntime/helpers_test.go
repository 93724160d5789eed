package controllerruntime_test

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kinformer/kinformer/interop/controllerruntime"
)

// waitTimeout bounds every wait on a condition. Recovering from an API server
// restart takes the Reflector's backoff (up to about 10 s here), so the
// bound is generous; a passing test never waits for it.
const waitTimeout = 60 * time.Second

// newInformerFunc is the type of controller-runtime's cache.Options.NewInformer.
type newInformerFunc = func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer

// engine is the informer implementation a manager's cache runs on.
type engine struct {
	name string
	// newInformer is the cache's NewInformer hook; nil keeps
	// controller-runtime's default (client-go's NewSharedIndexInformer).
	newInformer newInformerFunc
}

// kinformer reports whether the engine's informers are kinformer's.
func (e engine) kinformer() bool { return e.newInformer != nil }

// engines are controller-runtime's default engine and kinformer's, which each
// test runs the same assertions on, as subtests, so that differences show.
var engines = []engine{
	{name: "client-go"},
	{name: "kinformer", newInformer: controllerruntime.NewInformer},
}

// forEachEngine runs body as a subtest per engine.
func forEachEngine(t *testing.T, body func(t *testing.T, e engine)) {
	t.Helper()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { body(t, e) })
	}
}

// newManager builds a manager for cfg with what the tests never want (metrics
// and health probe servers, leader election, the process-wide uniqueness of
// controller names, which two subtests would break) turned off, and the
// engine's NewInformer hook set on top of opts.Cache.
func newManager(t testing.TB, cfg *rest.Config, e engine, opts manager.Options) manager.Manager {
	t.Helper()
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = "0"
	opts.LeaderElection = false
	opts.Controller = config.Controller{SkipNameValidation: ptr.To(true)}
	if e.newInformer != nil {
		opts.Cache.NewInformer = e.newInformer
	}
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		t.Fatalf("manager.New: %v", err)
	}
	return mgr
}

// startManager runs mgr until the test ends, then stops it and waits for
// Start to return, failing the test if it returned an error or does not
// return within waitTimeout. It returns once the manager's cache has synced.
func startManager(t testing.TB, mgr manager.Manager) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("manager.Start returned: %v", err)
				}
			case <-time.After(waitTimeout):
				t.Errorf("the manager did not stop within %v of its context's end", waitTimeout)
			}
		})
	}
	t.Cleanup(stop)
	syncCtx, syncCancel := context.WithTimeout(ctx, waitTimeout)
	defer syncCancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		t.Fatalf("the manager's cache did not sync within %v", waitTimeout)
	}
	return stop
}

// newPod is a pod that the API server accepts without a ServiceAccount.
func newPod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:1"}}},
	}
}

// createPod creates a pod through cs and fails the test on error.
func createPod(t testing.TB, cs kubernetes.Interface, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	created, err := cs.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	return created
}

// eventually polls cond until it reports true, and fails the test with what
// cond last described when waitTimeout passes first.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last state: %s", what, waitTimeout, state)
		}
		<-tick.C
	}
}

// podView is what the reconciler found in the cache for one pod, the last
// time it was called for it.
type podView struct {
	found  bool
	labels map[string]string
}

// podReconciler records, per pod of one namespace, what the manager's
// client read from the cache when the controller last reconciled it, and
// the deletions its predicate saw.
type podReconciler struct {
	reader    client.Reader
	namespace string

	mu      sync.Mutex
	views   map[types.NamespacedName]podView
	deletes map[types.NamespacedName][]event.DeleteEvent
}

// newPodController builds a controller for pods of namespace ns on mgr,
// with a podReconciler as its reconciler.
func newPodController(t *testing.T, mgr manager.Manager, ns string) *podReconciler {
	t.Helper()
	r := &podReconciler{
		reader:    mgr.GetClient(),
		namespace: ns,
		views:     map[types.NamespacedName]podView{},
		deletes:   map[types.NamespacedName][]event.DeleteEvent{},
	}
	inNamespace := func(o client.Object) bool { return o.GetNamespace() == ns }
	observe := predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return inNamespace(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return inNamespace(e.ObjectNew) },
		GenericFunc: func(e event.GenericEvent) bool { return inNamespace(e.Object) },
		DeleteFunc: func(e event.DeleteEvent) bool {
			if !inNamespace(e.Object) {
				return false
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			key := client.ObjectKeyFromObject(e.Object)
			r.deletes[key] = append(r.deletes[key], e)
			return true
		},
	}
	err := builder.ControllerManagedBy(mgr).
		Named("pods-"+ns).
		For(&corev1.Pod{}, builder.WithPredicates(observe)).
		Complete(r)
	if err != nil {
		t.Fatalf("build the pod controller: %v", err)
	}
	return r
}

// Reconcile reads the pod from the manager's client and records what it
// found.
func (r *podReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var pod corev1.Pod
	err := r.reader.Get(ctx, req.NamespacedName, &pod)
	view := podView{}
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return reconcile.Result{}, err
	default:
		view = podView{found: true, labels: maps.Clone(pod.Labels)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.views[req.NamespacedName] = view
	return reconcile.Result{}, nil
}

// view returns what the reconciler last found for key, and whether it has
// been called for key at all.
func (r *podReconciler) view(key types.NamespacedName) (podView, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.views[key]
	return v, ok
}

// deletesOf returns the delete events the controller's predicate saw for key.
func (r *podReconciler) deletesOf(key types.NamespacedName) []event.DeleteEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.DeleteEvent(nil), r.deletes[key]...)
}

// waitForView waits until the reconciler's last view of key satisfies want.
func (r *podReconciler) waitForView(t *testing.T, key types.NamespacedName, what string, want func(podView) bool) {
	t.Helper()
	eventually(t, fmt.Sprintf("the reconciler sees %s %s", key, what), func() (bool, string) {
		v, ok := r.view(key)
		if !ok {
			return false, "never reconciled"
		}
		return want(v), fmt.Sprintf("%+v", v)
	})
}
