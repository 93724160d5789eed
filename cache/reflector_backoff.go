package cache

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
)

// watchTimeoutSeconds draws the timeout of one watch request (a streaming
// list's included): in [minWatchTimeout, maxWatchTimeout), as client-go.
func (r *Reflector) watchTimeoutSeconds() *int64 {
	span := r.maxWatchTimeout.Seconds() - r.minWatchTimeout.Seconds()
	seconds := int64(r.minWatchTimeout.Seconds() + rand.Float64()*span)
	return &seconds
}

// backoffDelay returns how long to wait before retrying after err: the next
// step of the backoff, or the server's Retry-After when that is longer, but
// no longer than maxRetryAfter (a longer one is counted). A wait that
// honours a Retry-After is recorded in the stats (InformerStatus).
//
// Difference from client-go: client-go's Reflector ignores Retry-After (only
// the REST client's own retries honour it, uncapped).
func (r *Reflector) backoffDelay(err error) time.Duration {
	d := r.backoff.next()
	seconds, ok := apierrors.SuggestsClientDelay(err)
	if !ok || seconds <= 0 {
		return d
	}
	retryAfter := time.Duration(seconds) * time.Second
	if r.maxRetryAfter > 0 && retryAfter > r.maxRetryAfter {
		retryAfter = r.maxRetryAfter
		r.stats.CountRetryAfterCapped()
	}
	if retryAfter > d {
		d = retryAfter
		r.stats.RetryAfterWait(r.clock.Now().Add(d))
	}
	return d
}

// sleep waits d on the Reflector's clock; it returns false when ctx ended
// first.
func (r *Reflector) sleep(ctx context.Context, d time.Duration) bool {
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// reflectorBackoff is the Reflector's retry delay: a wait.Backoff that starts
// over after resetAfter without a failure. It is safe for concurrent use.
//
// Difference from client-go: client-go's delay (wait.Backoff.DelayWithReset)
// starts over every resetAfter counted from when it last started over, even
// while failures continue; kinformer's counts from the end of the last
// delay, so a server that stays unreachable keeps being retried at the cap.
type reflectorBackoff struct {
	mu         sync.Mutex
	initial    wait.Backoff
	current    wait.Backoff
	resetAfter time.Duration
	clock      clock.PassiveClock
	quietSince time.Time // end of the last delay handed out
}

func newReflectorBackoff(b wait.Backoff, resetAfter time.Duration, c clock.PassiveClock) *reflectorBackoff {
	return &reflectorBackoff{initial: b, current: b, resetAfter: resetAfter, clock: c}
}

// next returns the next delay.
func (b *reflectorBackoff) next() time.Duration {
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

// clockOrReal returns c, or the real clock when c is nil.
func clockOrReal(c clock.Clock) clock.Clock {
	if c == nil {
		return clock.RealClock{}
	}
	return c
}
