package fakeapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// describe renders events as "TYPE name@rv".
func describe(events []watch.Event) []string {
	var out []string
	for _, e := range events {
		switch o := e.Object.(type) {
		case *v1.Pod:
			out = append(out, string(e.Type)+" "+o.Name+"@"+o.ResourceVersion)
		case *metav1.Status:
			out = append(out, string(e.Type)+" "+string(o.Reason))
		}
	}
	return out
}

// take receives n events from w, failing after wait.
func take(t *testing.T, w watch.Interface, n int) []watch.Event {
	t.Helper()
	var out []watch.Event
	for len(out) < n {
		select {
		case e, ok := <-w.ResultChan():
			require.True(t, ok, "watch closed after %v", describe(out))
			out = append(out, e)
		case <-timeAfterWait():
			t.Fatalf("got %v, want %d events", describe(out), n)
		}
	}
	return out
}

func names(l *v1.PodList) []string {
	var out []string
	for _, p := range l.Items {
		out = append(out, p.Name+"@"+p.ResourceVersion)
	}
	return out
}

func TestServerListsSortedPodsAtTheCurrentVersionInPagesFromOneSnapshot(t *testing.T) {
	s := NewServer(false)
	t.Cleanup(s.StopWatches)
	for _, n := range []string{"c", "a", "b"} {
		s.Create(n)
	}
	got, err := s.List(metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a@2", "b@3", "c@1"}, names(got.(*v1.PodList)))
	assert.Equal(t, "3", got.(*v1.PodList).ResourceVersion)

	first, err := s.List(metav1.ListOptions{Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"a@2", "b@3"}, names(first.(*v1.PodList)))
	s.Update("c") // after the first page: the pages still show the snapshot
	second, err := s.List(metav1.ListOptions{Limit: 2, Continue: first.(*v1.PodList).Continue})
	require.NoError(t, err)
	assert.Equal(t, []string{"c@1"}, names(second.(*v1.PodList)))
	assert.Empty(t, second.(*v1.PodList).Continue)
	assert.Equal(t, "3", second.(*v1.PodList).ResourceVersion)

	_, err = s.List(metav1.ListOptions{Continue: "garbage"})
	assert.True(t, apierrors.IsBadRequest(err), "a malformed token is a bad request: %v", err)
	assert.Equal(t, []string{"list", "list", "list page 1:2", "list page garbage failed"}, s.Requests())
}

func TestServerWatchReplaysChangesAfterTheVersionThenStreams(t *testing.T) {
	s := NewServer(false)
	t.Cleanup(s.StopWatches)
	s.Create("a")
	s.Create("b")
	w, err := s.Watch(metav1.ListOptions{ResourceVersion: "1"})
	require.NoError(t, err)
	<-s.WatchOpened()
	s.Update("a")
	s.Delete("b")
	assert.Equal(t, []string{"ADDED b@2", "MODIFIED a@3", "DELETED b@4"}, describe(take(t, w, 3)))

	s.CloseWatches()
	assert.Empty(t, received(t, w), "a closed watch ends without an error")
}

func TestServerWatchFromACompactedVersionIsGone(t *testing.T) {
	s := NewServer(false)
	t.Cleanup(s.StopWatches)
	s.Create("a")
	s.UpdateMissed("a")
	_, err := s.Watch(metav1.ListOptions{ResourceVersion: "1"})
	assert.True(t, apierrors.IsResourceExpired(err), "want 410, got %v", err)
	w, err := s.Watch(metav1.ListOptions{ResourceVersion: "2"})
	require.NoError(t, err)

	s.Expire()
	assert.Equal(t, []string{"ERROR Expired"}, describe(received(t, w)))
	_, err = s.Watch(metav1.ListOptions{ResourceVersion: "1"})
	assert.True(t, apierrors.IsResourceExpired(err))
	assert.Equal(t, []string{"watch from 1 failed", "watch from 2", "watch from 1 failed"}, s.Requests())
}

func TestServerStreamingListSendsEveryPodThenTheEndBookmark(t *testing.T) {
	s := NewServer(true)
	t.Cleanup(s.StopWatches)
	assert.False(t, s.IsWatchListSemanticsUnSupported())
	s.Create("b")
	s.Create("a")
	w, err := s.Watch(metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true})
	require.NoError(t, err)
	got := take(t, w, 3)
	assert.Equal(t, []string{"ADDED a@2", "ADDED b@1", "BOOKMARK @2"}, describe(got))
	assert.Equal(t, "true", got[2].Object.(*v1.Pod).Annotations[metav1.InitialEventsAnnotationKey])

	s.SendBookmark()
	assert.Equal(t, []string{"BOOKMARK @2"}, describe(take(t, w, 1)))

	old := NewServer(false)
	assert.True(t, old.IsWatchListSemanticsUnSupported())
	_, err = old.Watch(metav1.ListOptions{SendInitialEvents: ptr.To(true)})
	assert.True(t, apierrors.IsInvalid(err), "an old server rejects a streaming list as invalid: %v", err)
}

