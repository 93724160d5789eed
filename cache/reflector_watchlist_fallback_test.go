package cache

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
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
// back to LIST for the cycle after an error or a silent stream (client-go
// waits for ever: https://github.com/kubernetes/kubernetes/issues/140890 and
// https://github.com/kubernetes/kubernetes/issues/135895), never tells the
// watch error handler, and streams again on the next cycle.

// fallbackLog is the V(4) message logged when a streaming list falls back
// to LIST.
const fallbackLog = "Data couldn't be fetched in watchlist mode. Falling back to regular list."

// bufferedLogger returns a logger whose output can be read back.
func bufferedLogger(t *testing.T) (klog.Logger, func() string) {
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	buffer := logger.GetSink().(ktesting.Underlier).GetBuffer()
	return logger, buffer.String
}

// stepUntil advances clk a second at a time until done. It steps only
// while the clock has a waiter (the stream's idle timer, the only one), so
// the Reflector has handled a timer that fired (re-armed it, or cut the
// stream) before the clock moves on.
func stepUntil(t *testing.T, clk *testingclock.FakeClock, done func() bool, msg string) {
	t.Helper()
	requireEventually(t, func() bool {
		if done() {
			return true
		}
		if clk.HasWaiters() {
			clk.Step(time.Second)
		}
		return false
	}, "%s", msg)
}

// podLW is a plain ListWatch (no ToListWatcherWithWatchListSemantics)
// over the pods of a fake clientset, as users write it.
func podLW(client *fake.Clientset) *ListWatch {
	return &ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().Pods("").List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().Pods("").Watch(ctx, o)
		},
	}
}

