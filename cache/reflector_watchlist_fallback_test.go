package cache

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	clientcache "k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/cache/internal/diag"
	"github.com/kinformer/kinformer/cache/internal/reflector"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// The tests of this file cover what a Reflector does with a streaming list
// that does not complete: it opens a stream the server closed again, falls
// back to LIST for the cycle after an error or a silent stream
// (kubernetes/kubernetes#140890, #135895), never tells the watch error
// handler, and streams again on the next cycle.

// wlFallbackLog is the V(4) message logged when a streaming list falls back
// to LIST.
const wlFallbackLog = "Data couldn't be fetched in watchlist mode. Falling back to regular list."

// wlBufferedLogger returns a logger whose output can be read back.
func wlBufferedLogger(t *testing.T) (klog.Logger, func() string) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	buffer := logger.GetSink().(ktesting.Underlier).GetBuffer()
	return logger, buffer.String
}

// wlStepUntil advances clk a second at a time until done. It steps only
// while the clock has a waiter (the stream's idle timer, the only one), so
// the Reflector has handled a timer that fired (re-armed it, or cut the
// stream) before the clock moves on.
func wlStepUntil(t *testing.T, clk *testingclock.FakeClock, done func() bool, msg string) {
	t.Helper()
	rfRequireEventually(t, func() bool {
		if done() {
			return true
		}
		if clk.HasWaiters() {
			clk.Step(time.Second)
		}
		return false
	}, "%s", msg)
}

// wlPodLW is a plain ListWatch (no ToListWatcherWithWatchListSemantics)
// over the pods of a fake clientset, as users write it.
func wlPodLW(client *fake.Clientset) *ListWatch {
	return &ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Pods("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Pods("").Watch(ctx, o)
		},
	}
}

// wlPodActions describes the list and watch calls made on the fake
// clientset's pods: "list", "watch" or "stream" (a watch asking for initial
// events).
func wlPodActions(client *fake.Clientset) []string {
	var out []string
	for _, a := range client.Actions() {
		switch act := a.(type) {
		case clienttesting.ListActionImpl:
			out = append(out, "list")
		case clienttesting.WatchActionImpl:
			if si := act.ListOptions.SendInitialEvents; si != nil && *si {
				out = append(out, "stream")
			} else {
				out = append(out, "watch")
			}
		}
	}
	return out
}

