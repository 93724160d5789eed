package cache

// The helpers the tests of this package share: objects and events to feed
// them, recorders of what a Reflector or an informer did, and waits.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
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
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clientcache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/klog/v2/textlogger"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/cache/internal/reflector"
	"github.com/kinformer/kinformer/internal/fakeapi"
)

// newPod returns a pod in namespace "ns" (fakeapi.Namespace) with the given
// name and resourceVersion, as fakeapi.Server's pods are.
func newPod(name, rv string) *v1.Pod { return newPodIn("ns", name, rv) }

// newPodIn returns a pod with the given namespace, name, resource version and
// labels (given as key, value pairs).
func newPodIn(ns, name, rv string, labelKV ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
	if len(labelKV) > 0 {
		p.Labels = map[string]string{}
		for i := 0; i+1 < len(labelKV); i += 2 {
			p.Labels[labelKV[i]] = labelKV[i+1]
		}
	}
	return p
}

// newPodWithUID is newPodIn with a UID.
func newPodWithUID(name, rv, uid string, labelKV ...string) *v1.Pod {
	p := newPodIn("ns", name, rv, labelKV...)
	p.UID = types.UID(uid)
	return p
}

// waitTimeout bounds every wait in the informer tests.
const waitTimeout = 20 * time.Second

// describeObj renders an object for event logs: "ns/name@rv", or
// "tombstone(ns/name@rv)" for a DeletedFinalStateUnknown.
func describeObj(obj interface{}) string {
	if tomb, ok := obj.(clientcache.DeletedFinalStateUnknown); ok {
		obj = DeletedFinalStateUnknown{Key: tomb.Key, Obj: tomb.Obj}
	}
	if tomb, ok := obj.(DeletedFinalStateUnknown); ok {
		if tomb.Obj == nil {
			return "tombstone(" + tomb.Key + ")"
		}
		return "tombstone(" + describeObj(tomb.Obj) + ")"
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

// eventRecorder is a ResourceEventHandler that records every notification
// as a string.
type eventRecorder struct {
	mu     sync.Mutex
	events []string
	// onEvent, if set, runs inside the handler before recording.
	onEvent func(kind string, obj interface{})
}

func (r *eventRecorder) record(kind string, obj interface{}, s string) {
	if r.onEvent != nil {
		r.onEvent(kind, obj)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, s)
}

func (r *eventRecorder) OnAdd(obj interface{}, isInInitialList bool) {
	r.record("add", obj, fmt.Sprintf("add %s initial=%v", describeObj(obj), isInInitialList))
}

func (r *eventRecorder) OnUpdate(oldObj, newObj interface{}) {
	r.record("update", newObj, fmt.Sprintf("update %s -> %s", describeObj(oldObj), describeObj(newObj)))
}

func (r *eventRecorder) OnDelete(obj interface{}) {
	r.record("delete", obj, fmt.Sprintf("delete %s", describeObj(obj)))
}

func (r *eventRecorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

// waitN waits until at least n events were recorded and returns them.
func (r *eventRecorder) waitN(t testing.TB, n int) []string {
	t.Helper()
	require.Eventually(t, func() bool { return len(r.get()) >= n }, waitTimeout, time.Millisecond, "waiting for %d events, have %v", n, r.get())
	return r.get()
}

// describedStore renders the store's objects sorted.
func describedStore(s interface{ List() []interface{} }) []string {
	var out []string
	for _, obj := range s.List() {
		out = append(out, describeObj(obj))
	}
	sort.Strings(out)
	return out
}

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

// noWatchListLW is a ListWatch that declares it does not support streaming
// lists, so Reflectors use LIST + WATCH.
type noWatchListLW struct {
	*ListWatch
}

func (noWatchListLW) IsWatchListSemanticsUnSupported() bool { return true }

// podsGVR is the pods resource.
var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// queueKinds are the queue choices every informer table runs on.
var queueKinds = []struct {
	name         string
	useDeltaFIFO bool
}{
	{"RealFIFO", false},
	{"DeltaFIFO", true},
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// bufferLogger returns a text logger writing into buf.
func bufferLogger(buf *syncBuffer) klog.Logger {
	return textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(buf)))
}

// perObject groups recorded events by the first object they mention.
func perObject(events []string) map[string][]string {
	out := map[string][]string{}
	for _, ev := range events {
		fields := strings.Fields(ev)
		key := strings.TrimPrefix(fields[1], "tombstone(")
		key, _, _ = strings.Cut(key, "@")
		out[key] = append(out[key], ev)
	}
	return out
}

// testLogger returns a logger writing into the test's log.
func testLogger(t *testing.T) klog.Logger {
	logger, _ := ktesting.NewTestContext(t)
	return logger
}

// klogContext returns a context with the test's logger.
func klogContext(t *testing.T) context.Context {
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
	case <-time.After(waitTimeout):
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
func snapshotInformer(t *testing.T, srv *fakeapi.Server, opts SharedIndexInformerOptions) (*sharedIndexInformer, *eventRecorder, func() []error) {
	t.Helper()
	informer := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, opts).(*sharedIndexInformer)
	rec := &eventRecorder{}
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

// conditionTimeout is how long tests wait for a condition before failing.
const conditionTimeout = 10 * time.Second

// newPodList returns a pod list at rv with the given continue token.
func newPodList(rv, cont string, pods ...*v1.Pod) *v1.PodList {
	l := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv, Continue: cont}}
	for _, p := range pods {
		l.Items = append(l.Items, *p)
	}
	return l
}

// endOfInitialEvents is the bookmark that ends the initial events of a streaming list.
func endOfInitialEvents(rv string) watch.Event {
	return watch.Event{Type: watch.Bookmark, Object: &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: rv,
		Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
	}}}
}

