package cache

import (
	"fmt"
	"time"

	"github.com/kinformer/kinformer/cache/internal/reflector"
)

// VeryShortWatchError is the error of a watch that closed within a second
// of being opened without delivering an event, which usually means the
// server cannot serve it. The Reflector relists after it.
type VeryShortWatchError struct {
	// Name of the Reflector
	Name string
}

// Error implements error.
func (e *VeryShortWatchError) Error() string {
	return fmt.Sprintf("very short watch: %s: Unexpected watch close - watch lasted less than a second and no items received", e.Name)
}

// isExpiredError reports a 410: the resource version asked for is no longer
// available (reason Expired, or Gone from servers older than 1.18).
func isExpiredError(err error) bool {
	return reflector.IsExpired(err)
}

// publicReflectorError maps the errors the engine makes to the public types
// a user's watch error handler and ListAndWatch's caller see: a
// *VeryShortWatchError for a very short watch, a *WatchIdleTimeoutError for
// a watch whose liveness deadline passed, a *ShardSelectorIgnoredError for a
// server found ignoring the shard selector. Any other error is returned as
// it is.
func publicReflectorError(err error) error {
	switch e := err.(type) {
	case *reflector.ShortWatchError:
		return &VeryShortWatchError{Name: e.Name}
	case *reflector.IdleTimeoutError:
		return &WatchIdleTimeoutError{Name: e.Name, Timeout: e.Timeout, ResourceVersion: e.ResourceVersion}
	case *reflector.ShardIgnoredError:
		return &ShardSelectorIgnoredError{Selector: e.Selector, Request: e.Request, ShardInfo: e.ShardInfo}
	}
	return err
}

// isTooLargeResourceVersionError reports that the resource version asked for
// is newer than the server has seen (see reflector.IsTooLargeResourceVersion).
func isTooLargeResourceVersionError(err error) bool {
	return reflector.IsTooLargeResourceVersion(err)
}

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

// Error implements error, with the engine's message for the same event.
func (e *WatchIdleTimeoutError) Error() string {
	engine := reflector.IdleTimeoutError{Name: e.Name, Timeout: e.Timeout, ResourceVersion: e.ResourceVersion}
	return engine.Error()
}
