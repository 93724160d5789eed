package cache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/utils/clock"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// stalenessAPI returns the scripted server of the staleness tests: it
// cannot stream lists, its first LIST answers a@3 at rv (the test scripts
// the later ones), its watches stay open, and the options of every List
// call arrive on the returned channel as the call is made.
func stalenessAPI(rv string) (*fakeapi.API, <-chan metav1.ListOptions) {
	listed := make(chan metav1.ListOptions, 16)
	api := fakeapi.New().WithoutWatchList().
		ListAnswers(stalenessList(rv)).
		WatchAnswers(fakeapi.WatchAnswer{Hold: true}).
		OnList(func(o metav1.ListOptions) { listed <- o })
	return api, listed
}

// stalenessList is a LIST answer of a@3 at rv.
func stalenessList(rv string) fakeapi.ListAnswer {
	return fakeapi.ListAnswer{Object: newPodList(rv, "", newPod("a", "3"))}
}

// nextList returns the next List call's options, failing the test after a
// while.
func nextList(t *testing.T, listed <-chan metav1.ListOptions) metav1.ListOptions {
	t.Helper()
	select {
	case o := <-listed:
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
	lw, listed := stalenessAPI("10")
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
	assert.Equal(t, metav1.ListOptions{ResourceVersion: "0", Limit: 500}, nextList(t, listed))
	w := openedWatch(t, lw, 0)

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
	assert.Len(t, lw.ListOptions(), 1, "no probe within the interval after a confirmation")

	// At t0+100s nothing confirmed the cache for 60 s: the probe lists one
	// object at "" and gets 15; the cache is at 12, so it does not count
	// yet.
	clk.Step(40 * time.Second)
	lw.ListAnswers(stalenessList("15"))
	probeClk.Step(40 * time.Second)
	assert.Equal(t, metav1.ListOptions{ResourceVersion: "", Limit: 1}, nextList(t, listed))
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
	lw.ListAnswers(fakeapi.ListAnswer{Err: errors.New("connection refused")})
	clk.Step(interval)
	probeClk.Step(interval)
	nextList(t, listed)
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
	lw, _ := stalenessAPI("10")
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

// TestInformerStalenessPagedListConfirmsAtFirstPage: a list in pages is the
// server's state at its resourceVersion when the first page was answered,
// so that is the time it confirms, not the last page's.
func TestInformerStalenessPagedListConfirmsAtFirstPage(t *testing.T) {
	t0 := time.Unix(1000, 0)
	clk := testingclock.NewFakeClock(t0)
	// The first LIST comes in two pages at resourceVersion 20; the clock
	// moves on by 5 s before the second page is answered.
	lw := fakeapi.New().WithoutWatchList().
		ListAnswers(
			fakeapi.ListAnswer{Object: newPodList("20", "page-2", newPod("a", "3"))},
			fakeapi.ListAnswer{Object: newPodList("20", "", newPod("b", "4"))},
		).
		WatchAnswers(fakeapi.WatchAnswer{Hold: true}).
		OnList(func(o metav1.ListOptions) {
			if o.Continue != "" {
				clk.Step(5 * time.Second)
			}
		})
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{StalenessProbeInterval: -1}).(*sharedIndexInformer)
	informer.clock = clk
	runInformer(t, informer)
	waitUntilSynced(t, informer.HasSyncedChecker())
	st := stalenessStatus(t, informer, "20")
	assert.Equal(t, t0, st.Confirmed)
	assert.Equal(t, 2, st.StoreSize)
	assert.Equal(t, 5*time.Second, st.Staleness(clk.Now()))
}

// TestInformerStalenessStreamingListConfirmsAtEndBookmark: a streaming
// list confirms its resourceVersion at the arrival of its end bookmark.
func TestInformerStalenessStreamingListConfirmsAtEndBookmark(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	t0 := time.Unix(1000, 0)
	clk := testingclock.NewFakeClock(t0)
	// A server that only streams: no LIST is scripted, so one would fail.
	lw := fakeapi.New().WatchAnswers(fakeapi.WatchAnswer{Hold: true})
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{StalenessProbeInterval: -1}).(*sharedIndexInformer)
	informer.clock = clk
	runInformer(t, informer)
	w := openedWatch(t, lw, 0)
	require.True(t, ptrTrue(lw.WatchOptions()[0].SendInitialEvents), "a streaming list")
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
