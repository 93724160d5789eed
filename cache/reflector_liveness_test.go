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
	clocktesting "k8s.io/utils/clock/testing"
)

// olSilence detaches srv's open watches without closing them: they stay
// open and silent, as a watch behind a black-holed connection does, while
// later changes still go to the history new watches replay.
func olSilence(srv *infServer) []*infWatcher {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	silent := srv.watchers
	srv.watchers = nil
	return silent
}

// olRecordingLW serves srv and records the resourceVersion and timeout of
// every watch request.
type olRecordingLW struct {
	srv *infServer
	mu  sync.Mutex
	rvs []string
	tos []int64
}

func (l *olRecordingLW) lw() ListerWatcher {
	return infPlainLW{&ListWatch{
		ListFunc: l.srv.list,
		WatchFunc: func(options metav1.ListOptions) (watch.Interface, error) {
			l.mu.Lock()
			l.rvs = append(l.rvs, options.ResourceVersion)
			if options.TimeoutSeconds != nil {
				l.tos = append(l.tos, *options.TimeoutSeconds)
			}
			l.mu.Unlock()
			return l.srv.watch(options)
		},
	}}
}

func (l *olRecordingLW) watchRVs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.rvs...)
}

func olWaitOpen(t *testing.T, srv *infServer) {
	t.Helper()
	select {
	case <-srv.watchOpen:
	case <-time.After(infTimeout):
		t.Fatal("no watch was opened")
	}
}

// olStep advances the fake clock once the reflector waits on it.
func olStep(t *testing.T, clk *clocktesting.FakeClock, d time.Duration) {
	t.Helper()
	require.Eventually(t, clk.HasWaiters, infTimeout, time.Millisecond, "the reflector does not wait on the clock")
	clk.Step(d)
}

func TestReflectorWatchIdleTimeoutRestartsFromLastRV(t *testing.T) {
	srv := newInfServer()
	t.Cleanup(srv.stopWatches)
	srv.create("a") // 1
	srv.create("b") // 2
	rec := &olRecordingLW{srv: srv}
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	store := NewStore(MetaNamespaceKeyFunc)
	var handled []error
	var hmu sync.Mutex
	r := NewReflectorWithOptions(rec.lw(), &v1.Pod{}, store, ReflectorOptions{Clock: clk, WatchIdleTimeout: 10 * time.Second})
	r.watchErrorHandler = func(_ context.Context, _ *Reflector, err error) {
		hmu.Lock()
		handled = append(handled, err)
		hmu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()

	olWaitOpen(t, srv)
	srv.update("a") // 3
	require.Eventually(t, func() bool { return r.LastSyncResourceVersion() == "3" }, infTimeout, time.Millisecond)

	// An event halfway resets the deadline: after 5s + event + 5s the watch
	// is still the first one.
	olStep(t, clk, 5*time.Second)
	srv.update("b") // 4
	require.Eventually(t, func() bool { return r.LastSyncResourceVersion() == "4" }, infTimeout, time.Millisecond)
	olStep(t, clk, 5*time.Second)
	// A bookmark is liveness too (at 5: another resource was written).
	srv.mu.Lock()
	srv.rv++
	srv.mu.Unlock()
	olBookmark(srv)
	require.Eventually(t, func() bool { return r.LastSyncResourceVersion() == "5" }, infTimeout, time.Millisecond)
	olStep(t, clk, 9*time.Second)
	assert.Equal(t, []string{"2"}, rec.watchRVs(), "no restart while events and bookmarks arrive")

	// The connection goes silent; a change happens meanwhile.
	silent := olSilence(srv)
	srv.update("a") // 6
	olStep(t, clk, 10*time.Second)
	olWaitOpen(t, srv)
	for _, w := range silent {
		select {
		case <-w.done:
		case <-time.After(infTimeout):
			t.Fatal("the silent watch was not stopped")
		}
	}
	assert.Equal(t, []string{"2", "5"}, rec.watchRVs(), "reopened from the last resourceVersion")
	require.Eventually(t, func() bool { return r.LastSyncResourceVersion() == "6" }, infTimeout, time.Millisecond)
	lists, _ := srv.counts()
	assert.Equal(t, 1, lists, "no relist")
	assert.Equal(t, []string{"ns/a@6", "ns/b@4"}, infStoreContents(store), "the change made while silent was not lost")

	hmu.Lock()
	defer hmu.Unlock()
	require.Len(t, handled, 1)
	var idle *WatchIdleTimeoutError
	require.True(t, errors.As(handled[0], &idle), "%v", handled[0])
	assert.Equal(t, 10*time.Second, idle.Timeout)
	assert.Equal(t, "5", idle.ResourceVersion)
}

func TestReflectorWatchIdleTimeoutOffByDefault(t *testing.T) {
	srv := newInfServer()
	t.Cleanup(srv.stopWatches)
	srv.create("a")
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	r := NewReflectorWithOptions(srv.lw(), &v1.Pod{}, NewStore(MetaNamespaceKeyFunc), ReflectorOptions{Clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.RunWithContext(ctx) }()
	defer func() { cancel(); <-done }()
	olWaitOpen(t, srv)
	// Nothing waits on the clock: no deadline, no resync, no backoff.
	time.Sleep(20 * time.Millisecond) // give a wrong timer the chance to appear
	assert.False(t, clk.HasWaiters())
	_, watches := srv.counts()
	assert.Equal(t, 1, watches)
}

func TestReflectorWatchIdleTimeoutSeconds(t *testing.T) {
	r := NewReflectorWithOptions(nil, &v1.Pod{}, nil, ReflectorOptions{WatchIdleTimeout: 30 * time.Second})
	for i := 0; i < 200; i++ {
		got := *r.watchTimeoutSeconds()
		assert.GreaterOrEqual(t, got, int64(15))
		assert.Less(t, got, int64(25))
	}
	r = NewReflectorWithOptions(nil, &v1.Pod{}, nil, ReflectorOptions{WatchIdleTimeout: time.Second})
	assert.Equal(t, int64(1), *r.watchTimeoutSeconds())
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
		{name: "set before run", set: olPtrDuration(3 * time.Second), want: 3 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lw := infPlainLW{&ListWatch{
				ListFunc:  func(metav1.ListOptions) (runtime.Object, error) { return &v1.PodList{}, nil },
				WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
			}}
			informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{WatchIdleTimeout: tc.option})
			typed := NewTypedSharedIndexInformer[*v1.Pod](informer)
			if tc.set != nil {
				require.NoError(t, SetWatchIdleTimeout(typed, *tc.set))
			}
			infRunInformer(t, informer)
			infWaitSynced(t, informer.HasSyncedChecker())
			s := informer.(*sharedIndexInformer)
			s.startedLock.Lock()
			ctrl := s.controller.(*controller)
			s.startedLock.Unlock()
			ctrl.mu.RLock()
			got := ctrl.reflector.watchIdleTimeout
			ctrl.mu.RUnlock()
			assert.Equal(t, tc.want, got)
			assert.ErrorContains(t, SetWatchIdleTimeout(informer, time.Second), "already started")
		})
	}
	assert.ErrorContains(t, SetWatchIdleTimeout(nil, time.Second), "nil informer")
}

func olPtrDuration(d time.Duration) *time.Duration { return &d }