// podActions describes the list and watch calls made on the fake
// clientset's pods: "list", "watch" or "stream" (a watch asking for initial
// events).
func podActions(client *fake.Clientset) []string {
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
		r := NewReflectorWithOptions(ToListWatcherWithWatchListSemantics(podLW(client), client), &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "wl"})
		require.False(t, r.useWatchList)
		var errs watchErrors
		r.watchErrorHandler = errs.handler
		stop := startRun(t, r)
		requireEventually(t, func() bool { return len(podActions(client)) == 2 }, "no list and watch")
		stop()
		assert.Equal(t, []string{"list", "watch"}, podActions(client))
		assert.Empty(t, errs.snapshot())
	})

	t.Run("client-go's reflector waits for ever", func(t *testing.T) {
		client := fake.NewClientset(pod("a"), pod("b"))
		ours := podLW(client)
		lw := &clientcache.ListWatch{
			ListWithContextFunc:  clientcache.ListWithContextFunc(ours.ListWithContextFunc),
			WatchFuncWithContext: clientcache.WatchFuncWithContext(ours.WatchFuncWithContext),
		}
		store := clientcache.NewStore(clientcache.MetaNamespaceKeyFunc)
		clk := testingclock.NewFakeClock(time.Now())
		r := clientcache.NewReflectorWithOptions(lw, &v1.Pod{}, store, clientcache.ReflectorOptions{Name: "wl", Clock: clk})
		logger, logs := bufferedLogger(t)
		ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logger))
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.RunWithContext(ctx)
		}()
		defer func() { cancel(); <-done }()

		requireEventually(t, clk.HasWaiters, "the stream's ticker is not running")
		for i := 1; i <= 3; i++ {
			clk.Step(reflector.InitialEventsWarnInterval)
			requireEventually(t, func() bool { return strings.Count(logs(), "event bookmark expired") >= i }, "warning %d not logged", i)
		}
		assert.Equal(t, []string{"stream"}, podActions(client), "30s later it still waits on the first stream")
		assert.Empty(t, store.List())
		assert.Empty(t, r.LastSyncResourceVersion())
	})

	t.Run("kinformer's informer falls back to LIST, syncs and sees a create", func(t *testing.T) {
		client := fake.NewClientset(pod("a"), pod("b"))
		informer := NewSharedIndexInformer(podLW(client), &v1.Pod{}, 0, Indexers{})
		clk := testingclock.NewFakeClock(time.Now())
		informer.(*sharedIndexInformer).clock = clk // reaches the Reflector
		var errs watchErrors
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

		stepUntil(t, clk, informer.HasSynced, "the informer did not sync")
		assert.ElementsMatch(t, []string{"ns/a", "ns/b"}, informer.GetStore().ListKeys())
		var initial []string
		for len(initial) < 2 {
			select {
			case got := <-added:
				initial = append(initial, got)
			case <-time.After(conditionTimeout):
				t.Fatalf("no add for the initial list; got %v", initial)
			}
		}
		assert.ElementsMatch(t, []string{"a initial=true", "b initial=true"}, initial)

		// The fake clientset only delivers creates to watches already open.
		requireEventually(t, func() bool { return len(podActions(client)) == 3 }, "no watch after the LIST")
		assert.Equal(t, []string{"stream", "list", "watch"}, podActions(client))
		_, err = client.CoreV1().Pods("ns").Create(ctx, pod("c"), metav1.CreateOptions{})
		require.NoError(t, err)
		select {
		case got := <-added:
			assert.Equal(t, "c initial=false", got)
		case <-time.After(conditionTimeout):
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
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1"))}},
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1")), newEvent(watch.Added, newPod("p2", "10")), endOfInitialEvents("10"), newEvent(watch.Added, newPod("p3", "11")), newEvent(watch.Error, &expired.ErrStatus)}},
				{Events: []watch.Event{newEvent(watch.Added, newPod("p3", "20")), endOfInitialEvents("20"), newEvent(watch.Added, newPod("p4", "21"))}},
			},
			wantWatch: []metav1.ListOptions{streamOptionsFrom(""), streamOptionsFrom(""), streamOptionsFrom("11"), watchOptionsFrom("21")},
			wantOps:   []string{"replace [ns/p1@1 ns/p2@10] 10", "add ns/p3@11", "rv 11", "replace [ns/p3@20] 20", "add ns/p4@21", "rv 21"},
			wantErrs:  []string{"expired"},
		},
		{
			name: "an error event before the bookmark: LIST, and a stream again after a 410",
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1")), newEvent(watch.Error, internal)}},
				{Events: []watch.Event{newEvent(watch.Error, &expired.ErrStatus)}},
				{Events: []watch.Event{newEvent(watch.Added, newPod("p3", "20")), endOfInitialEvents("20"), newEvent(watch.Added, newPod("p4", "21"))}},
			},
			lists:        []fakeapi.ListAnswer{{Object: newPodList("10", "", newPod("p2", "10"))}},
			wantLists:    []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}},
			wantWatch:    []metav1.ListOptions{streamOptionsFrom(""), watchOptionsFrom("10"), streamOptionsFrom("10"), watchOptionsFrom("21")},
			wantOps:      []string{"replace [ns/p2@10] 10", "replace [ns/p3@20] 20", "add ns/p4@21", "rv 21"},
			wantErrs:     []string{"expired"},
			wantFallback: 1,
		},
		{
			name: "a 429 error event before the bookmark is retried as before",
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1")), newEvent(watch.Error, tooMany)}},
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1")), endOfInitialEvents("2"), newEvent(watch.Added, newPod("p2", "3"))}},
			},
			wantWatch: []metav1.ListOptions{streamOptionsFrom(""), streamOptionsFrom(""), watchOptionsFrom("3")},
			wantOps:   []string{"replace [ns/p1@1] 2", "add ns/p2@3", "rv 3"},
			wantErrs:  []string{"toomany"},
		},
		{
			name: "after a completed streaming list, one that fails falls back for that cycle only",
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1")), endOfInitialEvents("2"), newEvent(watch.Error, &expired.ErrStatus)}},
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "3")), newEvent(watch.Error, internal)}},
				{Events: []watch.Event{newEvent(watch.Error, &expired.ErrStatus)}},
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "11")), endOfInitialEvents("12"), newEvent(watch.Added, newPod("p2", "13"))}},
			},
			lists:     []fakeapi.ListAnswer{{Object: newPodList("10", "", newPod("p1", "10"))}},
			wantLists: []metav1.ListOptions{{ResourceVersion: "2"}},
			wantWatch: []metav1.ListOptions{streamOptionsFrom(""), streamOptionsFrom("2"), watchOptionsFrom("10"), streamOptionsFrom("10"), watchOptionsFrom("13")},
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
			rec := newStoreRecorder()
			logger, logs := bufferedLogger(t)
			r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Backoff: tinyBackoff(), Logger: &logger})
			var errs watchErrors
			r.watchErrorHandler = errs.handler

			runUntilExhausted(t, r, s)

			gotLists := s.ListOptions()
			if len(gotLists) > len(tc.wantLists) {
				gotLists = gotLists[:len(tc.wantLists)]
			}
			assert.Equal(t, tc.wantLists, gotLists, "list requests")
			assert.Equal(t, tc.wantWatch, watchOptionsWithoutTimeout(s), "watch requests")
			assert.Equal(t, tc.wantOps, rec.opsSnapshot(), "store operations")
			assert.Equal(t, tc.wantErrs, errorKinds(errs.snapshot()), "reported errors")
			assert.Equal(t, tc.wantFallback, strings.Count(logs(), fallbackLog), "fallbacks to LIST logged")
			assert.Equal(t, uint64(tc.wantFallback), r.stats.Lists(diag.ReasonStreamFallback), "fallbacks to LIST counted")
		})
	}
}

