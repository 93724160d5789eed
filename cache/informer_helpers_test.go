package cache

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clientcache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/klog/v2/textlogger"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"
)

// infTimeout bounds every wait in the informer tests.
const infTimeout = 20 * time.Second

// infPod returns a pod in namespace "ns".
func infPod(name, rv string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// infDescribe renders an object for event logs: "ns/name@rv", or
// "tombstone(ns/name@rv)" for a DeletedFinalStateUnknown.
func infDescribe(obj interface{}) string {
	if tomb, ok := obj.(clientcache.DeletedFinalStateUnknown); ok {
		obj = DeletedFinalStateUnknown{Key: tomb.Key, Obj: tomb.Obj}
	}
	if tomb, ok := obj.(DeletedFinalStateUnknown); ok {
		if tomb.Obj == nil {
			return "tombstone(" + tomb.Key + ")"
		}
		return "tombstone(" + infDescribe(tomb.Obj) + ")"
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

// infRecorder is a ResourceEventHandler that records every notification
// as a string.
type infRecorder struct {
	mu     sync.Mutex
	events []string
	// onEvent, if set, runs inside the handler before recording.
	onEvent func(kind string, obj interface{})
}

func (r *infRecorder) record(kind string, obj interface{}, s string) {
	if r.onEvent != nil {
		r.onEvent(kind, obj)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, s)
}

func (r *infRecorder) OnAdd(obj interface{}, isInInitialList bool) {
	r.record("add", obj, fmt.Sprintf("add %s initial=%v", infDescribe(obj), isInInitialList))
}

func (r *infRecorder) OnUpdate(oldObj, newObj interface{}) {
	r.record("update", newObj, fmt.Sprintf("update %s -> %s", infDescribe(oldObj), infDescribe(newObj)))
}

func (r *infRecorder) OnDelete(obj interface{}) {
	r.record("delete", obj, fmt.Sprintf("delete %s", infDescribe(obj)))
}

func (r *infRecorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// waitN waits until at least n events were recorded and returns them.
func (r *infRecorder) waitN(t testing.TB, n int) []string {
	t.Helper()
	require.Eventually(t, func() bool { return len(r.get()) >= n }, infTimeout, time.Millisecond, "waiting for %d events, have %v", n, r.get())
	return r.get()
}

// infStoreContents renders the store's objects sorted.
func infStoreContents(s interface{ List() []interface{} }) []string {
	var out []string
	for _, obj := range s.List() {
		out = append(out, infDescribe(obj))
	}
	sort.Strings(out)
	return out
}

// infServer is a minimal in-memory API server for pods: a resource
// version counter, an event history for watch resumption, and the
// ability to expire watches (410) and to change objects without watch
// events, to force relists that find differences.
type infServer struct {
	mu        sync.Mutex
	rv        int
	pods      map[string]*v1.Pod
	history   []watch.Event
	compacted int // watches from an RV below this get 410
	watchers  []*infWatcher
	lists     int
	watches   int
	listErr   error
	watchOpen chan struct{}
}

func newInfServer() *infServer {
	return &infServer{pods: map[string]*v1.Pod{}, watchOpen: make(chan struct{}, 1000)}
}

func (s *infServer) nextRV() string {
	s.rv++
	return strconv.Itoa(s.rv)
}

func (s *infServer) emitLocked(t watch.EventType, pod *v1.Pod) {
	ev := watch.Event{Type: t, Object: pod}
	s.history = append(s.history, ev)
	for _, w := range s.watchers {
		w.send(watch.Event{Type: t, Object: pod.DeepCopy()})
	}
}

// create, update and remove change a pod and send a watch event.
func (s *infServer) create(name string) { s.put(name, watch.Added, true) }
func (s *infServer) update(name string) { s.put(name, watch.Modified, true) }
func (s *infServer) remove(name string) { s.del(name, true) }

// createSilently etc. change a pod without a watch event, as if the
// watch missed it.
func (s *infServer) createSilently(name string) { s.put(name, watch.Added, false) }
func (s *infServer) updateSilently(name string) { s.put(name, watch.Modified, false) }
func (s *infServer) removeSilently(name string) { s.del(name, false) }

func (s *infServer) put(name string, t watch.EventType, emit bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pod := infPod(name, s.nextRV())
	s.pods[name] = pod
	if emit {
		s.emitLocked(t, pod)
	} else {
		s.compacted = s.rv
	}
}

func (s *infServer) del(name string, emit bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pod := s.pods[name].DeepCopy()
	delete(s.pods, name)
	pod.ResourceVersion = s.nextRV()
	if emit {
		s.emitLocked(watch.Deleted, pod)
	} else {
		s.compacted = s.rv
	}
}

// expire ends all watches with 410 Gone and makes resumption impossible,
// so the informer relists.
func (s *infServer) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Watches from an older resource version fail from now on; a relist
	// gets the current one, from which watching works.
	s.compacted = s.rv
	for _, w := range s.watchers {
		w.send(watch.Event{Type: watch.Error, Object: &apierrors.NewResourceExpired("too old resource version").ErrStatus})
		w.finish()
	}
	s.watchers = nil
}

func (s *infServer) list(options metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	if s.listErr != nil {
		return nil, s.listErr
	}
	names := make([]string, 0, len(s.pods))
	for name := range s.pods {
		names = append(names, name)
	}
	sort.Strings(names)
	list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(s.rv)}}
	for _, name := range names {
		list.Items = append(list.Items, *s.pods[name].DeepCopy())
	}
	return list, nil
}

func (s *infServer) watch(options metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches++
	from, err := strconv.Atoi(options.ResourceVersion)
	if err != nil {
		from = s.rv
	}
	if from < s.compacted {
		return nil, apierrors.NewResourceExpired("too old resource version")
	}
	w := newInfWatcher()
	for _, ev := range s.history {
		rv, _ := strconv.Atoi(ev.Object.(*v1.Pod).ResourceVersion)
		if rv > from {
			w.send(watch.Event{Type: ev.Type, Object: ev.Object.(*v1.Pod).DeepCopy()})
		}
	}
	s.watchers = append(s.watchers, w)
	select {
	case s.watchOpen <- struct{}{}:
	default:
	}
	return w, nil
}

// stopWatches ends all open watches (used at the end of tests).
func (s *infServer) stopWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watchers {
		w.Stop()
	}
	s.watchers = nil
}

