package cache

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/klog/v2/ktesting"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kinformer/kinformer/cache/internal/diag"
	"github.com/kinformer/kinformer/cache/internal/reflector"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// streamOptionsFrom are the options of a streaming list from rv.
func streamOptionsFrom(rv string) metav1.ListOptions {
	return metav1.ListOptions{
		ResourceVersion:      rv,
		AllowWatchBookmarks:  true,
		SendInitialEvents:    ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	}
}

func watchOptionsFrom(rv string) metav1.ListOptions {
	return metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}
}

// TestReflectorWatchListScenarios runs scripted servers through Run in
// streaming-list mode.
func TestReflectorWatchListScenarios(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	expired := apierrors.NewResourceExpired("too old resource version")
	cases := []struct {
		name      string
		lists     []fakeapi.ListAnswer
		watches   []fakeapi.WatchAnswer
		wantLists []metav1.ListOptions
		wantWatch []metav1.ListOptions
		wantOps   []string
		wantErrs  []string
	}{
		{
			name: "streamed objects go to one Replace, then the same watch continues",
			watches: []fakeapi.WatchAnswer{{Events: []watch.Event{
				newEvent(watch.Added, newPod("p1", "1")),
				newEvent(watch.Added, newPod("p2", "2")),
				newEvent(watch.Modified, newPod("p1", "3")),
				newEvent(watch.Added, newPod("p3", "4")),
				newEvent(watch.Deleted, newPod("p3", "5")),
				endOfInitialEvents("5"),
				newEvent(watch.Added, newPod("p4", "6")),
			}}},
			wantWatch: []metav1.ListOptions{streamOptionsFrom(""), watchOptionsFrom("6")},
			wantOps:   []string{"replace [ns/p1@3 ns/p2@2] 5", "add ns/p4@6", "rv 6"},
		},
		{
			name:      "a failing stream falls back to LIST",
			watches:   []fakeapi.WatchAnswer{{Err: errors.New("dummy")}},
			lists:     []fakeapi.ListAnswer{{Object: newPodList("1", "", newPod("p1", "1"))}},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}},
			wantWatch: []metav1.ListOptions{streamOptionsFrom(""), watchOptionsFrom("1")},
			wantOps:   []string{"replace [ns/p1@1] 1"},
		},
		{
			name:      "a server rejecting streaming (Invalid) falls back to LIST",
			watches:   []fakeapi.WatchAnswer{{Err: apierrors.NewInvalid(schema.GroupKind{}, "streaming is not allowed", nil)}},
			lists:     []fakeapi.ListAnswer{{Object: newPodList("1", "", newPod("p1", "1"))}},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}},
			wantWatch: []metav1.ListOptions{streamOptionsFrom(""), watchOptionsFrom("1")},
			wantOps:   []string{"replace [ns/p1@1] 1"},
		},
		{
			name:      "a stream that ends at once without events falls back to LIST",
			watches:   []fakeapi.WatchAnswer{{}},
			lists:     []fakeapi.ListAnswer{{Object: newPodList("1", "", newPod("p1", "1"))}},
			wantLists: []metav1.ListOptions{{ResourceVersion: "0", Limit: 500}},
			wantWatch: []metav1.ListOptions{streamOptionsFrom(""), watchOptionsFrom("1")},
			wantOps:   []string{"replace [ns/p1@1] 1"},
		},
		{
			// As client-go: the stream is opened again at once.
			name: "a stream that closes before its end bookmark is opened again",
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1"))}},
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "2")), newEvent(watch.Added, newPod("p2", "3")), endOfInitialEvents("3"), newEvent(watch.Added, newPod("p3", "4"))}},
			},
			wantWatch: []metav1.ListOptions{streamOptionsFrom(""), streamOptionsFrom(""), watchOptionsFrom("4")},
			wantOps:   []string{"replace [ns/p1@2 ns/p2@3] 3", "add ns/p3@4", "rv 4"},
		},
		{
			name: "429 on the stream is retried after a backoff",
			watches: []fakeapi.WatchAnswer{
				{Err: apierrors.NewTooManyRequests("busy", 0)},
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1")), endOfInitialEvents("2"), newEvent(watch.Added, newPod("p2", "3"))}},
			},
			wantWatch: []metav1.ListOptions{streamOptionsFrom(""), streamOptionsFrom(""), watchOptionsFrom("3")},
			wantOps:   []string{"replace [ns/p1@1] 2", "add ns/p2@3", "rv 3"},
			wantErrs:  []string{"toomany"},
		},
		{
			name: "an expired resource version streams the latest data",
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1")), endOfInitialEvents("5"), newEvent(watch.Error, &expired.ErrStatus)}},
				{Err: expired},
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "8")), endOfInitialEvents("9"), newEvent(watch.Added, newPod("p2", "10"))}},
			},
			wantWatch: []metav1.ListOptions{streamOptionsFrom(""), streamOptionsFrom("5"), streamOptionsFrom(""), watchOptionsFrom("10")},
			wantOps:   []string{"replace [ns/p1@1] 5", "replace [ns/p1@8] 9", "add ns/p2@10", "rv 10"},
			// The watch's 410 is reported; the stream's is retried from
			// the latest data without a report, as a LIST's would be.
			wantErrs: []string{"expired"},
		},
		{
			// Bad data (internal/reflector/baddata.go): skipped, the stream goes on.
			name: "a bookmark without resourceVersion is skipped",
			watches: []fakeapi.WatchAnswer{
				{Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1")), endOfInitialEvents(""), endOfInitialEvents("4"), newEvent(watch.Added, newPod("p2", "5"))}},
			},
			wantWatch: []metav1.ListOptions{streamOptionsFrom(""), watchOptionsFrom("5")},
			wantOps:   []string{"replace [ns/p1@1] 4", "add ns/p2@5", "rv 5"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New().ListAnswers(tc.lists...).WatchAnswers(tc.watches...)
			rec := newStoreRecorder()
			r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Backoff: tinyBackoff()})
			require.True(t, r.useWatchList)
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
			gotErrs := errorKinds(errs.snapshot())
			for i := range gotErrs {
				if i < len(tc.wantErrs) && strings.HasPrefix(gotErrs[i], tc.wantErrs[i]) {
					gotErrs[i] = tc.wantErrs[i]
				}
			}
			assert.Equal(t, tc.wantErrs, gotErrs, "reported errors")
		})
	}
}

