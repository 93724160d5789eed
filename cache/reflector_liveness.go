package cache

import (
	"fmt"
	"time"

	"k8s.io/utils/clock"
)

// DefaultWatchIdleTimeout is the watch liveness deadline of shared informers
// whose SharedIndexInformerOptions.WatchIdleTimeout is zero (see
// ReflectorOptions.WatchIdleTimeout for how it works): once a watch has
// received a periodic bookmark, it is reopened from the last resourceVersion
// when it then receives no event and no bookmark for this long.
//
// The figure follows from the bookmarks of kube-apiserver's watch cache: it
// sends one to every watch that allows them about once a minute (once it has
// seen a change newer than the watch's start; the first one arms the
// deadline), from a dispatcher that wakes about once a second with 25%
// jitter and skips a watch whose buffer is full of events (which then arrive
// instead). Two minutes is that interval plus as much again for a bookmark
// delayed by a loaded server, a slow network or a client that is behind, so
// a healthy watch is not cut; a stuck watch (a black-holed proxy, a server
// that stopped sending while its connection still answers HTTP/2 pings, an
// HTTP/1.1 watch, which has no pings) is reopened within two minutes of its
// last event or bookmark.
const DefaultWatchIdleTimeout = 2 * time.Minute

// WatchIdleTimeoutError is the error a watch ends with when, after it had
// received a periodic bookmark, it received no event and no bookmark for the
// Reflector's WatchIdleTimeout. The Reflector then reopens the watch from
// ResourceVersion without relisting; watch error handlers receive it so
// that they can count such restarts.
type WatchIdleTimeoutError struct {
	// Name is the Reflector's name.
	Name string
	// Timeout is the liveness deadline that passed.
	Timeout time.Duration
	// ResourceVersion is the version the watch is reopened from.
	ResourceVersion string
}

// Error implements error.
func (e *WatchIdleTimeoutError) Error() string {
	return fmt.Sprintf("reflector %s: watch received no event or bookmark for %v after a periodic bookmark; reopening it from resourceVersion %q", e.Name, e.Timeout, e.ResourceVersion)
}

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

// effectiveWatchIdleTimeout maps an informer's option to the Reflector's
// deadline: zero is the default, negative is off.
func effectiveWatchIdleTimeout(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultWatchIdleTimeout
	case d < 0:
		return 0
	}
	return d
}
