package cache

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// The tests of this file cover the watch liveness deadline
// (ReflectorOptions.WatchIdleTimeout): armed on a watch by its first periodic
// bookmark, never on a streaming list, and without effect on the timeouts
// watch requests ask for.

// periodicBookmark is a bookmark a server sends on an open watch from time
// to time: not the one that ends a streaming list's initial events.
func periodicBookmark(rv string) watch.Event {
	return watch.Event{Type: watch.Bookmark, Object: &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}}
}

// livenessModes are the two ways a Reflector gets its initial state.
var livenessModes = []struct {
	name      string
	streaming bool
}{
	{"LIST", false},
	{"streaming list", true},
}

// livenessRun is a Reflector on a fake clock over a streamingAPI whose LIST answers pod p1
// at resourceVersion 10.
type livenessRun struct {
	r    *Reflector
	lw   *fakeapi.API
	clk  *clocktesting.FakeClock
	rec  *storeRecorder
	errs *watchErrors
}

// startLivenessRun starts a Reflector with the given liveness deadline (0: off) that
// gets its initial state by a streaming list or a LIST, and brings it to
// resourceVersion 10 with pod p1. Either way the watch it then continues
// with is lw.NthWatch(0): the stream, or the watch after the LIST.
func startLivenessRun(t *testing.T, streaming bool, deadline time.Duration) *livenessRun {
	t.Helper()
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, streaming)
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	lw, _ := streamingAPI(clk, newPodList("10", "", newPod("p1", "10")))
	lv := &livenessRun{
		lw:   lw,
		clk:  clk,
		rec:  newStoreRecorder(),
		errs: &watchErrors{},
	}
	logger, _ := bufferedLogger(t)
	lv.r = NewReflectorWithOptions(lv.lw, &v1.Pod{}, lv.rec, ReflectorOptions{Name: "rf", Clock: clk, Logger: &logger, WatchIdleTimeout: deadline})
	require.Equal(t, streaming, lv.r.useWatchList)
	lv.r.watchErrorHandler = lv.errs.handler
	startRun(t, lv.r)
	requireEventually(t, func() bool { return lv.lw.NthWatch(0) != nil }, "no watch request")
	if streaming {
		w := lv.lw.NthWatch(0)
		push(t, w, newEvent(watch.Added, newPod("p1", "10")))
		push(t, w, endOfInitialEvents("10"))
	}
	lv.waitRV(t, "10")
	return lv
}

func (lv *livenessRun) waitRV(t *testing.T, rv string) {
	t.Helper()
	requireEventually(t, func() bool { return lv.r.LastSyncResourceVersion() == rv }, "resourceVersion %s not reached (at %q)", rv, lv.r.LastSyncResourceVersion())
}

// lists is the number of LIST requests.
func (lv *livenessRun) lists() int {
	return len(lv.lw.ListOptions())
}

// firstLivenessWatch is what the first watch request of a mode asks for.
func firstLivenessWatch(streaming bool) metav1.ListOptions {
	if streaming {
		return streamOptionsFrom("")
	}
	return watchOptionsFrom("10")
}

