package fakeapi

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

const wait = 10 * time.Second

func timeAfterWait() <-chan time.Time { return time.After(wait) }

func pod(name, rv string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// received drains w's result channel until it closes, failing after wait.
func received(t *testing.T, w watch.Interface) []watch.Event {
	t.Helper()
	var out []watch.Event
	deadline := time.After(wait)
	for {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				return out
			}
			out = append(out, e)
		case <-deadline:
			t.Fatalf("watch did not close; received %d events", len(out))
		}
	}
}

func TestListCallsTakeTheScriptedAnswersInOrderAndRecordTheirOptions(t *testing.T) {
	first := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5", Continue: "page2"}}
	boom := errors.New("boom")
	a := New().ListAnswers(ListAnswer{Object: first}, ListAnswer{Err: boom})
	assert.Equal(t, 2, a.PendingListAnswers())

	got, err := a.List(metav1.ListOptions{Limit: 2})
	require.NoError(t, err)
	assert.Same(t, first, got)
	_, err = a.List(metav1.ListOptions{Limit: 2, Continue: "page2"})
	assert.Same(t, boom, err)

	select {
	case <-a.Exhausted():
		t.Fatal("exhausted before a call beyond the script")
	default:
	}
	assert.Zero(t, a.PendingListAnswers())
	_, err = a.List(metav1.ListOptions{})
	assert.ErrorIs(t, err, ErrScriptExhausted)
	select {
	case <-a.Exhausted():
	default:
		t.Fatal("a list call beyond the script did not mark it exhausted")
	}
	assert.Equal(t, []metav1.ListOptions{{Limit: 2}, {Limit: 2, Continue: "page2"}, {}}, a.ListOptions())
}

func TestWatchCallsDeliverScriptedEventsThenCloseOrHold(t *testing.T) {
	boom := errors.New("refused")
	a := New().WatchAnswers(
		WatchAnswer{Events: []watch.Event{Added(pod("a", "6")), Modified(pod("a", "7"))}},
		WatchAnswer{Err: boom},
		WatchAnswer{Events: []watch.Event{Deleted(pod("a", "8"))}, Hold: true},
	)

	w, err := a.Watch(metav1.ListOptions{ResourceVersion: "5"})
	require.NoError(t, err)
	assert.Equal(t, []watch.Event{Added(pod("a", "6")), Modified(pod("a", "7"))}, received(t, w))

	_, err = a.Watch(metav1.ListOptions{ResourceVersion: "7"})
	assert.Same(t, boom, err)

	w, err = a.Watch(metav1.ListOptions{ResourceVersion: "7"})
	require.NoError(t, err)
	assert.Equal(t, Deleted(pod("a", "8")), <-w.ResultChan())
	held := a.Watches()[1]
	require.True(t, held.Send(Modified(pod("b", "9"))), "a held watch takes events")
	assert.Equal(t, Modified(pod("b", "9")), <-w.ResultChan())
	held.Close()
	assert.Empty(t, received(t, w))
	assert.False(t, held.Send(Added(pod("c", "10"))), "a closed watch takes no events")

	assert.Len(t, a.Watches(), 2, "a failed watch call hands out no watch")
	assert.Equal(t, []string{"5", "7", "7"}, func() (rvs []string) {
		for _, o := range a.WatchOptions() {
			rvs = append(rvs, o.ResourceVersion)
		}
		return rvs
	}())
}

func TestWatchBeyondTheScriptIsOpenAndEmptyAndMarksExhaustion(t *testing.T) {
	a := New()
	w, err := a.Watch(metav1.ListOptions{})
	require.NoError(t, err)
	select {
	case <-a.Exhausted():
	default:
		t.Fatal("a watch call beyond the script did not mark it exhausted")
	}
	select {
	case e, ok := <-w.ResultChan():
		t.Fatalf("the watch beyond the script delivered %v (open %v)", e, ok)
	default:
	}
	w.Stop()
	select {
	case <-a.Watches()[0].Stopped():
	default:
		t.Fatal("Stop was not recorded")
	}
	assert.Empty(t, received(t, w), "Stop closes the result channel")
}

func TestStopReleasesASendWaitingForRoom(t *testing.T) {
	w := NewWatch(nil, true)
	for range watchBuffer {
		require.True(t, w.Send(Added(pod("a", "1"))))
	}
	sent := make(chan bool)
	go func() { sent <- w.Send(Added(pod("b", "2"))) }()
	w.Stop()
	select {
	case ok := <-sent:
		assert.False(t, ok, "a send the consumer never took reports false")
	case <-time.After(wait):
		t.Fatal("Send still blocked after Stop")
	}
}

func TestHooksRunBeforeEachCallWithItsOptions(t *testing.T) {
	var lists, watches []string
	a := New().
		OnList(func(o metav1.ListOptions) { lists = append(lists, o.ResourceVersion) }).
		OnWatch(func(o metav1.ListOptions) { watches = append(watches, o.ResourceVersion) })
	_, _ = a.List(metav1.ListOptions{ResourceVersion: "0"})
	_, _ = a.Watch(metav1.ListOptions{ResourceVersion: "3"})
	assert.Equal(t, []string{"0"}, lists)
	assert.Equal(t, []string{"3"}, watches)
}

func TestWithoutWatchListIsReported(t *testing.T) {
	assert.False(t, New().IsWatchListSemanticsUnSupported())
	assert.True(t, New().WithoutWatchList().IsWatchListSemanticsUnSupported())
}

func TestEventHelpersBuildTheServersEvents(t *testing.T) {
	end := EndOfInitialEvents(&v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "12"}})
	assert.Equal(t, watch.Bookmark, end.Type)
	assert.Equal(t, map[string]string{metav1.InitialEventsAnnotationKey: "true"}, end.Object.(*v1.Pod).Annotations)
	assert.Equal(t, "12", end.Object.(*v1.Pod).ResourceVersion)

	gone := Error(metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired})
	assert.Equal(t, watch.Error, gone.Type)
	assert.Equal(t, &metav1.Status{Code: 410, Reason: metav1.StatusReasonExpired}, gone.Object)

	assert.Equal(t, watch.Event{Type: watch.Bookmark, Object: pod("", "13")}, Bookmark(pod("", "13")))
	assert.PanicsWithValue(t, "fakeapi.EndOfInitialEvents: *v1.Status has no object metadata: object does not implement the Object interfaces",
		func() { EndOfInitialEvents(&metav1.Status{}) }, "a test's mistake is reported plainly")
}

func TestNthWatchAndIsStoppedFollowTheWatchesHandedOut(t *testing.T) {
	a := New().WatchAnswers(WatchAnswer{Err: errors.New("refused")}, WatchAnswer{Hold: true})
	assert.Nil(t, a.NthWatch(0), "no watch handed out yet")
	_, err := a.Watch(metav1.ListOptions{})
	require.Error(t, err)
	assert.Nil(t, a.NthWatch(0), "a failed call hands out no watch")
	w, err := a.Watch(metav1.ListOptions{})
	require.NoError(t, err)
	first := a.NthWatch(0)
	require.NotNil(t, first)
	assert.Same(t, w, watch.Interface(first))
	assert.Nil(t, a.NthWatch(1))
	assert.Nil(t, a.NthWatch(-1))

	assert.False(t, first.IsStopped())
	first.Close()
	assert.False(t, first.IsStopped(), "a close by the server is not a stop by the consumer")
	first.Stop()
	assert.True(t, first.IsStopped())
}