// push sends e on w and waits until the Reflector has taken it, failing the
// test when the watch is stopped first or the Reflector does not take it.
func push(t *testing.T, w *fakeapi.Watch, e watch.Event) {
	t.Helper()
	if !w.Send(e) {
		t.Fatalf("the watch was stopped before %s %s", e.Type, describeObject(e.Object))
	}
	requireEventually(t, func() bool { return w.Pending() == 0 || w.IsStopped() }, "the Reflector did not take %s %s", e.Type, describeObject(e.Object))
	if w.Pending() > 0 {
		t.Fatalf("the watch was stopped before %s %s", e.Type, describeObject(e.Object))
	}
}

// streamingAPI returns a server for a Reflector that streams lists: its
// watches stay open (the test plays the server on them), its LIST (only the
// fallback's) answers list, and the returned function gives the fake time
// of every List call.
func streamingAPI(clk *testingclock.FakeClock, list *v1.PodList) (*fakeapi.API, func() []time.Time) {
	hook, times := callTimes(clk)
	api := fakeapi.New().
		ListAnswers(fakeapi.ListAnswer{Object: list}).
		WatchAnswers(fakeapi.WatchAnswer{Hold: true}, fakeapi.WatchAnswer{Hold: true}, fakeapi.WatchAnswer{Hold: true}).
		OnList(hook)
	return api, times
}

// watchTimeouts returns the TimeoutSeconds of api's watch requests (0 when
// unset), in order.
func watchTimeouts(api *fakeapi.API) []int64 {
	var out []int64
	for _, o := range api.WatchOptions() {
		var seconds int64
		if o.TimeoutSeconds != nil {
			seconds = *o.TimeoutSeconds
		}
		out = append(out, seconds)
	}
	return out
}

// startStream starts a Reflector on a fake clock over a streamingAPI and
// waits until its stream is open with the idle timer running.
func startStream(t *testing.T, list *v1.PodList) (*Reflector, *fakeapi.API, func() []time.Time, *testingclock.FakeClock, *storeRecorder, *watchErrors, func() string) {
	t.Helper()
	clk := testingclock.NewFakeClock(time.Now())
	lw, listTimes := streamingAPI(clk, list)
	rec := newStoreRecorder()
	logger, logs := bufferedLogger(t)
	r := NewReflectorWithOptions(lw, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Clock: clk, Logger: &logger})
	require.True(t, r.useWatchList)
	require.Equal(t, reflectorInitialEventsTimeout, r.engine.Settings().InitialEventsTimeout)
	errs := &watchErrors{}
	r.watchErrorHandler = errs.handler
	startRun(t, r)
	requireEventually(t, func() bool { return lw.NthWatch(0) != nil && clk.HasWaiters() }, "stream not open")
	return r, lw, listTimes, clk, rec, errs, logs
}

// TestWatchListFallbackSilentStream: a stream that sends a few initial
// events and then nothing is stopped once it was silent for the bound; the
// LIST's content replaces the store, the streamed objects are dropped.
func TestWatchListFallbackSilentStream(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	r, lw, listTimes, clk, rec, errs, logs := startStream(t, newPodList("10", "", newPod("p3", "10")))
	start := clk.Now()
	stream := lw.NthWatch(0)
	push(t, stream, newEvent(watch.Added, newPod("p1", "1")))
	push(t, stream, newEvent(watch.Added, newPod("p2", "2")))

	stepUntil(t, clk, func() bool { return len(lw.ListOptions()) > 0 }, "no fallback to LIST")
	requireEventually(t, func() bool { return len(lw.WatchOptions()) == 2 }, "no watch after the LIST")

	lists, times := lw.ListOptions(), listTimes()
	assert.Equal(t, []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}}, lists)
	// The test may step once more before the LIST reads the clock; the
	// error below says exactly when the stream was cut.
	assert.GreaterOrEqual(t, times[0].Sub(start), reflectorInitialEventsTimeout, "the stream is not cut before 10s of silence")
	assert.True(t, stream.IsStopped(), "the silent stream is stopped")
	assert.Equal(t, []metav1.ListOptions{streamOptionsFrom(""), watchOptionsFrom("10")}, watchOptionsWithoutTimeout(lw))
	assert.Equal(t, []string{"replace [ns/p3@10] 10"}, rec.opsSnapshot(), "the streamed objects are not merged")
	assert.Equal(t, []string{"ns/p3@10"}, rec.content())
	assert.Equal(t, "10", r.LastSyncResourceVersion())

	assert.Empty(t, errs.snapshot(), "the fallback to LIST is no failure")
	assert.Contains(t, logs(), "reflector rf: streaming list stayed silent for 10s after 2 event(s) without the initial-events-end bookmark; falling back to LIST")
	assert.Equal(t, 1, strings.Count(logs(), fallbackLog))

	// The watch after the LIST is an ordinary one: no bound applies.
	w := lw.NthWatch(1)
	clk.Step(time.Hour)
	push(t, w, newEvent(watch.Added, newPod("p4", "11")))
	requireEventually(t, func() bool { return r.LastSyncResourceVersion() == "11" }, "watch event not applied")
	assert.False(t, w.IsStopped())

	// After a 410 the next cycle tries a streaming list again.
	push(t, w, newEvent(watch.Error, &apierrors.NewResourceExpired("too old").ErrStatus))
	stepUntil(t, clk, func() bool { return len(lw.WatchOptions()) == 3 }, "no new stream after the 410")
	assert.Equal(t, streamOptionsFrom("11"), watchOptionsWithoutTimeout(lw)[2])
}

