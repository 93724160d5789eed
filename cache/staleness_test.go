package cache

import (
	"context"
	"errors"
	"sync"
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
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// stalenessLW is a scripted ListerWatcher for pods: each LIST answers at
// the resourceVersion set with setListRV and is recorded; each watch is an
// fakeapi.Watch handed to the test.
type stalenessLW struct {
	mu      sync.Mutex
	listRV  string
	lists   []metav1.ListOptions
	listErr error
	listed  chan metav1.ListOptions
	watches chan *fakeapi.Watch
}

func newStalenessLW(rv string) *stalenessLW {
	return &stalenessLW{listRV: rv, listed: make(chan metav1.ListOptions, 16), watches: make(chan *fakeapi.Watch, 16)}
}

func (lw *stalenessLW) setListRV(rv string) {
	lw.mu.Lock()
	lw.listRV = rv
	lw.mu.Unlock()
}

func (lw *stalenessLW) List(options metav1.ListOptions) (runtime.Object, error) {
	lw.mu.Lock()
	lw.lists = append(lw.lists, options)
	rv, err := lw.listRV, lw.listErr
	lw.mu.Unlock()
	lw.listed <- options
	if err != nil {
		return nil, err
	}
	return &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: []v1.Pod{*newPod("a", "3")}}, nil
}

func (lw *stalenessLW) Watch(options metav1.ListOptions) (watch.Interface, error) {
	w := fakeapi.NewWatch(nil, true)
	lw.watches <- w
	return w, nil
}

func (lw *stalenessLW) IsWatchListSemanticsUnSupported() bool { return true }

func (lw *stalenessLW) listCalls() []metav1.ListOptions {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return append([]metav1.ListOptions(nil), lw.lists...)
}

// nextList returns the next LIST request, failing the test after a while.
func (lw *stalenessLW) nextList(t *testing.T) metav1.ListOptions {
	t.Helper()
	select {
	case o := <-lw.listed:
		return o
	case <-time.After(waitTimeout):
		t.Fatal("no LIST request")
	}
	return metav1.ListOptions{}
}

// resetSignalClock is a fake clock whose timers report every Reset, so that
// a test knows when the staleness probe has decided what to do after its
// timer fired, and how long it waits next.
type resetSignalClock struct {
	*testingclock.FakeClock
	resets chan time.Duration
}

func (c *resetSignalClock) NewTimer(d time.Duration) clock.Timer {
	return &resetSignalTimer{Timer: c.FakeClock.NewTimer(d), resets: c.resets}
}

type resetSignalTimer struct {
	clock.Timer
	resets chan time.Duration
}

func (t *resetSignalTimer) Reset(d time.Duration) bool {
	ok := t.Timer.Reset(d)
	t.resets <- d
	return ok
}

// nextReset waits for the probe timer's next Reset and returns its delay.
func (c *resetSignalClock) nextReset(t *testing.T) time.Duration {
	t.Helper()
	select {
	case d := <-c.resets:
		return d
	case <-time.After(waitTimeout):
		t.Fatal("the staleness probe did not rearm its timer")
	}
	return 0
}

// stalenessStatus waits until the informer's Confirmed resourceVersion is
// rv and returns its status.
func stalenessStatus(t *testing.T, informer *sharedIndexInformer, rv string) InformerStatus {
	t.Helper()
	var st InformerStatus
	require.Eventually(t, func() bool {
		st = informer.status()
		return st.ConfirmedResourceVersion == rv
	}, waitTimeout, eventuallyTick, "confirmed resourceVersion: want %q, have %q", rv, st.ConfirmedResourceVersion)
	return st
}

