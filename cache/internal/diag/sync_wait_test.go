package diag

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// closable is a DoneChecker a test closes.
type closable chan struct{}

func (c closable) Done() <-chan struct{} { return c }

var errPermanent = errors.New("permanent")

func isPermanent(err error) bool { return errors.Is(err, errPermanent) }

// TestWaitFailFast: the wait ends when every waitee synced, when ctx ends,
// and, reporting true, when an unsynced waitee records a permanent error;
// a transient error does not end it, and a waitee without stats is only
// awaited.
func TestWaitFailFast(t *testing.T) {
	t.Run("all synced", func(t *testing.T) {
		a, b := make(closable), make(closable)
		close(a)
		go close(b)
		assert.False(t, WaitFailFast(context.Background(), []SyncWaitee{{Synced: a, Stats: NewStats()}, {Synced: b}}, isPermanent))
	})
	t.Run("context ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.False(t, WaitFailFast(ctx, []SyncWaitee{{Synced: make(closable), Stats: NewStats()}}, isPermanent))
	})
	t.Run("permanent error", func(t *testing.T) {
		stats := NewStats()
		done := make(chan bool, 1)
		go func() {
			done <- WaitFailFast(context.Background(), []SyncWaitee{{Synced: make(closable), Stats: stats}}, isPermanent)
		}()
		armed := func() bool {
			stats.errMu.Lock()
			defer stats.errMu.Unlock()
			return stats.errSignal != nil
		}
		require.Eventually(t, armed, 10*time.Second, time.Millisecond, "the wait takes the error signal")
		stats.RecordError(errors.New("transient"), time.Unix(1, 0))
		// The wait wakes, sees a transient error and takes the next signal.
		require.Eventually(t, armed, 10*time.Second, time.Millisecond, "the wait goes on after a transient error")
		select {
		case <-done:
			t.Fatal("a transient error ended the wait")
		default:
		}
		stats.RecordError(errPermanent, time.Unix(2, 0))
		assert.True(t, <-done)
	})
	t.Run("permanent error of a synced waitee", func(t *testing.T) {
		synced := make(closable)
		close(synced)
		stats := NewStats()
		stats.RecordError(errPermanent, time.Unix(1, 0))
		assert.False(t, WaitFailFast(context.Background(), []SyncWaitee{{Synced: synced, Stats: stats}}, isPermanent))
	})
}
