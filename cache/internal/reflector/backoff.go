package reflector

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

// WatchTimeoutSeconds draws the timeout of one watch request (a streaming
// list's included): in [MinWatchTimeout, 2*MinWatchTimeout), as client-go. It
// is safe for concurrent use.
func (e *Engine) WatchTimeoutSeconds() *int64 {
	floor := e.settings.MinWatchTimeout.Seconds()
	seconds := int64(floor + rand.Float64()*floor)
	return &seconds
}

// BackoffDelay returns how long to wait before retrying after err: the next
// step of the backoff, or the server's Retry-After when that is longer, but
// no longer than maxRetryAfter (a longer one is counted). A wait that
// honours a Retry-After is recorded in the Stats. It is safe for concurrent
// use. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (e *Engine) BackoffDelay(err error) time.Duration {
	d := e.backoff.next()
	seconds, ok := apierrors.SuggestsClientDelay(err)
	if !ok || seconds <= 0 {
		return d
	}
	retryAfter := time.Duration(seconds) * time.Second
	if e.settings.MaxRetryAfter > 0 && retryAfter > e.settings.MaxRetryAfter {
		retryAfter = e.settings.MaxRetryAfter
		e.stats.RetryAfterCapped()
	}
	if retryAfter > d {
		d = retryAfter
		e.stats.RetryAfterUntil(e.clock.Now().Add(d))
	}
	return d
}

// Sleep waits d on the Reflector's clock; it returns false when ctx ended
// first.
func (e *Engine) Sleep(ctx context.Context, d time.Duration) bool {
	t := e.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// backoff is the Reflector's retry delay: a wait.Backoff that starts
// over after resetAfter without a failure, counted from the end of the last
// delay, so a server that stays unreachable keeps being retried at the cap.
// It is safe for concurrent use. Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
type backoff struct {
	mu         sync.Mutex
	initial    wait.Backoff
	current    wait.Backoff
	resetAfter time.Duration
	clock      clock.PassiveClock
	quietSince time.Time // end of the last delay handed out
}

func newBackoff(b wait.Backoff, resetAfter time.Duration, c clock.PassiveClock) *backoff {
	return &backoff{initial: b, current: b, resetAfter: resetAfter, clock: c}
}

// next returns the next delay.
func (b *backoff) next() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	if !b.quietSince.IsZero() && now.Sub(b.quietSince) > b.resetAfter {
		b.current = b.initial
	}
	d := b.current.Step()
	b.quietSince = now.Add(d)
	return d
}
