package integration

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
)

func itPod(ns, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:1"}}},
	}
}

// itCreatePods creates n pods named prefix-0 … prefix-(n-1) with 32 concurrent writers.
func itCreatePods(t *testing.T, cs kubernetes.Interface, ns, prefix string, n int, labels map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				_, err := cs.CoreV1().Pods(ns).Create(ctx, itPod(ns, fmt.Sprintf("%s-%d", prefix, i), labels), metav1.CreateOptions{})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// itPodLW is a ListWatch for the pods of one namespace over cs, telling the reflector that
// the client supports streaming lists, as the factory's informers do.
func itPodLW(cs kubernetes.Interface, ns string) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().Pods(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().Pods(ns).Watch(ctx, o)
		},
	}, cs)
}

// itEvent is one notification a handler received.
type itEvent struct {
	kind    string // add, update, delete
	key     string
	rv      string
	initial bool
	unknown bool // delete delivered as DeletedFinalStateUnknown
	labels  map[string]string
}

// itRecorder records every notification, per key, in order.
type itRecorder struct {
	mu     sync.Mutex
	events []itEvent
}

func (r *itRecorder) handler() cache.ResourceEventHandler {
	meta := func(obj any) (string, string, map[string]string) {
		o, err := metaOf(obj)
		if err != nil {
			return "", "", nil
		}
		key, _ := cache.MetaNamespaceKeyFunc(obj)
		return key, o.GetResourceVersion(), o.GetLabels()
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			key, rv, l := meta(obj)
			r.add(itEvent{kind: "add", key: key, rv: rv, initial: initial, labels: l})
		},
		UpdateFunc: func(_, obj any) {
			key, rv, l := meta(obj)
			r.add(itEvent{kind: "update", key: key, rv: rv, labels: l})
		},
		DeleteFunc: func(obj any) {
			ev := itEvent{kind: "delete"}
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				ev.unknown, ev.key = true, d.Key
				if d.Obj != nil {
					_, ev.rv, ev.labels = meta(d.Obj)
				}
			} else {
				ev.key, ev.rv, ev.labels = meta(obj)
			}
			r.add(ev)
		},
	}
}

func (r *itRecorder) add(ev itEvent) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

// snapshot returns a copy of the events so far.
func (r *itRecorder) snapshot() []itEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]itEvent(nil), r.events...)
}

// last returns, per key, the last event received.
func (r *itRecorder) last() map[string]itEvent {
	out := map[string]itEvent{}
	for _, ev := range r.snapshot() {
		out[ev.key] = ev
	}
	return out
}

// count returns how many events of kind were received, optionally only initial-list adds.
func (r *itRecorder) count(kind string, keep func(itEvent) bool) int {
	n := 0
	for _, ev := range r.snapshot() {
		if ev.kind == kind && (keep == nil || keep(ev)) {
			n++
		}
	}
	return n
}

// itRequestCounter counts requests by kind (list, watch, streaming list) through a
// rest.Config's transport wrapper.
type itRequestCounter struct {
	list, watch, watchList, forbidden atomic.Int64
}

func (c *itRequestCounter) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return itRoundTripper{rt: rt, c: c}
	}
	return cfg
}

type itRoundTripper struct {
	rt http.RoundTripper
	c  *itRequestCounter
}

func (r itRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	q := req.URL.Query()
	if req.Method == http.MethodGet {
		switch {
		case q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true":
			r.c.watchList.Add(1)
		case q.Get("watch") == "true":
			r.c.watch.Add(1)
		default:
			r.c.list.Add(1)
		}
	}
	resp, err := r.rt.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusForbidden {
		r.c.forbidden.Add(1)
	}
	return resp, err
}

// itRunInformer runs informer until the test ends and waits for it to stop.
func itRunInformer(t *testing.T, informer cache.SharedIndexInformer) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// itWaitSynced waits for the informer and the registrations to sync and returns how long
// it took.
func itWaitSynced(t *testing.T, timeout time.Duration, synced ...cache.InformerSynced) time.Duration {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	require.True(t, cache.WaitForCacheSync(ctx.Done(), synced...), "not synced within %v", timeout)
	return time.Since(start)
}

// itStoreMatchesServer waits until the store holds exactly the objects a fresh LIST returns
// (same keys, same resourceVersions), failing with the difference after timeout.
func itStoreMatchesServer(t *testing.T, store cache.Store, list func(ctx context.Context) ([]metav1.Object, error), timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var diff string
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		objs, err := list(ctx)
		cancel()
		if err == nil {
			want := map[string]string{}
			for _, o := range objs {
				key := o.GetName()
				if o.GetNamespace() != "" {
					key = o.GetNamespace() + "/" + key
				}
				want[key] = o.GetResourceVersion()
			}
			got := map[string]string{}
			for _, obj := range store.List() {
				o, err := metaOf(obj)
				require.NoError(t, err)
				key, _ := cache.MetaNamespaceKeyFunc(obj)
				got[key] = o.GetResourceVersion()
			}
			diff = itMapDiff(want, got)
			if diff == "" {
				return
			}
		} else {
			diff = "list failed: " + err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("store does not match the server after %v: %s", timeout, diff)
		}
		time.Sleep(200 * time.Millisecond) // polling interval between fresh LISTs
	}
}

// itMapDiff describes how got differs from want, "" when equal.
func itMapDiff(want, got map[string]string) string {
	var missing, extra, stale []string
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			missing = append(missing, k)
		case g != v:
			stale = append(stale, fmt.Sprintf("%s (store %s, server %s)", k, g, v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	if len(missing)+len(extra)+len(stale) == 0 {
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	sort.Strings(stale)
	trim := func(s []string) []string {
		if len(s) > 5 {
			return append(s[:5:5], fmt.Sprintf("… %d more", len(s)-5))
		}
		return s
	}
	return fmt.Sprintf("%d missing %v, %d extra %v, %d stale %v",
		len(missing), trim(missing), len(extra), trim(extra), len(stale), trim(stale))
}

func metaOf(obj any) (metav1.Object, error) {
	o, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no object metadata", obj)
	}
	return o, nil
}

// itListPods lists the pods of ns as metav1.Objects.
func itListPods(cs kubernetes.Interface, ns string) func(ctx context.Context) ([]metav1.Object, error) {
	return func(ctx context.Context) ([]metav1.Object, error) {
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		out := make([]metav1.Object, 0, len(l.Items))
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		return out, nil
	}
}

// itStartFactory starts factory's informers until the test ends, then shuts it down.
func itStartFactory(t *testing.T, factory informers.SharedInformerFactory) {
	stop := make(chan struct{})
	factory.Start(stop)
	t.Cleanup(func() {
		close(stop)
		factory.Shutdown()
	})
}