func (s *infServer) counts() (lists, watches int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists, s.watches
}

// infPlainLW is a ListWatch that declares it does not support streaming
// lists, so Reflectors use LIST + WATCH.
type infPlainLW struct {
	*ListWatch
}

func (infPlainLW) IsWatchListSemanticsUnSupported() bool { return true }

// lw returns a ListerWatcher of this package serving s.
func (s *infServer) lw() ListerWatcher {
	return infPlainLW{&ListWatch{ListFunc: s.list, WatchFunc: s.watch}}
}

// infGVR is the pods resource.
var infGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// infQueueKinds are the queue choices every informer table runs on.
var infQueueKinds = []struct {
	name         string
	useDeltaFIFO bool
}{
	{"RealFIFO", false},
	{"DeltaFIFO", true},
}

// infWatcher is a watch.Interface with an unbounded buffer: send never
// blocks; a pump goroutine feeds the result channel until Stop (or, after
// finish, until the buffer is drained).
type infWatcher struct {
	mu        sync.Mutex
	queue     []watch.Event
	finishing bool
	wake      chan struct{}
	result    chan watch.Event
	done      chan struct{}
	stopOnce  sync.Once
}

func newInfWatcher() *infWatcher {
	w := &infWatcher{wake: make(chan struct{}, 1), result: make(chan watch.Event, 100), done: make(chan struct{})}
	go w.pump()
	return w
}

func (w *infWatcher) pump() {
	defer close(w.result)
	for {
		w.mu.Lock()
		batch := w.queue
		w.queue = nil
		finishing := w.finishing
		w.mu.Unlock()
		for _, ev := range batch {
			select {
			case w.result <- ev:
			case <-w.done:
				return
			}
		}
		if len(batch) == 0 && finishing {
			return
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-w.wake:
		case <-w.done:
			return
		}
	}
}