func newEvent(t watch.EventType, obj runtime.Object) watch.Event {
	return watch.Event{Type: t, Object: obj}
}

// watchOptionsWithoutTimeout returns the options of api's Watch calls with
// TimeoutSeconds cleared: the Reflector draws it at random, and the tests
// that check it do so separately.
func watchOptionsWithoutTimeout(api *fakeapi.API) []metav1.ListOptions {
	out := api.WatchOptions()
	for i := range out {
		out[i].TimeoutSeconds = nil
	}
	return out
}

// waitExhausted waits until the script is used up.
func waitExhausted(t *testing.T, s *fakeapi.API) {
	t.Helper()
	select {
	case <-s.Exhausted():
	case <-time.After(conditionTimeout):
		t.Fatalf("script not consumed; lists=%d watches=%d", len(s.ListOptions()), len(watchOptionsWithoutTimeout(s)))
	}
}

// describeObject renders an object as ns/name@rv.
func describeObject(obj interface{}) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("<%T>", obj)
	}
	key := m.GetName()
	if m.GetNamespace() != "" {
		key = m.GetNamespace() + "/" + key
	}
	return key + "@" + m.GetResourceVersion()
}

// storeRecorder is a ReflectorStore (with bookmarks and resource version
// updates) that records the operations it receives and keeps the
// resulting content.
type storeRecorder struct {
	mu       sync.Mutex
	ops      []string
	items    map[string]interface{}
	order    [][]string // item order of each Replace
	failNext map[string]error
	// sortReplace sorts the items of Replace in the recorded op.
	sortReplace bool
}

func newStoreRecorder() *storeRecorder {
	return &storeRecorder{items: map[string]interface{}{}, failNext: map[string]error{}}
}

func (r *storeRecorder) record(op string) error {
	r.ops = append(r.ops, op)
	verb := strings.Fields(op)[0]
	if err, ok := r.failNext[verb]; ok {
		delete(r.failNext, verb)
		return err
	}
	return nil
}

func objectKey(obj interface{}) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("<%T>", obj)
	}
	return m.GetNamespace() + "/" + m.GetName()
}

func (r *storeRecorder) Add(obj interface{}) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items[objectKey(obj)] = obj
	return r.record("add " + describeObject(obj))
}

func (r *storeRecorder) Update(obj interface{}) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items[objectKey(obj)] = obj
	return r.record("update " + describeObject(obj))
}

func (r *storeRecorder) Delete(obj interface{}) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.items, objectKey(obj))
	return r.record("delete " + describeObject(obj))
}

func (r *storeRecorder) Replace(list []interface{}, rv string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = map[string]interface{}{}
	names := make([]string, 0, len(list))
	for _, obj := range list {
		r.items[objectKey(obj)] = obj
		names = append(names, describeObject(obj))
	}
	r.order = append(r.order, append([]string(nil), names...))
	if r.sortReplace {
		sort.Strings(names)
	}
	return r.record(fmt.Sprintf("replace [%s] %s", strings.Join(names, " "), rv))
}

func (r *storeRecorder) Resync() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.record("resync")
}

func (r *storeRecorder) Bookmark(rv string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.record("bookmark " + rv)
}

func (r *storeRecorder) UpdateResourceVersion(rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.record("rv " + rv)
}

func (r *storeRecorder) fail(verb string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failNext[verb] = err
}

func (r *storeRecorder) opsSnapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ops...)
}

// opsWithout returns the ops whose verb is not one of verbs.
func (r *storeRecorder) opsWithout(verbs ...string) []string {
	var out []string
	for _, op := range r.opsSnapshot() {
		keep := true
		for _, v := range verbs {
			if strings.HasPrefix(op, v+" ") || op == v {
				keep = false
			}
		}
		if keep {
			out = append(out, op)
		}
	}
	return out
}