// TestWatchListFallbackFakeClientset reproduces the defect: a plain
// ListWatch over client-go's fake clientset with the WatchListClient gate on.
// The fake watch ignores SendInitialEvents: it sends the existing pods as
// ADDED events and never the initial-events-end bookmark.
func TestWatchListFallbackFakeClientset(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	pod := func(name string) *v1.Pod { return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}} }

	t.Run("with ToListWatcherWithWatchListSemantics it lists at once", func(t *testing.T) {
		client := fake.NewClientset(pod("a"))
		r := NewReflectorWithOptions(ToListWatcherWithWatchListSemantics(wlPodLW(client), client), &v1.Pod{}, rfNewRecorder(), ReflectorOptions{Name: "wl"})
		require.False(t, r.useWatchList)
		var errs rfErrors
		r.watchErrorHandler = errs.handler
		stop := rfStartRun(t, r)
		rfRequireEventually(t, func() bool { return len(wlPodActions(client)) == 2 }, "no list and watch")
		stop()
		assert.Equal(t, []string{"list", "watch"}, wlPodActions(client))
		assert.Empty(t, errs.snapshot())
	})

	t.Run("client-go's reflector waits for ever", func(t *testing.T) {
		client := fake.NewClientset(pod("a"), pod("b"))
		ours := wlPodLW(client)
		lw := &clientcache.ListWatch{
			ListWithContextFunc:  clientcache.ListWithContextFunc(ours.ListWithContextFunc),
			WatchFuncWithContext: clientcache.WatchFuncWithContext(ours.WatchFuncWithContext),
		}
		store := clientcache.NewStore(clientcache.MetaNamespaceKeyFunc)
		clk := testingclock.NewFakeClock(time.Now())
		r := clientcache.NewReflectorWithOptions(lw, &v1.Pod{}, store, clientcache.ReflectorOptions{Name: "wl", Clock: clk})
		logger, logs := wlBufferedLogger(t)
		ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.RunWithContext(ctx)
		}()
		defer func() { cancel(); <-done }()

		rfRequireEventually(t, clk.HasWaiters, "the stream's ticker is not running")
		for i := 1; i <= 3; i++ {
			clk.Step(reflector.InitialEventsWarnInterval)
			rfRequireEventually(t, func() bool { return strings.Count(logs(), "event bookmark expired") >= i }, "warning %d not logged", i)
		}
		assert.Equal(t, []string{"stream"}, wlPodActions(client), "30s later it still waits on the first stream")
		assert.Empty(t, store.List())
		assert.Empty(t, r.LastSyncResourceVersion())
	})

	t.Run("kinformer's informer falls back to LIST, syncs and sees a create", func(t *testing.T) {
		client := fake.NewClientset(pod("a"), pod("b"))
		informer := NewSharedIndexInformer(wlPodLW(client), &v1.Pod{}, 0, Indexers{})
		clk := testingclock.NewFakeClock(time.Now())
		informer.(*sharedIndexInformer).clock = clk // reaches the Reflector
		var errs rfErrors
		require.NoError(t, informer.SetWatchErrorHandlerWithContext(errs.handler))
		added := make(chan string, 10)
		_, err := informer.AddEventHandler(ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj interface{}, isInInitialList bool) {
				added <- fmt.Sprintf("%s initial=%v", obj.(*v1.Pod).Name, isInInitialList)
			},
		})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			informer.RunWithContext(ctx)
		}()
		defer func() { cancel(); <-done }()

		wlStepUntil(t, clk, informer.HasSynced, "the informer did not sync")
		assert.ElementsMatch(t, []string{"ns/a", "ns/b"}, informer.GetStore().ListKeys())
		var initial []string
		for len(initial) < 2 {
			select {
			case got := <-added:
				initial = append(initial, got)
			case <-time.After(rfWait):
				t.Fatalf("no add for the initial list; got %v", initial)
			}
		}
		assert.ElementsMatch(t, []string{"a initial=true", "b initial=true"}, initial)

		// The fake clientset only delivers creates to watches already open.
		rfRequireEventually(t, func() bool { return len(wlPodActions(client)) == 3 }, "no watch after the LIST")
		assert.Equal(t, []string{"stream", "list", "watch"}, wlPodActions(client))
		_, err = client.CoreV1().Pods("ns").Create(ctx, pod("c"), metav1.CreateOptions{})
		require.NoError(t, err)
		select {
		case got := <-added:
			assert.Equal(t, "c initial=false", got)
		case <-time.After(rfWait):
			t.Fatal("the create was not seen")
		}

		assert.Empty(t, errs.snapshot(), "the fallback to LIST is no failure")
		st, ok := GetInformerStatus(informer)
		require.True(t, ok)
		assert.Equal(t, uint64(1), st.Lists[RelistStreamFallback], "the fallback is counted")
	})
}