// TestWatchListFallbackSlowStream: a stream whose events keep coming, each
// within the bound of the previous one, is not cut however long it takes.
func TestWatchListFallbackSlowStream(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	r, lw, _, clk, rec, errs, logs := startStream(t, newPodList("99", ""))
	stream := lw.NthWatch(0)
	const n = 6
	gap := reflectorInitialEventsTimeout * 6 / 10
	var want []string
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("p%d", i)
		// A push returns once the Reflector took the event, so the clock
		// never moves more than gap past the last event it saw.
		push(t, stream, newEvent(watch.Added, newPod(name, fmt.Sprint(i+1))))
		clk.Step(gap)
		want = append(want, fmt.Sprintf("ns/%s@%d", name, i+1))
	}
	push(t, stream, endOfInitialEvents("7"))
	// The Reflector publishes a list's resourceVersion before it hands the
	// list to the store (so that a caller told of the sync reads the
	// version the cache holds): wait for the store's Replace too.
	requireEventually(t, func() bool {
		return r.LastSyncResourceVersion() == "7" && len(rec.opsSnapshot()) > 0
	}, "stream not completed")

	assert.Equal(t, []string{fmt.Sprintf("replace [%s] 7", strings.Join(want, " "))}, rec.opsSnapshot())
	assert.Empty(t, lw.ListOptions(), "no LIST")
	assert.Empty(t, errs.snapshot())
	assert.False(t, stream.IsStopped(), "the stream goes on as the watch")
	assert.Zero(t, strings.Count(logs(), fallbackLog))

	// It goes on as the watch: later events are applied, without a bound.
	clk.Step(time.Hour)
	push(t, stream, newEvent(watch.Modified, newPod("p0", "8")))
	requireEventually(t, func() bool { return r.LastSyncResourceVersion() == "8" }, "watch event not applied")
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
		case <-time.After(conditionTimeout):
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
			lw, _ := streamingAPI(clk, newPodList("10", "", newPod("p1", "10")))
			logger, _ := bufferedLogger(t)
			r := NewReflectorWithOptions(lw, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{Name: "rf", Clock: clk, Logger: &logger, WatchIdleTimeout: tc.liveness})
			var errs watchErrors
			r.watchErrorHandler = errs.handler
			startRun(t, r)
			requireEventually(t, func() bool { return lw.NthWatch(0) != nil && clk.HasWaiters() }, "stream not open")

			// Events keep coming, each within the silence bound, for 27s
			// (longer than the liveness deadline), then the server closes
			// the stream.
			stream := lw.NthWatch(0)
			for i := 0; i < 3; i++ {
				push(t, stream, newEvent(watch.Added, newPod(fmt.Sprintf("s%d", i), fmt.Sprint(i+1))))
				clk.Step(9 * time.Second)
			}
			stream.Close()
			requireEventually(t, func() bool { return len(lw.WatchOptions()) == 2 }, "no second watch request")
			assert.Equal(t, []metav1.ListOptions{streamOptionsFrom(""), streamOptionsFrom("")}, watchOptionsWithoutTimeout(lw))
			for _, seconds := range watchTimeouts(lw) {
				assert.GreaterOrEqual(t, seconds, int64(300))
				assert.Less(t, seconds, int64(600))
			}
			assert.Empty(t, lw.ListOptions(), "no fallback to LIST")
			assert.Empty(t, errs.snapshot(), "no failure is reported")
		})
	}
}
