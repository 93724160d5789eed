package cache

import (
	"fmt"
	"time"
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
