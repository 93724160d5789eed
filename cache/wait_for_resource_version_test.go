package cache

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// waitForRVAsync runs WaitForResourceVersion in a goroutine and returns the
// channel its result arrives on.
func waitForRVAsync(ctx context.Context, informer SharedInformer, rv string) <-chan error {
	res := make(chan error, 1)
	go func() { res <- WaitForResourceVersion(ctx, informer, rv) }()
	return res
}

func requireStillWaiting(t *testing.T, res <-chan error) {
	t.Helper()
	select {
	case err := <-res:
		t.Fatalf("wait returned early: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
}

func waitResult(t *testing.T, res <-chan error) error {
	t.Helper()
	select {
	case err := <-res:
		return err
	case <-time.After(waitTimeout):
		t.Fatal("wait did not return")
		return nil
	}
}

func TestWaitForResourceVersionEventsAndBookmarks(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a") // rv 1
			informer := newPodInformer(t, srv, q.useDeltaFIFO, 0)
			ctx := context.Background()

			// Before the informer runs, the wait blocks.
			early := waitForRVAsync(ctx, informer, "1")
			requireStillWaiting(t, early)

			runInformer(t, informer)
			require.NoError(t, waitResult(t, early), "the initial list at rv 1 satisfies rv 1")
			<-srv.WatchOpened()

			// Already caught up: returns at once.
			require.NoError(t, WaitForResourceVersion(ctx, informer, "1"))

			// A write the informer sees: the wait ends when the event is in
			// the cache, and the lister sees the object.
			pending := waitForRVAsync(ctx, informer, "2")
			requireStillWaiting(t, pending)
			srv.Create("b") // rv 2
			require.NoError(t, waitResult(t, pending))
			_, exists, err := informer.GetIndexer().GetByKey("ns/b")
			require.NoError(t, err)
			assert.True(t, exists, "ns/b is in the cache once the wait returned")

			// A write the informer does not see (another resource): only a
			// bookmark at or past it ends the wait (an event past it with
			// the DeltaFIFO, which does not pass bookmarks on).
			srv.AdvanceVersion(8) // 10
			pending = waitForRVAsync(ctx, informer, "10")
			requireStillWaiting(t, pending)
			srv.SendBookmark()
			if q.useDeltaFIFO {
				requireStillWaiting(t, pending)
				srv.Update("b") // rv 11
			}
			require.NoError(t, waitResult(t, pending))

			// Deletions count too.
			current, err := strconv.Atoi(srv.ResourceVersion())
			require.NoError(t, err)
			next := strconv.Itoa(current + 1)
			pending = waitForRVAsync(ctx, informer, next)
			requireStillWaiting(t, pending)
			srv.Delete("a")
			require.NoError(t, waitResult(t, pending))
			_, exists, err = informer.GetIndexer().GetByKey("ns/a")
			require.NoError(t, err)
			assert.False(t, exists)
		})
	}
}

func TestWaitForResourceVersionErrors(t *testing.T) {
	srv := fakeapi.NewServer(false)
	srv.Create("a")
	informer := newPodInformer(t, srv, false, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var invalid resourceversion.InvalidResourceVersion
	for _, rv := range []string{"", "0", "01", "abc", "-1", "1.5"} {
		err := WaitForResourceVersion(ctx, informer, rv)
		require.Error(t, err, "rv %q", rv)
		assert.True(t, errors.As(err, &invalid), "rv %q: %v", rv, err)
	}

	err := WaitForResourceVersion(ctx, nil, "1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nil informer")

	// A context that ends first.
	short, cancelShort := context.WithCancel(ctx)
	pending := waitForRVAsync(short, informer, "5")
	requireStillWaiting(t, pending)
	cancelShort()
	err = waitResult(t, pending)
	assert.ErrorIs(t, err, context.Canceled)

	// An informer that stops first, and waits after it stopped.
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); informer.RunWithContext(runCtx) }()
	pending = waitForRVAsync(ctx, informer, "5")
	requireStillWaiting(t, pending)
	stop()
	<-done
	assert.ErrorIs(t, waitResult(t, pending), ErrInformerStopped)
	assert.ErrorIs(t, WaitForResourceVersion(ctx, informer, "5"), ErrInformerStopped)
	srv.StopWatches()
}

// A server whose resource versions are not integers cannot be compared
// with: the wait says so instead of blocking. The typed wrapper reaches the
// informer inside it.
func TestWaitForResourceVersionIncomparableServer(t *testing.T) {
	lw := noWatchListLW{&ListWatch{
		ListFunc: func(metav1.ListOptions) (runtime.Object, error) {
			return &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "opaque-7"}, Items: []v1.Pod{*newPod("a", "opaque-7")}}, nil
		},
		WatchFunc: func(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
	}}
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{})
	typed := NewTypedSharedIndexInformer[*v1.Pod](informer)
	runInformer(t, informer)
	waitUntilSynced(t, informer.HasSyncedChecker())
	err := WaitForResourceVersion(context.Background(), typed, "3")
	var invalid resourceversion.InvalidResourceVersion
	require.Error(t, err)
	assert.True(t, errors.As(err, &invalid), "%v", err)
	assert.Contains(t, err.Error(), `"opaque-7"`)
}
