package sharding

import "github.com/kinformer/kinformer/cache"

// Range is one of a group's ranges: its index (0 to the number of ranges
// minus one) and its bounds in the hash space, those of
// cache.EvenShardRanges(n)[Index].
type Range struct {
	Index  int
	Bounds cache.ShardRange
}

// RangeEventType says what happened to a member's hold on a range.
type RangeEventType string

const (
	// RangeAcquired: the member holds the range and acts on it from now
	// on. A cache for it starts empty (an earlier RangeLost dropped the
	// previous one).
	RangeAcquired RangeEventType = "Acquired"
	// RangeSuspended: the member's renew deadline for the range passed
	// (renewals fail): it must stop acting on it, but still holds it and
	// keeps what it built for it.
	RangeSuspended RangeEventType = "Suspended"
	// RangeResumed: a renewal succeeded while the member was still the
	// holder of a suspended range: it acts on it again, with what it kept.
	RangeResumed RangeEventType = "Resumed"
	// RangeLost: the member no longer holds the range (it released it, or
	// another member took it after it expired, or the member stopped): it
	// stops acting on it and drops what it built for it.
	RangeLost RangeEventType = "Lost"
)

// RangeEvent is one change of a member's hold on one range.
type RangeEvent struct {
	Type  RangeEventType
	Range Range
}

// RangeHandler is told of a member's range events, one at a time, in the
// order they happen, from the member's goroutine: the member does not
// renew while a handler runs, so handlers must return promptly (well within
// RenewDeadline minus RetryPeriod). RangeLost of a release is delivered
// before the release is written, so that a handler has stopped acting on
// the range before another member may take it.
type RangeHandler interface {
	OnRangeEvent(RangeEvent)
}

// RangeHandlerFunc is a function as a RangeHandler.
type RangeHandlerFunc func(RangeEvent)

// OnRangeEvent calls f(e).
func (f RangeHandlerFunc) OnRangeEvent(e RangeEvent) { f(e) }

// RangeState is a member's hold on a range, as Status reports it.
type RangeState string

const (
	// RangeNotHeld: the member does not hold the range.
	RangeNotHeld RangeState = "NotHeld"
	// RangeActing: the member holds the range and its renew deadline has
	// not passed.
	RangeActing RangeState = "Acting"
	// RangeHeldSuspended: the member holds the range but its renew deadline
	// passed.
	RangeHeldSuspended RangeState = "Suspended"
)
