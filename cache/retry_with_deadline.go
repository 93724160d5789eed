package cache

import (
	"time"

	"k8s.io/utils/clock"
)

// RetryWithDeadline decides whether an operation that keeps failing with a
// retryable error should be tried again: retrying is allowed while the
// current run of retryable errors has lasted no longer than a maximum
// duration. It is kept for callers of client-go's API; kinformer's Reflector
// does not use it: its core applies the same rule to watches that end with an
// internal server error (see Reflector.MaxInternalErrorRetryDuration).
//
// Implementations returned by NewRetryWithDeadline are not safe for
// concurrent use.
type RetryWithDeadline interface {
	// After records the outcome of one attempt. Errors the retryable
	// predicate rejects are ignored.
	After(error)
	// ShouldRetry reports whether another attempt is allowed now.
	ShouldRetry() bool
}

// errorRun is the RetryWithDeadline returned by NewRetryWithDeadline. It
// tracks one run of retryable errors: when it started and when the latest
// one happened.
type errorRun struct {
	maxDuration time.Duration
	quietPeriod time.Duration
	retryable   func(error) bool
	clock       clock.PassiveClock

	started time.Time // zero when no run is in progress
	latest  time.Time
}

// NewRetryWithDeadline returns a RetryWithDeadline that allows retries while
// the errors accepted by isRetryable have been occurring for at most
// maxRetryDuration. A run of errors ends, and the next retryable error starts
// a new one, when at least minResetPeriod passed since the previous retryable
// error. A maxRetryDuration of zero or less never allows a retry.
//
// A nil isRetryable treats no error as retryable, and a nil clock means the
// real clock. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func NewRetryWithDeadline(maxRetryDuration, minResetPeriod time.Duration, isRetryable func(error) bool, clock clock.Clock) RetryWithDeadline {
	run := &errorRun{
		maxDuration: maxRetryDuration,
		quietPeriod: minResetPeriod,
		retryable:   isRetryable,
		clock:       clockOrReal(clock),
	}
	return run
}

// After implements RetryWithDeadline.
func (e *errorRun) After(err error) {
	if e.retryable == nil || !e.retryable(err) {
		return
	}
	now := e.clock.Now()
	if e.started.IsZero() || now.Sub(e.latest) >= e.quietPeriod {
		e.started = now
	}
	e.latest = now
}

// ShouldRetry implements RetryWithDeadline.
func (e *errorRun) ShouldRetry() bool {
	if e.maxDuration <= 0 {
		return false
	}
	if !e.started.IsZero() && e.clock.Now().Sub(e.started) <= e.maxDuration {
		return true
	}
	// The run is over (or never began): forget it, so that the next
	// retryable error starts a fresh one.
	e.started, e.latest = time.Time{}, time.Time{}
	return false
}