// TestInformerStalenessConfirmations runs an informer against a scripted
// server with a fake clock and checks what confirms its cache as current:
// its list (at the time of the answer), a bookmark (at its arrival), not a
// watch event; and the probe: a LIST of one object at resourceVersion "",
// made only when nothing confirmed the cache for the probe interval, whose
// resourceVersion counts once the cache reaches it.
func TestInformerStalenessConfirmations(t *testing.T) {
	const interval = time.Minute
	t0 := time.Unix(1000, 0)
	lw := newStalenessLW("10")
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{
		StalenessProbeInterval: interval,
		WatchIdleTimeout:       -1,
	}).(*sharedIndexInformer)
	clk := testingclock.NewFakeClock(t0)
	probeClk := &resetSignalClock{FakeClock: testingclock.NewFakeClock(t0), resets: make(chan time.Duration, 16)}
	informer.clock = clk
	informer.probeTimers = probeClk

	before := informer.status()
	assert.Zero(t, before.Staleness(t0), "not started")

	runInformer(t, informer)
	waitUntilSynced(t, informer.HasSyncedChecker())
	assert.Equal(t, metav1.ListOptions{ResourceVersion: "0", Limit: 500}, lw.nextList(t))
	var w *fakeapi.Watch
	select {
	case w = <-lw.watches:
	case <-time.After(waitTimeout):
		t.Fatal("no watch")
	}

	// The list confirms 10 at t0.
	st := stalenessStatus(t, informer, "10")
	assert.Equal(t, t0, st.Confirmed)
	assert.Equal(t, t0, st.StartedAt)

	// An event is no confirmation: 30 s later the cache is 30 s stale.
	clk.Step(30 * time.Second)
	w.Send(watch.Event{Type: watch.Added, Object: newPod("b", "11")})
	require.NoError(t, informer.WaitForResourceVersion(context.Background(), "11"))
	st = informer.status()
	assert.Equal(t, "10", st.ConfirmedResourceVersion)
	assert.Equal(t, 30*time.Second, st.Staleness(clk.Now()))

	// A bookmark confirms at its arrival.
	clk.Step(10 * time.Second)
	w.Send(watch.Event{Type: watch.Bookmark, Object: &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "12"}}})
	st = stalenessStatus(t, informer, "12")
	assert.Equal(t, t0.Add(40*time.Second), st.Confirmed)
	assert.Zero(t, st.Staleness(clk.Now()))

	require.Eventually(t, probeClk.HasWaiters, waitTimeout, eventuallyTick, "no probe timer")
	// The probe timer fires at t0+60s, 20 s after the bookmark: no probe,
	// it waits the 40 s left of the interval.
	clk.Step(20 * time.Second)
	probeClk.Step(interval)
	assert.Equal(t, 40*time.Second, probeClk.nextReset(t))
	assert.Len(t, lw.listCalls(), 1, "no probe within the interval after a confirmation")

	// At t0+100s nothing confirmed the cache for 60 s: the probe lists one
	// object at "" and gets 15; the cache is at 12, so it does not count
	// yet.
	clk.Step(40 * time.Second)
	lw.setListRV("15")
	probeClk.Step(40 * time.Second)
	assert.Equal(t, metav1.ListOptions{ResourceVersion: "", Limit: 1}, lw.nextList(t))
	assert.Equal(t, interval, probeClk.nextReset(t))
	st = informer.status()
	assert.Equal(t, uint64(1), st.StalenessProbes)
	assert.Zero(t, st.StalenessProbeFailures)
	assert.Equal(t, "12", st.ConfirmedResourceVersion)
	assert.Equal(t, 60*time.Second, st.Staleness(clk.Now()))

	// The event that brings the cache past 15 makes the probe count, at
	// the time of its answer.
	clk.Step(5 * time.Second)
	w.Send(watch.Event{Type: watch.Modified, Object: newPod("b", "16")})
	st = stalenessStatus(t, informer, "15")
	assert.Equal(t, t0.Add(100*time.Second), st.Confirmed)
	assert.Equal(t, 5*time.Second, st.Staleness(clk.Now()))

	// A failing probe is counted, and changes nothing else.
	lw.mu.Lock()
	lw.listErr = errors.New("connection refused")
	lw.mu.Unlock()
	clk.Step(interval)
	probeClk.Step(interval)
	lw.nextList(t)
	assert.Equal(t, interval, probeClk.nextReset(t))
	st = informer.status()
	assert.Equal(t, uint64(2), st.StalenessProbes)
	assert.Equal(t, uint64(1), st.StalenessProbeFailures)
	assert.Equal(t, "15", st.ConfirmedResourceVersion)
	assert.Nil(t, st.LastError, "a probe's failure is not the informer's error")
}

// TestInformerStalenessProbeOff checks that a negative interval starts no
// probe, and that an informer stopped while probing leaves no goroutine
// (TestMain checks for leaks).
func TestInformerStalenessProbeOff(t *testing.T) {
	lw := newStalenessLW("10")
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{StalenessProbeInterval: -1}).(*sharedIndexInformer)
	probeClk := &resetSignalClock{FakeClock: testingclock.NewFakeClock(time.Unix(1000, 0)), resets: make(chan time.Duration, 16)}
	informer.probeTimers = probeClk
	runInformer(t, informer)
	waitUntilSynced(t, informer.HasSyncedChecker())
	assert.False(t, probeClk.HasWaiters(), "no probe timer")

	probeEverySecond := func(o *SharedIndexInformerOptions) { o.StalenessProbeInterval = time.Second }
	require.ErrorContains(t, ConfigureInformer(informer, probeEverySecond), "already started")
	fresh := NewSharedIndexInformer(lw, &v1.Pod{}, 0, Indexers{})
	require.NoError(t, ConfigureInformer(fresh, probeEverySecond))
	assert.Equal(t, time.Second, fresh.(*sharedIndexInformer).config.StalenessProbeInterval)
}