func (w *infWatcher) send(ev watch.Event) {
	w.mu.Lock()
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// finish closes the result channel once everything sent was delivered.
func (w *infWatcher) finish() {
	w.mu.Lock()
	w.finishing = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *infWatcher) Stop() { w.stopOnce.Do(func() { close(w.done) }) }

func (w *infWatcher) ResultChan() <-chan watch.Event { return w.result }

// infSyncBuffer is a bytes.Buffer safe for concurrent writers.
type infSyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *infSyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *infSyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// infBufferLogger returns a text logger writing into buf.
func infBufferLogger(buf *infSyncBuffer) klog.Logger {
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(buf)))
}

// infPerObject groups recorded events by the first object they mention.
func infPerObject(events []string) map[string][]string {
	out := map[string][]string{}
	for _, ev := range events {
		fields := strings.Fields(ev)
		key := strings.TrimPrefix(fields[1], "tombstone(")
		key, _, _ = strings.Cut(key, "@")
		out[key] = append(out[key], ev)
	}
	return out
}

// infTestLogger returns a logger writing into the test's log.
func infTestLogger(t *testing.T) klog.Logger {
	logger, _ := ktesting.NewTestContext(t)
	return logger
}

// infKlogContext returns a context with the test's logger.
func infKlogContext(t *testing.T) context.Context {
	_, ctx := ktesting.NewTestContext(t)
	return ctx
}

// timerRecordingClock is a fake clock that counts the timers created for each
// duration, so a test can step the clock once the timer it means to fire is
// waiting, not merely some timer (a watch's idle timer after a bookmark, say).
type timerRecordingClock struct {
	*testingclock.FakeClock
	mu      sync.Mutex
	created map[time.Duration]int
}

func newTimerRecordingClock() *timerRecordingClock {
	return &timerRecordingClock{FakeClock: testingclock.NewFakeClock(time.Now()), created: map[time.Duration]int{}}
}

func (c *timerRecordingClock) NewTimer(d time.Duration) clock.Timer {
	t := c.FakeClock.NewTimer(d)
	c.mu.Lock()
	c.created[d]++
	c.mu.Unlock()
	return t
}

// timersCreated is the number of timers created so far for d.
func (c *timerRecordingClock) timersCreated(d time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.created[d]
}

// waitForNextWatch waits until srv has opened one more watch (the first call
// waits for the first watch). Tests that change the server "silently" or
// expire watches must wait for the informer's watch first: before it is
// open, such a change is not missed by a watch but found by the failed
// resumption's relist, which is a different scenario.
func waitForNextWatch(t testing.TB, srv *infServer) {
	t.Helper()
	select {
	case <-srv.watchOpen:
	case <-time.After(infTimeout):
		t.Fatal("no watch was opened")
	}
}

// eventuallyTick is the polling interval of the require.Eventually calls of
// the informer tests that wait on a condition many times a second.
const eventuallyTick = time.Millisecond

// countingKeyFunc is DeletionHandlingMetaNamespaceKeyFunc counting its
// calls.
type countingKeyFunc struct{ calls atomic.Int64 }

func (k *countingKeyFunc) fn(obj interface{}) (string, error) {
	k.calls.Add(1)
	return DeletionHandlingMetaNamespaceKeyFunc(obj)
}

// snapshotInformer builds an informer over srv with opts
// (SnapshotFile set by the caller), a recorder and a collector of the watch
// error handler's errors.
func snapshotInformer(t *testing.T, srv *infServer, opts SharedIndexInformerOptions) (*sharedIndexInformer, *infRecorder, func() []error) {
	t.Helper()
	informer := NewSharedIndexInformerWithOptions(srv.lw(), &v1.Pod{}, opts).(*sharedIndexInformer)
	rec := &infRecorder{}
	_, err := informer.AddEventHandler(rec)
	require.NoError(t, err)
	var mu sync.Mutex
	var errs []error
	require.NoError(t, informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *Reflector, err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}))
	return informer, rec, func() []error {
		mu.Lock()
		defer mu.Unlock()
		return append([]error(nil), errs...)
	}
}