// TestWatchListFallbackScripted runs scripted servers whose streams end
// before their end bookmark. As in client-go, a stream the server closed is
// opened again at once, a stream that fails falls back to LIST for that
// cycle, the next cycle streams again, and the watch error handler hears of
// neither (only of the watches' own failures and a retried 429).
func TestWatchListFallbackScripted(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	expired := apierrors.NewResourceExpired("too old resource version")
	internal := &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Reason: metav1.StatusReasonInternalError, Message: "boom"}
	tooMany := &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusTooManyRequests, Reason: metav1.StatusReasonTooManyRequests}
	cases := []struct {
		name         string
		lists        []fakeapi.ListAnswer
		watches      []fakeapi.WatchAnswer
		wantLists    []metav1.ListOptions
		wantWatch    []metav1.ListOptions
		wantOps      []string
		wantErrs     []string
		wantFallback int // times the fallback to LIST is logged
	}{
		{
			name: "closed before the bookmark: the stream is opened again, and the relist after a 410 streams",
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{rfEv(watch.Added, rfPod("p1", "1"))}},
				{Events: []watch.Event{rfEv(watch.Added, rfPod("p1", "1")), rfEv(watch.Added, rfPod("p2", "10")), rfEndBookmark("10"), rfEv(watch.Added, rfPod("p3", "11")), rfEv(watch.Error, &expired.ErrStatus)}},
				{Events: []watch.Event{rfEv(watch.Added, rfPod("p3", "20")), rfEndBookmark("20"), rfEv(watch.Added, rfPod("p4", "21"))}},
			},
			wantWatch: []metav1.ListOptions{rfStreamOpts(""), rfStreamOpts(""), rfStreamOpts("11"), rfWatchOpts("21")},
			wantOps:   []string{"replace [ns/p1@1 ns/p2@10] 10", "add ns/p3@11", "rv 11", "replace [ns/p3@20] 20", "add ns/p4@21", "rv 21"},
			wantErrs:  []string{"expired"},
		},
		{
			name: "an error event before the bookmark: LIST, and a stream again after a 410",
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{rfEv(watch.Added, rfPod("p1", "1")), rfEv(watch.Error, internal)}},
				{Events: []watch.Event{rfEv(watch.Error, &expired.ErrStatus)}},
				{Events: []watch.Event{rfEv(watch.Added, rfPod("p3", "20")), rfEndBookmark("20"), rfEv(watch.Added, rfPod("p4", "21"))}},
			},
			lists:        []fakeapi.ListAnswer{{Object: rfPodList("10", "", rfPod("p2", "10"))}},
			wantLists:    []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}},
			wantWatch:    []metav1.ListOptions{rfStreamOpts(""), rfWatchOpts("10"), rfStreamOpts("10"), rfWatchOpts("21")},
			wantOps:      []string{"replace [ns/p2@10] 10", "replace [ns/p3@20] 20", "add ns/p4@21", "rv 21"},
			wantErrs:     []string{"expired"},
			wantFallback: 1,
		},
		{
			name: "a 429 error event before the bookmark is retried as before",
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{rfEv(watch.Added, rfPod("p1", "1")), rfEv(watch.Error, tooMany)}},
				{Events: []watch.Event{rfEv(watch.Added, rfPod("p1", "1")), rfEndBookmark("2"), rfEv(watch.Added, rfPod("p2", "3"))}},
			},
			wantWatch: []metav1.ListOptions{rfStreamOpts(""), rfStreamOpts(""), rfWatchOpts("3")},
			wantOps:   []string{"replace [ns/p1@1] 2", "add ns/p2@3", "rv 3"},
			wantErrs:  []string{"toomany"},
		},
		{
			name: "after a completed streaming list, one that fails falls back for that cycle only",
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{rfEv(watch.Added, rfPod("p1", "1")), rfEndBookmark("2"), rfEv(watch.Error, &expired.ErrStatus)}},
				{Events: []watch.Event{rfEv(watch.Added, rfPod("p1", "3")), rfEv(watch.Error, internal)}},
				{Events: []watch.Event{rfEv(watch.Error, &expired.ErrStatus)}},
				{Events: []watch.Event{rfEv(watch.Added, rfPod("p1", "11")), rfEndBookmark("12"), rfEv(watch.Added, rfPod("p2", "13"))}},
			},
			lists:     []fakeapi.ListAnswer{{Object: rfPodList("10", "", rfPod("p1", "10"))}},
			wantLists: []metav1.ListOptions{{ResourceVersion: "2"}},
			wantWatch: []metav1.ListOptions{rfStreamOpts(""), rfStreamOpts("2"), rfWatchOpts("10"), rfStreamOpts("10"), rfWatchOpts("13")},
			wantOps: []string{
				"replace [ns/p1@1] 2",
				"replace [ns/p1@10] 10",
				"replace [ns/p1@11] 12", "add ns/p2@13", "rv 13",
			},
			wantErrs:     []string{"expired", "expired"},
			wantFallback: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New().ListAnswers(tc.lists...).WatchAnswers(tc.watches...)
			rec := rfNewRecorder()
			logger, logs := wlBufferedLogger(t)
			r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Backoff: rfTinyBackoff(), Logger: &logger})
			var errs rfErrors
			r.watchErrorHandler = errs.handler

			rfRunUntilExhausted(t, r, s)

			gotLists := s.ListOptions()
			if len(gotLists) > len(tc.wantLists) {
				gotLists = gotLists[:len(tc.wantLists)]
			}
			assert.Equal(t, tc.wantLists, gotLists, "list requests")
			assert.Equal(t, tc.wantWatch, watchOptionsWithoutTimeout(s), "watch requests")
			assert.Equal(t, tc.wantOps, rec.opsSnapshot(), "store operations")
			assert.Equal(t, tc.wantErrs, rfErrKinds(errs.snapshot()), "reported errors")
			assert.Equal(t, tc.wantFallback, strings.Count(logs(), wlFallbackLog), "fallbacks to LIST logged")
			assert.Equal(t, uint64(tc.wantFallback), r.stats.Lists(diag.ReasonStreamFallback), "fallbacks to LIST counted")
		})
	}
}