// pagedStalenessLW answers the first LIST in two pages at resourceVersion
// "20", stepping clk by 5 s before it answers the second, and hands its
// watches to the test.
type pagedStalenessLW struct {
	clk     *testingclock.FakeClock
	watches chan *fakeapi.Watch
}

func (lw *pagedStalenessLW) List(options metav1.ListOptions) (runtime.Object, error) {
	if options.Continue == "" {
		return &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "20", Continue: "page-2"}, Items: []v1.Pod{*newPod("a", "3")}}, nil
	}
	lw.clk.Step(5 * time.Second)
	return &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "20"}, Items: []v1.Pod{*newPod("b", "4")}}, nil
}

func (lw *pagedStalenessLW) Watch(metav1.ListOptions) (watch.Interface, error) {
	w := fakeapi.NewWatch(nil, true)
	lw.watches <- w
	return w, nil
}

func (*pagedStalenessLW) IsWatchListSemanticsUnSupported() bool { return true }

// TestInformerStalenessPagedListConfirmsAtFirstPage: a list in pages is the
// server's state at its resourceVersion when the first page was answered,
// so that is the time it confirms, not the last page's.
func TestInformerStalenessPagedListConfirmsAtFirstPage(t *testing.T) {
	t0 := time.Unix(1000, 0)
	clk := testingclock.NewFakeClock(t0)
	lw := &pagedStalenessLW{clk: clk, watches: make(chan *fakeapi.Watch, 4)}
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{StalenessProbeInterval: -1}).(*sharedIndexInformer)
	informer.clock = clk
	runInformer(t, informer)
	waitUntilSynced(t, informer.HasSyncedChecker())
	st := stalenessStatus(t, informer, "20")
	assert.Equal(t, t0, st.Confirmed)
	assert.Equal(t, 2, st.StoreSize)
	assert.Equal(t, 5*time.Second, st.Staleness(clk.Now()))
}

// streamStalenessLW serves streaming lists only: each watch is handed to the
// test, which plays the server.
type streamStalenessLW struct {
	watches chan *fakeapi.Watch
	opts    chan metav1.ListOptions
}

func (lw *streamStalenessLW) List(metav1.ListOptions) (runtime.Object, error) {
	return nil, errors.New("this server only streams")
}

func (lw *streamStalenessLW) Watch(options metav1.ListOptions) (watch.Interface, error) {
	w := fakeapi.NewWatch(nil, true)
	lw.opts <- options
	lw.watches <- w
	return w, nil
}

// TestInformerStalenessStreamingListConfirmsAtEndBookmark: a streaming
// list confirms its resourceVersion at the arrival of its end bookmark.
func TestInformerStalenessStreamingListConfirmsAtEndBookmark(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	t0 := time.Unix(1000, 0)
	clk := testingclock.NewFakeClock(t0)
	lw := &streamStalenessLW{watches: make(chan *fakeapi.Watch, 4), opts: make(chan metav1.ListOptions, 4)}
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{StalenessProbeInterval: -1}).(*sharedIndexInformer)
	informer.clock = clk
	runInformer(t, informer)
	var w *fakeapi.Watch
	select {
	case w = <-lw.watches:
	case <-time.After(waitTimeout):
		t.Fatal("no streaming list")
	}
	require.True(t, ptrTrue((<-lw.opts).SendInitialEvents), "a streaming list")
	w.Send(watch.Event{Type: watch.Added, Object: newPod("a", "3")})
	clk.Step(2 * time.Second)
	w.Send(watch.Event{Type: watch.Bookmark, Object: &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: "10", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}})
	waitUntilSynced(t, informer.HasSyncedChecker())
	st := stalenessStatus(t, informer, "10")
	assert.Equal(t, t0.Add(2*time.Second), st.Confirmed)
	assert.Equal(t, 1, st.StoreSize)
}

func ptrTrue(b *bool) bool { return b != nil && *b }