// TestWatchRequestsAskClientGoWatchTimeouts: whatever the liveness deadline,
// every watch request, a streaming list's included, asks the server for a
// timeout in [5 min, 10 min), as client-go's Reflector does.
func TestWatchRequestsAskClientGoWatchTimeouts(t *testing.T) {
	for _, mode := range livenessModes {
		for _, deadline := range []time.Duration{0, 5 * time.Second, DefaultWatchIdleTimeout} {
			t.Run(fmt.Sprintf("%s, deadline %v", mode.name, deadline), func(t *testing.T) {
				lv := startLivenessRun(t, mode.streaming, deadline)
				for i := 0; i < 200; i++ {
					got := *lv.r.watchTimeoutSeconds()
					require.GreaterOrEqual(t, got, int64(300))
					require.Less(t, got, int64(600))
				}
				// The server closes the watch; it is reopened.
				w := lv.lw.NthWatch(0)
				push(t, w, newEvent(watch.Modified, newPod("p1", "11")))
				w.Close()
				requireEventually(t, func() bool { return lv.lw.NthWatch(1) != nil }, "the closed watch was not reopened")

				assert.Equal(t, []metav1.ListOptions{firstLivenessWatch(mode.streaming), watchOptionsFrom("11")}, watchOptionsWithoutTimeout(lv.lw))
				timeouts := watchTimeouts(lv.lw)
				require.Len(t, timeouts, 2)
				for _, seconds := range timeouts {
					assert.GreaterOrEqual(t, seconds, int64(300))
					assert.Less(t, seconds, int64(600))
				}
			})
		}
	}
}

// TestWatchWithoutPeriodicBookmarkIsNeverCutForSilence: until a periodic
// bookmark arrived on it, a watch is not cut for silence however long it
// lasts (a quiet resource, a server that sends no bookmarks): no deadline
// runs, and after a day of silence the same watch still delivers.
func TestWatchWithoutPeriodicBookmarkIsNeverCutForSilence(t *testing.T) {
	for _, mode := range livenessModes {
		t.Run(mode.name, func(t *testing.T) {
			lv := startLivenessRun(t, mode.streaming, 30*time.Second)
			w := lv.lw.NthWatch(0)
			push(t, w, newEvent(watch.Added, newPod("p2", "11")))
			push(t, w, newEvent(watch.Modified, newPod("p2", "12"))) // taken: the event before it was handled
			lv.waitRV(t, "12")
			assert.False(t, lv.clk.HasWaiters(), "no deadline runs before a periodic bookmark")

			lv.clk.Step(24 * time.Hour)
			push(t, w, newEvent(watch.Modified, newPod("p2", "13")))
			lv.waitRV(t, "13")
			assert.False(t, w.IsStopped())
			assert.Len(t, watchOptionsWithoutTimeout(lv.lw), 1, "the watch was not reopened")
			assert.Equal(t, map[bool]int{false: 1, true: 0}[mode.streaming], lv.lists(), "no relist")
			assert.Empty(t, lv.errs.snapshot())
		})
	}
}

// TestInitialEventsEndBookmarkDoesNotArmWatchIdleTimeout: the bookmark that
// ends a streaming list's initial events is no sign that the server sends
// periodic bookmarks; the watch it leaves open is not cut for silence.
func TestInitialEventsEndBookmarkDoesNotArmWatchIdleTimeout(t *testing.T) {
	lv := startLivenessRun(t, true, 30*time.Second)
	w := lv.lw.NthWatch(0)
	push(t, w, newEvent(watch.Added, newPod("p2", "11"))) // taken: the end bookmark was handled
	lv.waitRV(t, "11")
	assert.False(t, lv.clk.HasWaiters(), "the end bookmark started no deadline")
	lv.clk.Step(24 * time.Hour)
	push(t, w, newEvent(watch.Modified, newPod("p2", "12")))
	lv.waitRV(t, "12")
	assert.False(t, w.IsStopped())
	assert.Equal(t, []metav1.ListOptions{streamOptionsFrom("")}, watchOptionsWithoutTimeout(lv.lw))
	assert.Empty(t, lv.errs.snapshot())
}