// content returns the stored objects as sorted ns/name@rv strings.
func (r *storeRecorder) content() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.items))
	for _, obj := range r.items {
		out = append(out, describeObject(obj))
	}
	sort.Strings(out)
	return out
}

// plainStore is a ReflectorStore without the optional interfaces.
type plainStore struct{ rec *storeRecorder }

func (p plainStore) Add(obj interface{}) error                   { return p.rec.Add(obj) }
func (p plainStore) Update(obj interface{}) error                { return p.rec.Update(obj) }
func (p plainStore) Delete(obj interface{}) error                { return p.rec.Delete(obj) }
func (p plainStore) Replace(list []interface{}, rv string) error { return p.rec.Replace(list, rv) }
func (p plainStore) Resync() error                               { return p.rec.Resync() }

// watchErrors collects the errors given to a watch error handler.
type watchErrors struct {
	mu   sync.Mutex
	errs []error
}

func (e *watchErrors) handler(_ context.Context, _ *Reflector, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, err)
}

func (e *watchErrors) snapshot() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errs...)
}

// runUntilExhausted runs r.RunWithContext until the script is used up,
// then stops it and waits for it to return.
func runUntilExhausted(t *testing.T, r *Reflector, s *fakeapi.API) {
	t.Helper()
	stop := startRun(t, r)
	waitExhausted(t, s)
	stop()
}

// errorKind classifies an error for assertions.
func errorKind(err error) string {
	var short *VeryShortWatchError
	var engineShort *reflector.ShortWatchError
	var incomplete *reflector.IncompleteStreamError
	switch {
	case errors.As(err, &incomplete):
		if incomplete.SilentFor > 0 {
			return "incomplete: silent"
		}
		return "incomplete: " + errorKind(incomplete.Err)
	case errors.As(err, &short), errors.As(err, &engineShort):
		return "short"
	case isExpiredError(err):
		return "expired"
	case isTooLargeResourceVersionError(err):
		return "toolarge"
	case apierrors.IsTooManyRequests(err):
		return "toomany"
	case apierrors.IsInternalError(err):
		return "internal"
	case utilnet.IsConnectionRefused(err):
		return "refused"
	}
	return "other: " + err.Error()
}

// errorKinds classifies errs, leaving out the script's own exhaustion errors.
func errorKinds(errs []error) []string {
	var out []string
	for _, err := range errs {
		if errors.Is(err, fakeapi.ErrScriptExhausted) || strings.Contains(err.Error(), fakeapi.ErrScriptExhausted.Error()) {
			continue
		}
		out = append(out, errorKind(err))
	}
	return out
}

// startRun runs r.RunWithContext in the background; the returned stop
// function cancels it and waits for it to return.
func startRun(t *testing.T, r *Reflector) (stop func()) {
	t.Helper()
	return runInBackground(t, r.RunWithContext, "Run")
}

// runInBackground calls run on its own goroutine with a context that the
// returned stop function cancels; stop waits until run returns (an error
// names what did not return after waitTimeout). It is called again at the
// test's cleanup; only the first call does anything.
func runInBackground(t *testing.T, run func(context.Context), what string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(waitTimeout):
				t.Errorf("%s did not return after cancel", what)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// tinyBackoff is a real-clock backoff of a microsecond, for tests that
// only count retries.
func tinyBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: time.Microsecond, Factor: 1, Steps: 1}
}

func requireEventually(t *testing.T, cond func() bool, msg string, args ...interface{}) {
	t.Helper()
	require.Eventually(t, cond, conditionTimeout, time.Millisecond, fmt.Sprintf(msg, args...))
}

// watchTimeoutSeconds draws the timeout of one watch request, as the
// Reflector's watches do.
func (r *Reflector) watchTimeoutSeconds() *int64 {
	return r.engine.WatchTimeoutSeconds()
}

// openedWatch waits until api has handed out its i-th watch (from 0) and
// returns it.
func openedWatch(t *testing.T, api *fakeapi.API, i int) *fakeapi.Watch {
	t.Helper()
	requireEventually(t, func() bool { return api.NthWatch(i) != nil }, "watch %d not opened", i)
	return api.NthWatch(i)
}

// callTimes returns a hook for fakeapi's OnList or OnWatch that records the
// time of clk at each call, and a function returning the times recorded so
// far, in order.
func callTimes(clk clock.PassiveClock) (hook func(metav1.ListOptions), times func() []time.Time) {
	var mu sync.Mutex
	var recorded []time.Time
	hook = func(metav1.ListOptions) {
		mu.Lock()
		recorded = append(recorded, clk.Now())
		mu.Unlock()
	}
	times = func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Time(nil), recorded...)
	}
	return hook, times
}
