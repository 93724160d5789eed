package cache

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kinformer/kinformer/cache/internal/reflector"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// rfWait is how long tests wait for a condition before failing.
const rfWait = 10 * time.Second

// rfPod returns a pod in namespace "ns".
func rfPod(name, rv string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// rfPodList returns a pod list at rv with the given continue token.
func rfPodList(rv, cont string, pods ...*v1.Pod) *v1.PodList {
	l := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv, Continue: cont}}
	for _, p := range pods {
		l.Items = append(l.Items, *p)
	}
	return l
}

// rfEndBookmark is the bookmark that ends the initial events of a streaming list.
func rfEndBookmark(rv string) watch.Event {
	return watch.Event{Type: watch.Bookmark, Object: &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: rv,
		Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
	}}}
}

func rfEv(t watch.EventType, obj runtime.Object) watch.Event {
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

// rfWaitExhausted waits until the script is used up.
func rfWaitExhausted(t *testing.T, s *fakeapi.API) {
	t.Helper()
	select {
	case <-s.Exhausted():
	case <-time.After(rfWait):
		t.Fatalf("script not consumed; lists=%d watches=%d", len(s.ListOptions()), len(watchOptionsWithoutTimeout(s)))
	}
}

// rfDescribe renders an object as ns/name@rv.
func rfDescribe(obj interface{}) string {
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

// rfRecorder is a ReflectorStore (with bookmarks and resource version
// updates) that records the operations it receives and keeps the
// resulting content.
type rfRecorder struct {
	mu       sync.Mutex
	ops      []string
	items    map[string]interface{}
	order    [][]string // item order of each Replace
	failNext map[string]error
	// sortReplace sorts the items of Replace in the recorded op.
	sortReplace bool
}

func rfNewRecorder() *rfRecorder {
	return &rfRecorder{items: map[string]interface{}{}, failNext: map[string]error{}}
}

func (r *rfRecorder) record(op string) error {
	r.ops = append(r.ops, op)
	verb := strings.Fields(op)[0]
	if err, ok := r.failNext[verb]; ok {
		delete(r.failNext, verb)
		return err
	}
	return nil
}

func rfKey(obj interface{}) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("<%T>", obj)
	}
	return m.GetNamespace() + "/" + m.GetName()
}

func (r *rfRecorder) Add(obj interface{}) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items[rfKey(obj)] = obj
	return r.record("add " + rfDescribe(obj))
}

func (r *rfRecorder) Update(obj interface{}) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items[rfKey(obj)] = obj
	return r.record("update " + rfDescribe(obj))
}

func (r *rfRecorder) Delete(obj interface{}) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.items, rfKey(obj))
	return r.record("delete " + rfDescribe(obj))
}

func (r *rfRecorder) Replace(list []interface{}, rv string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = map[string]interface{}{}
	names := make([]string, 0, len(list))
	for _, obj := range list {
		r.items[rfKey(obj)] = obj
		names = append(names, rfDescribe(obj))
	}
	r.order = append(r.order, append([]string(nil), names...))
	if r.sortReplace {
		sort.Strings(names)
	}
	return r.record(fmt.Sprintf("replace [%s] %s", strings.Join(names, " "), rv))
}

func (r *rfRecorder) Resync() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.record("resync")
}

func (r *rfRecorder) Bookmark(rv string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.record("bookmark " + rv)
}

func (r *rfRecorder) UpdateResourceVersion(rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.record("rv " + rv)
}

func (r *rfRecorder) fail(verb string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failNext[verb] = err
}

func (r *rfRecorder) opsSnapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ops...)
}

// opsWithout returns the ops whose verb is not one of verbs.
func (r *rfRecorder) opsWithout(verbs ...string) []string {
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
func (r *rfRecorder) content() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.items))
	for _, obj := range r.items {
		out = append(out, rfDescribe(obj))
	}
	sort.Strings(out)
	return out
}

// rfPlainStore is a ReflectorStore without the optional interfaces.
type rfPlainStore struct{ rec *rfRecorder }

func (p rfPlainStore) Add(obj interface{}) error                   { return p.rec.Add(obj) }
func (p rfPlainStore) Update(obj interface{}) error                { return p.rec.Update(obj) }
func (p rfPlainStore) Delete(obj interface{}) error                { return p.rec.Delete(obj) }
func (p rfPlainStore) Replace(list []interface{}, rv string) error { return p.rec.Replace(list, rv) }
func (p rfPlainStore) Resync() error                               { return p.rec.Resync() }

// rfErrors collects the errors given to a watch error handler.
type rfErrors struct {
	mu   sync.Mutex
	errs []error
}

func (e *rfErrors) handler(_ context.Context, _ *Reflector, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, err)
}

func (e *rfErrors) snapshot() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errs...)
}

// rfRunUntilExhausted runs r.RunWithContext until the script is used up,
// then stops it and waits for it to return.
func rfRunUntilExhausted(t *testing.T, r *Reflector, s *fakeapi.API) {
	t.Helper()
	stop := rfStartRun(t, r)
	rfWaitExhausted(t, s)
	stop()
}

// rfErrKind classifies an error for assertions.
func rfErrKind(err error) string {
	var short *VeryShortWatchError
	var engineShort *reflector.ShortWatchError
	var incomplete *reflector.IncompleteStreamError
	switch {
	case errors.As(err, &incomplete):
		if incomplete.SilentFor > 0 {
			return "incomplete: silent"
		}
		return "incomplete: " + rfErrKind(incomplete.Err)
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

// rfErrKinds classifies errs, leaving out the script's own exhaustion errors.
func rfErrKinds(errs []error) []string {
	var out []string
	for _, err := range errs {
		if errors.Is(err, fakeapi.ErrScriptExhausted) || strings.Contains(err.Error(), fakeapi.ErrScriptExhausted.Error()) {
			continue
		}
		out = append(out, rfErrKind(err))
	}
	return out
}

// rfStartRun runs r.RunWithContext in the background; the returned stop
// function cancels it and waits for it to return.
func rfStartRun(t *testing.T, r *Reflector) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.RunWithContext(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(rfWait):
				t.Error("Run did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// rfTinyBackoff is a real-clock backoff of a microsecond, for tests that
// only count retries.
func rfTinyBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: time.Microsecond, Factor: 1, Steps: 1}
}

func rfRequireEventually(t *testing.T, cond func() bool, msg string, args ...interface{}) {
	t.Helper()
	require.Eventually(t, cond, rfWait, time.Millisecond, fmt.Sprintf(msg, args...))
}

// watchTimeoutSeconds draws the timeout of one watch request, as the
// Reflector's watches do.
func (r *Reflector) watchTimeoutSeconds() *int64 {
	return r.engine.WatchTimeoutSeconds()
}