// wlWatcher is a watch over an unbuffered channel: a push returns once the
// Reflector has taken the event.
type wlWatcher struct {
	ch        chan watch.Event
	stopOnce  sync.Once
	closeOnce sync.Once
	stopped   chan struct{}
}

func wlNewWatcher() *wlWatcher {
	return &wlWatcher{ch: make(chan watch.Event), stopped: make(chan struct{})}
}

func (w *wlWatcher) ResultChan() <-chan watch.Event { return w.ch }
func (w *wlWatcher) Stop()                          { w.stopOnce.Do(func() { close(w.stopped) }) }

// close ends the result channel, as a server closing the watch.
func (w *wlWatcher) close() { w.closeOnce.Do(func() { close(w.ch) }) }

func (w *wlWatcher) isStopped() bool {
	select {
	case <-w.stopped:
		return true
	default:
		return false
	}
}

// push hands e to the Reflector, failing the test when it does not take it.
func (w *wlWatcher) push(t *testing.T, e watch.Event) {
	t.Helper()
	select {
	case w.ch <- e:
	case <-w.stopped:
		t.Fatalf("the watch was stopped before %s %s", e.Type, rfDescribe(e.Object))
	case <-time.After(rfWait):
		t.Fatalf("the Reflector did not take %s %s", e.Type, rfDescribe(e.Object))
	}
}

// wlLW answers every List with one list and every Watch with a new
// wlWatcher; it records the fake time of each List call.
type wlLW struct {
	clk  *testingclock.FakeClock
	list runtime.Object

	mu        sync.Mutex
	listTimes []time.Time
	listOpts  []metav1.ListOptions
	watchOpts []metav1.ListOptions
	// timeouts are the watch requests' TimeoutSeconds (0 when unset).
	timeouts []int64
	watchers []*wlWatcher
}

func (l *wlLW) ListWithContext(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.listTimes = append(l.listTimes, l.clk.Now())
	l.listOpts = append(l.listOpts, o)
	return l.list.DeepCopyObject(), nil
}

func (l *wlLW) WatchWithContext(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var timeout int64
	if o.TimeoutSeconds != nil {
		timeout = *o.TimeoutSeconds
	}
	l.timeouts = append(l.timeouts, timeout)
	o.TimeoutSeconds = nil
	l.watchOpts = append(l.watchOpts, o)
	w := wlNewWatcher()
	l.watchers = append(l.watchers, w)
	return w, nil
}

func (l *wlLW) List(o metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), o)
}

func (l *wlLW) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), o)
}

func (l *wlLW) watcher(i int) *wlWatcher {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < len(l.watchers) {
		return l.watchers[i]
	}
	return nil
}

func (l *wlLW) lists() ([]metav1.ListOptions, []time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]metav1.ListOptions(nil), l.listOpts...), append([]time.Time(nil), l.listTimes...)
}

func (l *wlLW) watches() []metav1.ListOptions {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]metav1.ListOptions(nil), l.watchOpts...)
}

// wlStartStream starts a Reflector on a fake clock over a wlLW and waits
// until its stream is open with the idle timer running.
func wlStartStream(t *testing.T, list runtime.Object) (*Reflector, *wlLW, *testingclock.FakeClock, *rfRecorder, *rfErrors, func() string) {
	t.Helper()
	clk := testingclock.NewFakeClock(time.Now())
	lw := &wlLW{clk: clk, list: list}
	rec := rfNewRecorder()
	logger, logs := wlBufferedLogger(t)
	r := NewReflectorWithOptions(lw, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Clock: clk, Logger: &logger})
	require.True(t, r.useWatchList)
	require.Equal(t, reflectorInitialEventsTimeout, r.initialEventsTimeout)
	errs := &rfErrors{}
	r.watchErrorHandler = errs.handler
	rfStartRun(t, r)
	rfRequireEventually(t, func() bool { return lw.watcher(0) != nil && clk.HasWaiters() }, "stream not open")
	return r, lw, clk, rec, errs, logs
}

