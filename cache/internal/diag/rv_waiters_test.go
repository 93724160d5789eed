package diag

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/resourceversion"
)

// watermarkAt is a watermark a test moves.
type watermarkAt struct{ rv atomic.Value }

func (w *watermarkAt) set(rv string) { w.rv.Store(rv) }
func (w *watermarkAt) get() string {
	rv, _ := w.rv.Load().(string)
	return rv
}

// TestResourceVersionWaitersReleaseOnceReached: a waiter returns at once
// when the watermark is already there, and otherwise when Notify sees the
// watermark at or past its version.
func TestResourceVersionWaitersReleaseOnceReached(t *testing.T) {
	var w ResourceVersionWaiters
	var mark watermarkAt
	mark.set("5")
	require.NoError(t, w.Wait(context.Background(), "5", mark.get))

	done := make(chan error, 1)
	go func() { done <- w.Wait(context.Background(), "7", mark.get) }()
	require.Eventually(t, func() bool { return w.waiting.Load() == 1 }, 10*time.Second, time.Millisecond)
	mark.set("6")
	w.Notify(mark.get) // releases synchronously, or not at all
	assert.Equal(t, int32(1), w.waiting.Load(), "released below its version")
	mark.set("8")
	w.Notify(mark.get)
	require.NoError(t, <-done)
	assert.Zero(t, w.waiting.Load())
}

// TestResourceVersionWaitersErrors: a version that is not an integer, a
// watermark that cannot be compared, a context that ends and a stop each
// end the wait with their error.
func TestResourceVersionWaitersErrors(t *testing.T) {
	var mark watermarkAt
	mark.set("5")
	var w ResourceVersionWaiters
	err := w.Wait(context.Background(), "x", mark.get)
	var invalid resourceversion.InvalidResourceVersion
	assert.ErrorAs(t, err, &invalid)

	mark.set("not-a-number")
	err = w.Wait(context.Background(), "3", mark.get)
	assert.ErrorContains(t, err, "cannot be compared")
	mark.set("5")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, w.Wait(ctx, "9", mark.get), context.Canceled)

	stopped := errors.New("stopped")
	done := make(chan error, 1)
	go func() { done <- w.Wait(context.Background(), "9", mark.get) }()
	require.Eventually(t, func() bool { return w.waiting.Load() == 1 }, 10*time.Second, time.Millisecond)
	w.Stop(stopped)
	assert.ErrorIs(t, <-done, stopped)
	assert.ErrorIs(t, w.Wait(context.Background(), "1", mark.get), stopped, "a wait after Stop fails at once")
}
