package cache

import (
	"fmt"

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
// a watch whose liveness deadline passed. Any other error is returned as it
// is.
func publicReflectorError(err error) error {
	switch e := err.(type) {
	case *reflector.ShortWatchError:
		return &VeryShortWatchError{Name: e.Name}
	case *reflector.IdleTimeoutError:
		return &WatchIdleTimeoutError{Name: e.Name, Timeout: e.Timeout, ResourceVersion: e.ResourceVersion}
	}
	return err
}

// isTooLargeResourceVersionError reports that the resource version asked for
// is newer than the server has seen (see reflector.IsTooLargeResourceVersion).
func isTooLargeResourceVersionError(err error) bool {
	return reflector.IsTooLargeResourceVersion(err)
}