// TestWatchListFallbackSilentStream: a stream that sends a few initial
// events and then nothing is stopped once it was silent for the bound; the
// LIST's content replaces the store, the streamed objects are dropped.
func TestWatchListFallbackSilentStream(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	r, lw, clk, rec, errs, logs := wlStartStream(t, rfPodList("10", "", rfPod("p3", "10")))
	start := clk.Now()
	stream := lw.watcher(0)
	stream.push(t, rfEv(watch.Added, rfPod("p1", "1")))
	stream.push(t, rfEv(watch.Added, rfPod("p2", "2")))

	wlStepUntil(t, clk, func() bool {
		lists, _ := lw.lists()
		return len(lists) > 0
	}, "no fallback to LIST")
	rfRequireEventually(t, func() bool { return len(lw.watches()) == 2 }, "no watch after the LIST")

	lists, times := lw.lists()
	assert.Equal(t, []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}}, lists)
	// The test may step once more before the LIST reads the clock; the
	// error below says exactly when the stream was cut.
	assert.GreaterOrEqual(t, times[0].Sub(start), reflectorInitialEventsTimeout, "the stream is not cut before 10s of silence")
	assert.True(t, stream.isStopped(), "the silent stream is stopped")
	assert.Equal(t, []metav1.ListOptions{rfStreamOpts(""), rfWatchOpts("10")}, lw.watches())
	assert.Equal(t, []string{"replace [ns/p3@10] 10"}, rec.opsSnapshot(), "the streamed objects are not merged")
	assert.Equal(t, []string{"ns/p3@10"}, rec.content())
	assert.Equal(t, "10", r.LastSyncResourceVersion())

	assert.Empty(t, errs.snapshot(), "the fallback to LIST is no failure")
	assert.Contains(t, logs(), "reflector rf: streaming list stayed silent for 10s after 2 event(s) without the initial-events-end bookmark; falling back to LIST")
	assert.Equal(t, 1, strings.Count(logs(), wlFallbackLog))

	// The watch after the LIST is an ordinary one: no bound applies.
	w := lw.watcher(1)
	clk.Step(time.Hour)
	w.push(t, rfEv(watch.Added, rfPod("p4", "11")))
	rfRequireEventually(t, func() bool { return r.LastSyncResourceVersion() == "11" }, "watch event not applied")
	assert.False(t, w.isStopped())

	// After a 410 the next cycle tries a streaming list again.
	w.push(t, rfEv(watch.Error, &apierrors.NewResourceExpired("too old").ErrStatus))
	wlStepUntil(t, clk, func() bool { return len(lw.watches()) == 3 }, "no new stream after the 410")
	assert.Equal(t, rfStreamOpts("11"), lw.watches()[2])
}

// TestWatchListFallbackSlowStream: a stream whose events keep coming, each
// within the bound of the previous one, is not cut however long it takes.
func TestWatchListFallbackSlowStream(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	r, lw, clk, rec, errs, logs := wlStartStream(t, rfPodList("99", ""))
	stream := lw.watcher(0)
	const n = 6
	gap := reflectorInitialEventsTimeout * 6 / 10
	var want []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("p%d", i)
		// A push returns once the Reflector took the event, so the clock
		// never moves more than gap past the last event it saw.
		stream.push(t, rfEv(watch.Added, rfPod(name, fmt.Sprint(i+1))))
		clk.Step(gap)
		want = append(want, fmt.Sprintf("ns/%s@%d", name, i+1))
	}
	stream.push(t, rfEndBookmark("7"))
	// The Reflector publishes a list's resourceVersion before it hands the
	// list to the store (so that a caller told of the sync reads the
	// version the cache holds): wait for the store's Replace too.
	rfRequireEventually(t, func() bool {
		return r.LastSyncResourceVersion() == "7" && len(rec.opsSnapshot()) > 0
	}, "stream not completed")

	assert.Equal(t, []string{fmt.Sprintf("replace [%s] 7", strings.Join(want, " "))}, rec.opsSnapshot())
	lists, _ := lw.lists()
	assert.Empty(t, lists, "no LIST")
	assert.Empty(t, errs.snapshot())
	assert.False(t, stream.isStopped(), "the stream goes on as the watch")
	assert.Zero(t, strings.Count(logs(), wlFallbackLog))

	// It goes on as the watch: later events are applied, without a bound.
	clk.Step(time.Hour)
	stream.push(t, rfEv(watch.Modified, rfPod("p0", "8")))
	rfRequireEventually(t, func() bool { return r.LastSyncResourceVersion() == "8" }, "watch event not applied")
	got := rec.content()
	sort.Strings(got)
	assert.Contains(t, got, "ns/p0@8")
}