// TestReflectorUseWatchList checks when the streaming list is chosen.
func TestReflectorUseWatchList(t *testing.T) {
	cases := []struct {
		name    string
		gate    bool
		lw      ListerWatcher
		wantUse bool
	}{
		{"gate off", false, fakeapi.New(), false},
		{"gate on, client supports it", true, fakeapi.New(), true},
		{"gate on, client says it does not", true, fakeapi.New().WithoutWatchList(), false},
		{"gate on, plain ListWatch", true, &ListWatch{}, true},
		{"gate on, ListWatch wrapped for a client without support", true, ToListWatcherWithWatchListSemantics(&ListWatch{}, fakeapi.New().WithoutWatchList()), false},
		{"gate on, ListWatch wrapped for a client with support", true, ToListWatcherWithWatchListSemantics(&ListWatch{}, struct{}{}), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, tc.gate)
			r := NewReflectorWithOptions(tc.lw, &v1.Pod{}, newStoreRecorder(), ReflectorOptions{})
			assert.Equal(t, tc.wantUse, r.useWatchList)
		})
	}
}

// transformingRecorder is a recorder whose store applies a transformer.
type transformingRecorder struct {
	*storeRecorder
	calls atomic.Int32
}

func (r *transformingRecorder) Transformer() TransformFunc {
	return func(obj interface{}) (interface{}, error) {
		r.calls.Add(1)
		pod, ok := obj.(*v1.Pod)
		if !ok {
			return nil, errors.New("not a pod")
		}
		pod.Spec.Hostname = "transformed"
		return pod, nil
	}
}