// TestWatchIdleAfterPeriodicBookmarkReopensFromLastRV: once a periodic
// bookmark arrived, a watch that then stays silent for the deadline is
// stopped with a *WatchIdleTimeoutError and reopened, as a plain watch, from
// the last resourceVersion (the bookmark's), without a relist; not a moment
// sooner.
func TestWatchIdleAfterPeriodicBookmarkReopensFromLastRV(t *testing.T) {
	const deadline = 30 * time.Second
	for _, mode := range livenessModes {
		t.Run(mode.name, func(t *testing.T) {
			lv := startLivenessRun(t, mode.streaming, deadline)
			w := lv.lw.NthWatch(0)
			push(t, w, newEvent(watch.Added, newPod("p2", "11")))
			push(t, w, periodicBookmark("12"))
			requireEventually(t, lv.clk.HasWaiters, "the periodic bookmark started no deadline")
			lv.waitRV(t, "12")

			lv.clk.Step(deadline - time.Second)
			assert.True(t, lv.clk.HasWaiters(), "the deadline has not passed yet")
			lv.clk.Step(time.Second)
			requireEventually(t, func() bool { return lv.lw.NthWatch(1) != nil }, "the silent watch was not reopened")
			assert.True(t, w.IsStopped(), "the silent watch is stopped")
			assert.Equal(t, []metav1.ListOptions{firstLivenessWatch(mode.streaming), watchOptionsFrom("12")}, watchOptionsWithoutTimeout(lv.lw))
			assert.Equal(t, map[bool]int{false: 1, true: 0}[mode.streaming], lv.lists(), "no relist")

			errs := lv.errs.snapshot()
			require.Len(t, errs, 1)
			var idle *WatchIdleTimeoutError
			require.ErrorAs(t, errs[0], &idle)
			assert.Equal(t, &WatchIdleTimeoutError{Name: "rf", Timeout: deadline, ResourceVersion: "12"}, idle)

			// The reopened watch carries on, and has no deadline until its
			// own first periodic bookmark.
			push(t, lv.lw.NthWatch(1), newEvent(watch.Modified, newPod("p2", "13")))
			lv.waitRV(t, "13")
			push(t, lv.lw.NthWatch(1), newEvent(watch.Modified, newPod("p2", "14")))
			assert.False(t, lv.clk.HasWaiters())
			lv.waitRV(t, "14")
			assert.Equal(t, []string{"ns/p1@10", "ns/p2@14"}, lv.rec.content())
		})
	}
}

// TestEventsAfterPeriodicBookmarkPushWatchIdleDeadlineOut: after the
// bookmark that armed it, every event and every bookmark restarts the
// deadline, so only silence as long as the deadline since the last of them
// cuts the watch.
func TestEventsAfterPeriodicBookmarkPushWatchIdleDeadlineOut(t *testing.T) {
	const deadline = 30 * time.Second
	lv := startLivenessRun(t, false, deadline)
	w := lv.lw.NthWatch(0)
	push(t, w, periodicBookmark("11"))
	requireEventually(t, lv.clk.HasWaiters, "the periodic bookmark started no deadline")
	lv.waitRV(t, "11")

	// stepPast steps the clock over the timer the Reflector waits on, and
	// waits until it has set it again for the rest of the deadline.
	stepPast := func(d time.Duration) {
		t.Helper()
		lv.clk.Step(d)
		requireEventually(t, lv.clk.HasWaiters, "the watch was cut, or its deadline not set again")
	}

	// Each push is followed by a wait for its resourceVersion, so that the
	// Reflector has noted the time of the event before the clock moves.
	lv.clk.Step(20 * time.Second)
	push(t, w, newEvent(watch.Added, newPod("p2", "12")))
	lv.waitRV(t, "12")
	stepPast(20 * time.Second) // 40s after the bookmark, 20s after the event
	lv.clk.Step(9 * time.Second)
	push(t, w, periodicBookmark("13"))
	lv.waitRV(t, "13")
	stepPast(time.Second) // 30s after the event, 1s after the second bookmark
	lv.clk.Step(deadline - 2*time.Second)
	assert.False(t, w.IsStopped())
	assert.Len(t, watchOptionsWithoutTimeout(lv.lw), 1)
	assert.Empty(t, lv.errs.snapshot())

	lv.clk.Step(time.Second) // 30s after the second bookmark
	requireEventually(t, func() bool { return lv.lw.NthWatch(1) != nil }, "the silent watch was not reopened")
	assert.Equal(t, []metav1.ListOptions{watchOptionsFrom("10"), watchOptionsFrom("13")}, watchOptionsWithoutTimeout(lv.lw))
	errs := lv.errs.snapshot()
	require.Len(t, errs, 1)
	assert.Equal(t, &WatchIdleTimeoutError{Name: "rf", Timeout: deadline, ResourceVersion: "13"}, errs[0])
}

