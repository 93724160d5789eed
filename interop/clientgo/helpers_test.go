package clientgo

// The helpers the tests of this package share: the two informers under a
// differential test, a recorder of handler notifications, and waits.

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2/ktesting"

	"github.com/kinformer/kinformer/cache"
)

// waitTimeout bounds every wait of the tests.
const waitTimeout = 20 * time.Second

// tick is the polling interval of the waits.
const tick = time.Millisecond

// subject is one implementation under a differential test: it builds a
// client-go SharedIndexInformer over lw.
type subject struct {
	name  string
	build func(lw toolscache.ListerWatcher, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer
}

// subjects are client-go v0.37.2's own informer, the reference, and this
// package's.
var subjects = []subject{
	{"client-go", func(lw toolscache.ListerWatcher, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		return toolscache.NewSharedIndexInformer(lw, &v1.Pod{}, resync, indexers)
	}},
	{"kinformer", func(lw toolscache.ListerWatcher, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		return NewSharedIndexInformer(lw, &v1.Pod{}, resync, indexers)
	}},
}

// differential runs scenario on each subject and returns what it observed,
// client-go's first.
func differential[T any](t *testing.T, scenario func(t *testing.T, s subject) T) (clientGo, kinformer T) {
	t.Helper()
	var got [2]T
	for i, s := range subjects {
		t.Run(s.name, func(t *testing.T) { got[i] = scenario(t, s) })
	}
	return got[0], got[1]
}

// start runs informer until the test ends (or stop is called) and returns
// stop, which cancels its context and waits until Run has returned.
func start(t *testing.T, informer toolscache.SharedIndexInformer) (stop func()) {
	t.Helper()
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(waitTimeout):
				t.Error("the informer did not stop")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// describe renders an object for event logs: "ns/name@rv";
// "tombstone(ns/name@rv)" for client-go's DeletedFinalStateUnknown (or
// "tombstone(key)" without object), and "kinformer-tombstone(...)" for
// kinformer's, which no client-go handler should ever get.
func describe(obj any) string {
	switch d := obj.(type) {
	case toolscache.DeletedFinalStateUnknown:
		if d.Obj == nil {
			return "tombstone(" + d.Key + ")"
		}
		return "tombstone(" + describe(d.Obj) + ")"
	case cache.DeletedFinalStateUnknown:
		return "kinformer-tombstone(" + d.Key + ")"
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	key := m.GetName()
	if ns := m.GetNamespace(); ns != "" {
		key = ns + "/" + key
	}
	return key + "@" + m.GetResourceVersion()
}

// describeAll renders objects, sorted.
func describeAll(objs []any) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = describe(o)
	}
	sort.Strings(out)
	return out
}

// recorder is a client-go ResourceEventHandler that records every
// notification as a string, and the objects it got.
type recorder struct {
	mu      sync.Mutex
	events  []string
	objects []any
}

func (r *recorder) record(obj any, event string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event)
	r.objects = append(r.objects, obj)
}

// OnAdd records "add ns/name@rv initial=<isInInitialList>".
func (r *recorder) OnAdd(obj any, isInInitialList bool) {
	r.record(obj, fmt.Sprintf("add %s initial=%v", describe(obj), isInInitialList))
}

// OnUpdate records "update old -> new".
func (r *recorder) OnUpdate(oldObj, newObj any) {
	r.record(newObj, fmt.Sprintf("update %s -> %s", describe(oldObj), describe(newObj)))
}

// OnDelete records "delete obj".
func (r *recorder) OnDelete(obj any) {
	r.record(obj, "delete "+describe(obj))
}

// get returns the events recorded so far.
func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// lastObject returns the object of the last notification.
func (r *recorder) lastObject() any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.objects[len(r.objects)-1]
}

// waitN waits until at least n events are recorded and returns them all.
func (r *recorder) waitN(t *testing.T, n int) []string {
	t.Helper()
	require.Eventually(t, func() bool { return len(r.get()) >= n }, waitTimeout, tick, "waiting for %d events", n)
	return r.get()
}

// waitForWatch waits until srv has opened one more watch.
func waitForWatch(t *testing.T, srv interface{ WatchOpened() <-chan struct{} }) {
	t.Helper()
	select {
	case <-srv.WatchOpened():
	case <-time.After(waitTimeout):
		t.Fatal("no watch was opened")
	}
}

// waitDone waits until checker is done.
func waitDone(t *testing.T, checker toolscache.DoneChecker) {
	t.Helper()
	select {
	case <-checker.Done():
	case <-time.After(waitTimeout):
		t.Fatalf("%s is not done", checker.Name())
	}
}

// vowelIndex is an index function: "vowel" for the pods named a, e, i, o or
// u, "consonant" for the others.
func vowelIndex(obj any) ([]string, error) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("not a pod: %T", obj)
	}
	switch pod.Name {
	case "a", "e", "i", "o", "u":
		return []string{"vowel"}, nil
	}
	return []string{"consonant"}, nil
}