func TestReflectorWatchListAppliesStoreTransformer(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	s := fakeapi.New().WatchAnswers(fakeapi.WatchAnswer{Hold: true, Events: []watch.Event{
		newEvent(watch.Added, newPod("p1", "1")),
		newEvent(watch.Added, newPod("p2", "2")),
		endOfInitialEvents("2"),
	}})
	store := &transformingRecorder{storeRecorder: newStoreRecorder()}
	r := NewReflectorWithOptions(s, &v1.Pod{}, store, ReflectorOptions{Name: "rf"})
	stop := startRun(t, r)
	// The version is published before the list reaches the store: wait for both.
	requireEventually(t, func() bool {
		return r.LastSyncResourceVersion() == "2" && len(store.opsSnapshot()) > 0
	}, "stream not synced")
	stop()

	require.Len(t, store.order, 1)
	for _, obj := range store.items {
		assert.Equal(t, "transformed", obj.(*v1.Pod).Spec.Hostname)
	}
	assert.Equal(t, int32(2), store.calls.Load(), "the accumulator transforms each streamed object once")
}

func TestReflectorWatchListReplaceFailureFallsBackToList(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	s := fakeapi.New().
		WatchAnswers(fakeapi.WatchAnswer{Hold: true, Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1")), endOfInitialEvents("1")}}).
		ListAnswers(fakeapi.ListAnswer{Object: newPodList("3", "", newPod("p1", "3"))})
	rec := newStoreRecorder()
	rec.fail("replace", errors.New("store full"))
	r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf", Backoff: tinyBackoff()})
	var errs watchErrors
	r.watchErrorHandler = errs.handler
	runUntilExhausted(t, r, s)

	assert.True(t, s.NthWatch(0).IsStopped(), "the stream's watch is stopped")
	assert.Equal(t, []string{"replace [ns/p1@1] 1", "replace [ns/p1@3] 3"}, rec.opsSnapshot())
	assert.Empty(t, errs.snapshot(), "as client-go, the failed stream falls back to LIST without a report")
	assert.Equal(t, uint64(1), r.stats.Lists(diag.ReasonStreamFallback))
	assert.Equal(t, []metav1.ListOptions{streamOptionsFrom(""), watchOptionsFrom("3")}, watchOptionsWithoutTimeout(s))
}

func TestReflectorWatchListStopsPromptly(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	s := fakeapi.New().WatchAnswers(fakeapi.WatchAnswer{Hold: true, Events: []watch.Event{newEvent(watch.Added, newPod("p1", "1"))}})
	rec := newStoreRecorder()
	r := NewReflectorWithOptions(s, &v1.Pod{}, rec, ReflectorOptions{Name: "rf"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.ListAndWatchWithContext(ctx) }()
	requireEventually(t, func() bool { return len(s.Watches()) == 1 }, "stream not opened")
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(conditionTimeout):
		t.Fatal("ListAndWatch did not return")
	}
	assert.True(t, s.NthWatch(0).IsStopped())
	assert.Empty(t, rec.opsSnapshot(), "nothing reaches the store before the end bookmark")
}

// TestReflectorWatchListWarnsWithoutEndBookmark checks the periodic warning
// while the end bookmark is awaited.
func TestReflectorWatchListWarnsWithoutEndBookmark(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	s := fakeapi.New().WatchAnswers(fakeapi.WatchAnswer{Hold: true})
	clk := testingclock.NewFakeClock(time.Now())
	logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.BufferLogs(true)))
	cfg := ReflectorOptions{Name: "rf", Clock: clk, Logger: &logger}.config()
	cfg.engine.InitialEventsTimeout = 0 // wait for ever, as client-go does
	r := newReflector(s, &v1.Pod{}, newStoreRecorder(), cfg)
	stop := startRun(t, r)
	buffer := logger.GetSink().(ktesting.Underlier).GetBuffer()
	// The ticker is the only waiter while the stream is open.
	requireEventually(t, func() bool { return clk.HasWaiters() }, "no ticker")
	clk.Step(reflector.InitialEventsWarnInterval)
	requireEventually(t, func() bool {
		return strings.Contains(buffer.String(), "awaiting required bookmark event for initial events stream")
	}, "no warning logged")
	s.NthWatch(0).Send(newEvent(watch.Added, newPod("p1", "1")))
	requireEventually(t, func() bool {
		clk.Step(reflector.InitialEventsWarnInterval)
		return strings.Contains(buffer.String(), "received last event")
	}, "no idle warning logged")
	stop()
}