// TestStreamingListLongerThanWatchIdleTimeoutIsNotCut: a streaming list is
// never cut for liveness, however long it takes and even when a periodic
// bookmark arrives before its end: it goes on while events keep coming
// (within the bound of a silent stream), as one watch request.
func TestStreamingListLongerThanWatchIdleTimeoutIsNotCut(t *testing.T) {
	for _, deadline := range []time.Duration{5 * time.Second, DefaultWatchIdleTimeout} {
		t.Run(deadline.String(), func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
			clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
			lw, _ := streamingAPI(clk, newPodList("99", ""))
			rec := newStoreRecorder()
			logger, _ := bufferedLogger(t)
			r := NewReflectorWithOptions(lw, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Clock: clk, Logger: &logger, WatchIdleTimeout: deadline})
			var errs watchErrors
			r.watchErrorHandler = errs.handler
			startRun(t, r)
			requireEventually(t, func() bool { return lw.NthWatch(0) != nil }, "no stream")
			stream := lw.NthWatch(0)

			// 20 objects 9s apart: 3 minutes, longer than either deadline.
			const n = 20
			var want []string
			for i := 1; i <= n; i++ {
				push(t, stream, newEvent(watch.Added, newPod(fmt.Sprintf("p%02d", i), fmt.Sprint(i))))
				want = append(want, fmt.Sprintf("ns/p%02d@%d", i, i))
				if i == n/2 {
					push(t, stream, periodicBookmark(fmt.Sprint(i)))
				}
				clk.Step(9 * time.Second)
			}
			push(t, stream, endOfInitialEvents(fmt.Sprint(n)))
			requireEventually(t, func() bool { return r.LastSyncResourceVersion() == fmt.Sprint(n) }, "the stream did not complete")

			assert.False(t, stream.IsStopped())
			assert.Equal(t, []metav1.ListOptions{streamOptionsFrom("")}, watchOptionsWithoutTimeout(lw), "one watch request")
			assert.Empty(t, lw.ListOptions(), "no fallback to LIST")
			assert.Equal(t, want, rec.content())
			assert.Empty(t, errs.snapshot())
		})
	}
}

// TestReflectorWatchIdleTimeoutOffByDefault: a Reflector built without the
// option (unlike a shared informer) has no deadline, even after periodic
// bookmarks, as client-go's.
func TestReflectorWatchIdleTimeoutOffByDefault(t *testing.T) {
	lv := startLivenessRun(t, false, 0)
	w := lv.lw.NthWatch(0)
	push(t, w, periodicBookmark("11"))
	push(t, w, newEvent(watch.Added, newPod("p2", "12"))) // taken: the bookmark was handled
	lv.waitRV(t, "12")
	assert.False(t, lv.clk.HasWaiters(), "no deadline")
	lv.clk.Step(24 * time.Hour)
	push(t, w, newEvent(watch.Modified, newPod("p2", "13")))
	lv.waitRV(t, "13")
	assert.False(t, w.IsStopped())
	assert.Len(t, watchOptionsWithoutTimeout(lv.lw), 1)
	assert.Empty(t, lv.errs.snapshot())
}

// watchRVs returns the resourceVersion of every watch request srv was
// asked, in order, failed ones included.
func watchRVs(srv *fakeapi.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		if rv, ok := strings.CutPrefix(r, "watch from "); ok {
			out = append(out, strings.TrimSuffix(rv, " failed"))
		}
	}
	return out
}

