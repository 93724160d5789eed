package reflector

import (
	"time"

	"k8s.io/utils/clock"
)

// silenceTimer fires when nothing was observed for limit on its clock. A nil
// *silenceTimer is off: its channel is nil, which a select never receives
// from. It belongs to one goroutine.
type silenceTimer struct {
	clock clock.Clock
	limit time.Duration
	timer clock.Timer
	// last is when something was last observed.
	last time.Time
}

// newSilenceTimer starts a silenceTimer of limit (positive) from now.
func newSilenceTimer(c clock.Clock, limit time.Duration) *silenceTimer {
	return &silenceTimer{clock: c, limit: limit, timer: c.NewTimer(limit), last: c.Now()}
}

// C is the channel the timer fires on; nil when t is nil.
func (t *silenceTimer) C() <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.timer.C()
}

// observed records that something arrived at now, a time read from the
// timer's clock. The underlying timer is not touched: expired sets it again
// for what remains.
func (t *silenceTimer) observed(now time.Time) {
	if t != nil {
		t.last = now
	}
}

// expired is called after C fired. It returns how long nothing was observed
// and whether that reached limit; when it did not, the timer is set again for
// the rest.
func (t *silenceTimer) expired() (time.Duration, bool) {
	quiet := t.clock.Since(t.last)
	if quiet >= t.limit {
		return quiet, true
	}
	t.timer.Reset(t.limit - quiet)
	return quiet, false
}

// stop stops t; it does nothing when t is nil.
func (t *silenceTimer) stop() {
	if t != nil {
		t.timer.Stop()
	}
}
