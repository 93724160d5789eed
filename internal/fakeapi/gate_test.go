package fakeapi

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// listResult is what one List call answered.
type listResult struct {
	obj runtime.Object
	err error
}

// listInBackground makes a List call on its own goroutine and returns where its answer
// arrives.
func listInBackground(ctx context.Context, lw interface {
	ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error)
}, options metav1.ListOptions) <-chan listResult {
	out := make(chan listResult, 1)
	go func() {
		obj, err := lw.ListWithContext(ctx, options)
		out <- listResult{obj, err}
	}()
	return out
}

// arrived waits for a call to come to g, failing after wait.
func arrived(t *testing.T, g *Gate) {
	t.Helper()
	select {
	case <-g.Arrived():
	case <-timeAfterWait():
		t.Fatal("no call came to the gate")
	}
}

// answer waits for a background call's answer, failing after wait.
func answer(t *testing.T, c <-chan listResult) listResult {
	t.Helper()
	select {
	case r := <-c:
		return r
	case <-timeAfterWait():
		t.Fatal("the call did not return")
	}
	return listResult{}
}

// notYet checks that a background call has not returned.
func notYet(t *testing.T, c <-chan listResult) {
	t.Helper()
	select {
	case r := <-c:
		t.Fatalf("the call returned %v, %v while held", r.obj, r.err)
	case <-time.After(10 * time.Millisecond):
	}
}

func TestGateHoldsACallUntilReleasedWithTheAnswerTheTestChooses(t *testing.T) {
	page := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}}
	g := NewGate()
	var seen []metav1.ListOptions
	a := New().ListAnswers(ListAnswer{Object: page}).BeforeList(func(ctx context.Context, o metav1.ListOptions) error {
		seen = append(seen, o)
		return g.Pass(ctx)
	})

	throttled := errors.New("429")
	first := listInBackground(context.Background(), a, metav1.ListOptions{ResourceVersion: "0"})
	arrived(t, g)
	notYet(t, first)
	g.Release(throttled)
	r := answer(t, first)
	assert.Same(t, throttled, r.err, "the error given to Release is the answer")
	assert.Equal(t, 1, a.PendingListAnswers(), "a refused call takes no scripted answer")

	second := listInBackground(context.Background(), a, metav1.ListOptions{ResourceVersion: "1"})
	arrived(t, g)
	g.Release(nil)
	r = answer(t, second)
	require.NoError(t, r.err)
	assert.Same(t, page, r.obj, "a call released without an error takes its scripted answer")
	assert.Equal(t, []metav1.ListOptions{{ResourceVersion: "0"}, {ResourceVersion: "1"}}, seen)
	assert.Equal(t, seen, a.ListOptions(), "refused calls are recorded too")
}

func TestGateLetsAHeldCallGoWhenItsContextEnds(t *testing.T) {
	g := NewGate()
	a := New().BeforeList(func(ctx context.Context, _ metav1.ListOptions) error { return g.Pass(ctx) })
	ctx, cancel := context.WithCancel(context.Background())
	held := listInBackground(ctx, a, metav1.ListOptions{})
	arrived(t, g)
	notYet(t, held)
	cancel()
	assert.ErrorIs(t, answer(t, held).err, context.Canceled)
	select {
	case <-a.Exhausted():
		t.Fatal("a call that ended at the gate took an answer")
	default:
	}
}

func TestOpenGateLetsEveryCallGo(t *testing.T) {
	g := NewGate()
	a := New().BeforeList(func(ctx context.Context, _ metav1.ListOptions) error { return g.Pass(ctx) })
	held := listInBackground(context.Background(), a, metav1.ListOptions{})
	arrived(t, g)
	g.Open()
	g.Open()
	assert.ErrorIs(t, answer(t, held).err, ErrScriptExhausted, "the released call went on to its answer")
	_, err := a.List(metav1.ListOptions{})
	assert.ErrorIs(t, err, ErrScriptExhausted, "a later call passes at once")
	g.Release(errors.New("no call takes it")) // returns at once on an open gate
}

func TestServerBeforeListHoldsOrFailsARequest(t *testing.T) {
	s := NewServer(false)
	t.Cleanup(s.StopWatches)
	s.Create("a")
	g := NewGate()
	s.BeforeList(func(ctx context.Context, o metav1.ListOptions) error {
		if o.ResourceVersion == "fail" {
			return errors.New("refused")
		}
		return g.Pass(ctx)
	})
	held := listInBackground(context.Background(), s, metav1.ListOptions{})
	arrived(t, g)
	s.Create("b") // while the request is held: the list that follows sees it
	notYet(t, held)
	g.Release(nil)
	r := answer(t, held)
	require.NoError(t, r.err)
	assert.Equal(t, []string{"a@1", "b@2"}, names(r.obj.(*v1.PodList)))

	_, err := s.List(metav1.ListOptions{ResourceVersion: "fail"})
	assert.EqualError(t, err, "refused")
	s.BeforeList(nil)
	_, err = s.List(metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"list", "list failed", "list"}, s.Requests())
	assert.Equal(t, []metav1.ListOptions{{}, {ResourceVersion: "fail"}, {}}, s.ListOptions())
}