// TestWatchIdleTimeoutLosesNoChange: changes made while a watch is black-holed
// after its periodic bookmark reach the store through the watch reopened
// from the last resourceVersion, without a relist.
func TestWatchIdleTimeoutLosesNoChange(t *testing.T) {
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	srv.Create("a") // 1
	srv.Create("b") // 2
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	store := NewStore(MetaNamespaceKeyFunc)
	var errs watchErrors
	r := NewReflectorWithOptions(srv, &v1.Pod{}, store, ReflectorOptions{Clock: clk, WatchIdleTimeout: 10 * time.Second})
	r.watchErrorHandler = errs.handler
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()

	waitForNextWatch(t, srv)
	srv.Update("a")       // 3
	srv.AdvanceVersion(1) // 4: another resource was written
	srv.SendBookmark()
	require.Eventually(t, func() bool { return r.LastSyncResourceVersion() == "4" }, waitTimeout, time.Millisecond)
	require.Eventually(t, clk.HasWaiters, waitTimeout, time.Millisecond, "the periodic bookmark started no deadline")

	// The connection goes silent; changes happen meanwhile.
	silent := srv.BlackHoleWatches()
	srv.Update("b") // 5
	srv.Delete("a") // 6
	clk.Step(10 * time.Second)
	waitForNextWatch(t, srv)
	for _, stopped := range silent {
		select {
		case <-stopped:
		case <-time.After(waitTimeout):
			t.Fatal("the silent watch was not stopped")
		}
	}
	assert.Equal(t, []string{"2", "4"}, watchRVs(srv), "reopened from the last resourceVersion")
	require.Eventually(t, func() bool { return r.LastSyncResourceVersion() == "6" }, waitTimeout, time.Millisecond)
	lists, _ := requestCounts(srv)
	assert.Equal(t, 1, lists, "no relist")
	assert.Equal(t, []string{"ns/b@5"}, describedStore(store), "the changes made while silent were not lost")
	got := errs.snapshot()
	require.Len(t, got, 1)
	var idle *WatchIdleTimeoutError
	require.ErrorAs(t, got[0], &idle)
	assert.Equal(t, "4", idle.ResourceVersion)
}

func TestSharedInformerWatchIdleTimeoutOption(t *testing.T) {
	cases := []struct {
		name   string
		option time.Duration
		set    *time.Duration
		want   time.Duration
	}{
		{name: "default", want: DefaultWatchIdleTimeout},
		{name: "explicit", option: 7 * time.Second, want: 7 * time.Second},
		{name: "off", option: -1, want: 0},
		{name: "set before run", set: durationPtr(3 * time.Second), want: 3 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lw := noWatchListLW{&ListWatch{
				ListFunc:  func(metav1.ListOptions) (runtime.Object, error) { return &v1.PodList{}, nil },
				WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
			}}
			informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{WatchIdleTimeout: tc.option})
			typed := NewTypedSharedIndexInformer[*v1.Pod](informer)
			if tc.set != nil {
				require.NoError(t, ConfigureInformer(typed, func(o *SharedIndexInformerOptions) { o.WatchIdleTimeout = *tc.set }))
			}
			runInformer(t, informer)
			waitUntilSynced(t, informer.HasSyncedChecker())
			s := informer.(*sharedIndexInformer)
			s.startedLock.Lock()
			ctrl := s.controller
			s.startedLock.Unlock()
			ctrl.mu.RLock()
			got := ctrl.reflector.engine.Settings().WatchIdleTimeout
			ctrl.mu.RUnlock()
			assert.Equal(t, tc.want, got)
			assert.ErrorContains(t, ConfigureInformer(informer, func(o *SharedIndexInformerOptions) { o.WatchIdleTimeout = time.Second }), "already started")
		})
	}
}

func durationPtr(d time.Duration) *time.Duration { return &d }