// TestWatchErrorHandlerNeverSeesStreamingListErrors runs client-go's shared
// informer and ours over client-go's FakeControllerSource, which cannot
// stream lists (its Watch fails to parse the empty resourceVersion of a
// streaming list) and whose LIST is denied. Neither informer hands the
// streaming attempt's error to the watch error handler: both fall back to
// LIST and the first error the handler sees is the LIST's. kinformer counts
// the fallback (InformerStatus.Lists[RelistStreamFallback], exposed as
// kinformer_informer_lists_total{reason="stream_fallback"}).
func TestWatchErrorHandlerNeverSeesStreamingListErrors(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	firstError := func(t *testing.T, clientGo bool) (string, SharedIndexInformer) {
		source := fcache.NewFakeControllerSource()
		t.Cleanup(source.Shutdown)
		source.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod1"}})
		source.ListError = errors.New("Access Denied")
		errCh := make(chan error, 100)
		handler := func(_ context.Context, err error) {
			select {
			case errCh <- err:
			default:
			}
		}
		var run func(context.Context)
		var ours SharedIndexInformer
		if clientGo {
			informer := clientcache.NewSharedIndexInformer(source, &v1.Pod{}, time.Second, clientcache.Indexers{})
			require.NoError(t, informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *clientcache.Reflector, err error) { handler(ctx, err) }))
			run = informer.RunWithContext
		} else {
			ours = NewSharedIndexInformer(source, &v1.Pod{}, time.Second, Indexers{})
			require.NoError(t, ours.SetWatchErrorHandlerWithContext(func(ctx context.Context, _ *Reflector, err error) { handler(ctx, err) }))
			run = ours.RunWithContext
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			run(ctx)
		}()
		defer func() { cancel(); <-done }()
		select {
		case err := <-errCh:
			return err.Error(), ours
		case <-time.After(rfWait):
			t.Fatal("the watch error handler was not called")
		}
		return "", nil
	}
	theirs, _ := firstError(t, true)
	require.Equal(t, "failed to list *v1.Pod: Access Denied", theirs, "client-go")
	ours, informer := firstError(t, false)
	assert.Equal(t, theirs, ours)
	st, ok := GetInformerStatus(informer)
	require.True(t, ok)
	assert.Equal(t, uint64(1), st.Lists[RelistStreamFallback], "the fallback is counted")
	assert.Equal(t, uint64(1), st.Lists[RelistInitial], "the streaming attempt")
}

// TestStreamingListClosedAtItsTimeout: a stream the server closes before its
// end bookmark, as at the timeout it asked for, is opened again at once from
// the same resource version, as in client-go, with or without the watch
// liveness deadline: both streams ask for client-go's timeouts, 5 to 10
// minutes, and neither is cut by the deadline.
func TestStreamingListClosedAtItsTimeout(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	for _, tc := range []struct {
		name     string
		liveness time.Duration
	}{
		{name: "liveness deadline on", liveness: 30 * time.Second},
		{name: "liveness deadline off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Now())
			lw := &wlLW{clk: clk, list: rfPodList("10", "", rfPod("p1", "10"))}
			logger, _ := wlBufferedLogger(t)
			r := NewReflectorWithOptions(lw, &v1.Pod{}, rfNewRecorder(), ReflectorOptions{Name: "rf", Clock: clk, Logger: &logger, WatchIdleTimeout: tc.liveness})
			var errs rfErrors
			r.watchErrorHandler = errs.handler
			rfStartRun(t, r)
			rfRequireEventually(t, func() bool { return lw.watcher(0) != nil && clk.HasWaiters() }, "stream not open")

			// Events keep coming, each within the silence bound, for 27s
			// (longer than the liveness deadline), then the server closes
			// the stream.
			stream := lw.watcher(0)
			for i := 0; i < 3; i++ {
				stream.push(t, rfEv(watch.Added, rfPod(fmt.Sprintf("s%d", i), fmt.Sprint(i+1))))
				clk.Step(9 * time.Second)
			}
			stream.close()
			rfRequireEventually(t, func() bool { return len(lw.watches()) == 2 }, "no second watch request")
			assert.Equal(t, []metav1.ListOptions{rfStreamOpts(""), rfStreamOpts("")}, lw.watches())
			lw.mu.Lock()
			timeouts := append([]int64(nil), lw.timeouts...)
			lw.mu.Unlock()
			for _, seconds := range timeouts {
				assert.GreaterOrEqual(t, seconds, int64(300))
				assert.Less(t, seconds, int64(600))
			}
			lists, _ := lw.lists()
			assert.Empty(t, lists, "no fallback to LIST")
			assert.Empty(t, errs.snapshot(), "no failure is reported")
		})
	}
}