func TestServerPageSizeCutsPagesSmallerThanAsked(t *testing.T) {
	s := NewServer(false)
	t.Cleanup(s.StopWatches)
	for _, n := range []string{"a", "b", "c"} {
		s.Create(n)
	}
	s.PageSize(2, false)
	first, err := s.List(metav1.ListOptions{Limit: 500})
	require.NoError(t, err)
	assert.Equal(t, []string{"a@1", "b@2"}, names(first.(*v1.PodList)))
	second, err := s.List(metav1.ListOptions{Limit: 500, Continue: first.(*v1.PodList).Continue})
	require.NoError(t, err)
	assert.Equal(t, []string{"c@3"}, names(second.(*v1.PodList)))
	assert.Empty(t, second.(*v1.PodList).Continue)
	small, err := s.List(metav1.ListOptions{Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, []string{"a@1"}, names(small.(*v1.PodList)), "never more than the limit")
	whole, err := s.List(metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a@1", "b@2", "c@3"}, names(whole.(*v1.PodList)), "an unpaged request is not paged")

	s.PageSize(2, true)
	paged, err := s.List(metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"a@1", "b@2"}, names(paged.(*v1.PodList)), "unpagedToo pages it")
	assert.Equal(t, "3:2", paged.(*v1.PodList).Continue)

	s.PageSize(0, true)
	whole, err = s.List(metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, whole.(*v1.PodList).Items, 3, "0 restores the default")
}

func TestServerAnswerListsAsConvertsEveryPage(t *testing.T) {
	s := NewServer(false)
	t.Cleanup(s.StopWatches)
	s.Create("a")
	s.Create("b")
	s.AnswerListsAs(func(p *v1.PodList) runtime.Object {
		out := &metav1.List{ListMeta: p.ListMeta}
		for i := range p.Items {
			out.Items = append(out.Items, runtime.RawExtension{Object: &p.Items[i]})
		}
		return out
	})
	got, err := s.List(metav1.ListOptions{Limit: 1})
	require.NoError(t, err)
	list := got.(*metav1.List)
	assert.Equal(t, "0:1", list.Continue)
	assert.Equal(t, "2", list.ResourceVersion)
	require.Len(t, list.Items, 1)
	assert.Equal(t, "a", list.Items[0].Object.(*v1.Pod).Name)
	s.AnswerListsAs(nil)
	got, err = s.List(metav1.ListOptions{})
	require.NoError(t, err)
	assert.IsType(t, &v1.PodList{}, got)
}

func TestPendingCountsEventsTheConsumerHasNotTaken(t *testing.T) {
	w := NewWatch([]watch.Event{Added(pod("a", "1"))}, true)
	assert.Equal(t, 1, w.Pending())
	require.True(t, w.Send(Added(pod("b", "2"))))
	assert.Equal(t, 2, w.Pending())
	<-w.ResultChan()
	<-w.ResultChan()
	assert.Zero(t, w.Pending(), "both taken")
	w.Stop()
}

func TestBeforeWatchHoldsOrRefusesAWatchCall(t *testing.T) {
	g := NewGate()
	a := New().WatchAnswers(WatchAnswer{Hold: true}).BeforeWatch(func(ctx context.Context, _ metav1.ListOptions) error { return g.Pass(ctx) })
	type watchResult struct {
		w   watch.Interface
		err error
	}
	call := func(ctx context.Context) <-chan watchResult {
		out := make(chan watchResult, 1)
		go func() {
			w, err := a.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "1"})
			out <- watchResult{w, err}
		}()
		return out
	}
	ctx, cancel := context.WithCancel(context.Background())
	first := call(ctx)
	arrived(t, g)
	cancel()
	select {
	case r := <-first:
		assert.ErrorIs(t, r.err, context.Canceled)
		assert.Nil(t, r.w)
	case <-timeAfterWait():
		t.Fatal("the held watch call did not return when its context ended")
	}
	assert.Nil(t, a.NthWatch(0), "a refused call hands out no watch")

	second := call(context.Background())
	arrived(t, g)
	g.Release(nil)
	select {
	case r := <-second:
		require.NoError(t, r.err)
		assert.Same(t, a.NthWatch(0), r.w, "a released call takes its scripted answer")
		r.w.Stop()
	case <-timeAfterWait():
		t.Fatal("the released watch call did not return")
	}
	assert.Len(t, a.WatchOptions(), 2, "refused calls are recorded too")
}
