package cache

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
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

	"github.com/kinformer/kinformer/internal/fakeapi"
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

// infServer is a fakeapi.Server under the method names that
// pagewise_relist_test.go and process_deltas_test.go call (pagewise's pagedLW
// pages the server's lists itself); every other test uses *fakeapi.Server
// directly.
type infServer struct{ *fakeapi.Server }

func newInfServer() *infServer { return &infServer{fakeapi.NewServer(false)} }

func (s *infServer) create(name string)         { s.Create(name) }
func (s *infServer) update(name string)         { s.Update(name) }
func (s *infServer) createSilently(name string) { s.CreateMissed(name) }
func (s *infServer) updateSilently(name string) { s.UpdateMissed(name) }
func (s *infServer) removeSilently(name string) { s.DeleteMissed(name) }
func (s *infServer) expire()                    { s.Expire() }
func (s *infServer) stopWatches()               { s.StopWatches() }

// list answers an unpaged LIST whatever the options ask for: the caller
// (pagedLW) cuts the pages.
func (s *infServer) list(options metav1.ListOptions) (runtime.Object, error) {
	options.Limit, options.Continue = 0, ""
	return s.List(options)
}

func (s *infServer) watch(options metav1.ListOptions) (watch.Interface, error) {
	return s.Watch(options)
}

// lw returns the server as the ListerWatcher of an informer.
func (s *infServer) lw() ListerWatcher { return s.Server }

// requestCounts returns how many LIST requests (first pages) and WATCH
// requests srv was asked, failed ones included.
func requestCounts(srv *fakeapi.Server) (lists, watches int) {
	for _, r := range srv.Requests() {
		switch {
		case strings.HasPrefix(r, "list page "):
		case strings.HasPrefix(r, "list"):
			lists++
		case strings.HasPrefix(r, "watch"):
			watches++
		}
	}
	return lists, watches
}

// infPlainLW is a ListWatch that declares it does not support streaming
// lists, so Reflectors use LIST + WATCH.
type infPlainLW struct {
	*ListWatch
}

func (infPlainLW) IsWatchListSemanticsUnSupported() bool { return true }

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
func waitForNextWatch(t testing.TB, srv interface{ WatchOpened() <-chan struct{} }) {
	t.Helper()
	select {
	case <-srv.WatchOpened():
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
func snapshotInformer(t *testing.T, srv *fakeapi.Server, opts SharedIndexInformerOptions) (*sharedIndexInformer, *infRecorder, func() []error) {
	t.Helper()
	informer := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, opts).(*sharedIndexInformer)
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