func TestServerWatchWithoutAVersionStartsWithTheCurrentState(t *testing.T) {
	s := NewServer(false)
	t.Cleanup(s.StopWatches)
	s.Create("a")
	w, err := s.Watch(metav1.ListOptions{})
	require.NoError(t, err)
	s.Create("b")
	assert.Equal(t, []string{"ADDED a@1", "ADDED b@2"}, describe(take(t, w, 2)))
	_, err = s.Watch(metav1.ListOptions{ResourceVersion: "x"})
	assert.True(t, apierrors.IsBadRequest(err), "%v", err)
}

func TestServerInjectedFailuresAnswerUntilCleared(t *testing.T) {
	s := NewServer(false)
	t.Cleanup(s.StopWatches)
	boom := apierrors.NewInternalError(assert.AnError)
	s.FailLists(boom)
	s.FailWatches(boom)
	_, err := s.List(metav1.ListOptions{})
	assert.Same(t, boom, err)
	_, err = s.Watch(metav1.ListOptions{ResourceVersion: "0"})
	assert.Same(t, boom, err)
	s.FailLists(nil)
	s.FailWatches(nil)
	_, err = s.List(metav1.ListOptions{})
	assert.NoError(t, err)
	w, err := s.Watch(metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	w.Stop()
	assert.Empty(t, received(t, w), "Stop closes the result channel")
	assert.Equal(t, []string{"list failed", "watch from 0 failed", "list", "watch from 0"}, s.Requests())
}

func TestServerDeleteOfAMissingPodIsATestMistake(t *testing.T) {
	assert.PanicsWithValue(t, `fakeapi.Server: delete of pod "a", which does not exist`, func() { NewServer(false).Delete("a") })
}

func TestServerWatchFromZeroReplaysTheWholeHistoryUntilSomethingIsCompacted(t *testing.T) {
	s := NewServer(false)
	t.Cleanup(s.StopWatches)
	s.Create("a")
	s.Update("a")
	w, err := s.Watch(metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	assert.Equal(t, []string{"ADDED a@1", "MODIFIED a@2"}, describe(take(t, w, 2)))

	s.UpdateMissed("a")
	w, err = s.Watch(metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	assert.Equal(t, []string{"ADDED a@3"}, describe(take(t, w, 1)), "the current state, once the history is incomplete")
}

func TestServerChangesNoWatchOrNotEveryWatchHears(t *testing.T) {
	s := NewServer(false)
	t.Cleanup(s.StopWatches)
	s.Create("a")
	open, err := s.Watch(metav1.ListOptions{ResourceVersion: "1"})
	require.NoError(t, err)

	s.UpdateUnsent("a") // 2: history only
	s.AdvanceVersion(3) // 5: another resource
	s.Edit("a", func(p *v1.Pod) { p.UID = "other" })
	s.SendToWatches(Modified(Pod("a", "99")), Modified(Pod("a", "100")))
	assert.Equal(t, []string{"MODIFIED a@99", "MODIFIED a@100"}, describe(take(t, open, 2)), "only what was sent to the open watches")
	assert.Equal(t, "5", s.ResourceVersion())
	l, err := s.List(metav1.ListOptions{})
	require.NoError(t, err)
	list := l.(*v1.PodList)
	assert.Equal(t, []string{"a@2"}, names(list), "events sent to watches change nothing")
	assert.Equal(t, "5", list.ResourceVersion)
	assert.Equal(t, "other", string(list.Items[0].UID))

	later, err := s.Watch(metav1.ListOptions{ResourceVersion: "1"})
	require.NoError(t, err)
	assert.Equal(t, []string{"MODIFIED a@2"}, describe(take(t, later, 1)), "a later watch replays the unsent change")
	assert.PanicsWithValue(t, `fakeapi.Server: edit of pod "b", which does not exist`, func() { s.Edit("b", func(*v1.Pod) {}) })
}

func TestServerEndWatchesSendsThenCloses(t *testing.T) {
	s := NewServer(false)
	t.Cleanup(s.StopWatches)
	w, err := s.Watch(metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	s.EndWatches(Error(apierrors.NewInternalError(assert.AnError).ErrStatus))
	assert.Equal(t, []string{"ERROR InternalError"}, describe(received(t, w)))
}

func TestServerBlackHoledWatchesStayOpenAndHearNothing(t *testing.T) {
	s := NewServer(false)
	t.Cleanup(s.StopWatches)
	w, err := s.Watch(metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	stopped := s.BlackHoleWatches()
	require.Len(t, stopped, 1)
	s.Create("a")
	select {
	case e, ok := <-w.ResultChan():
		t.Fatalf("a black-holed watch delivered %v (open %v)", e, ok)
	case <-stopped[0]:
		t.Fatal("stopped before the consumer stopped it")
	default:
	}
	later, err := s.Watch(metav1.ListOptions{ResourceVersion: "0"})
	require.NoError(t, err)
	assert.Equal(t, []string{"ADDED a@1"}, describe(take(t, later, 1)), "the change went to the history")
	w.Stop()
	select {
	case <-stopped[0]:
	case <-timeAfterWait():
		t.Fatal("the consumer's Stop was not reported")
	}
}
