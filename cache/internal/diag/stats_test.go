package diag

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestStatsCountListsByReason: the first list counts as initial, a list
// with no reason set retries a failed one, and a reason set counts for the
// next list only.
func TestStatsCountListsByReason(t *testing.T) {
	s := NewStats()
	s.ListStarting()
	s.ListStarting()
	s.SetNextList(ReasonExpired)
	s.ListStarting()
	s.ListStarting()
	assert.Equal(t, uint64(1), s.Lists(ReasonInitial))
	assert.Equal(t, uint64(2), s.Lists(ReasonListError))
	assert.Equal(t, uint64(1), s.Lists(ReasonExpired))
	assert.Zero(t, s.Lists(ReasonWatchError))
}

// TestStatsTimesAreZeroUntilRecorded: every time a Stats reports is zero
// until something records it, then the time recorded.
func TestStatsTimesAreZeroUntilRecorded(t *testing.T) {
	s := NewStats()
	for name, get := range map[string]func() time.Time{
		"last event": s.LastEvent, "last list": s.LastList, "started": s.StartedAt, "retry-after": s.RetryAfterUntil,
	} {
		assert.True(t, get().IsZero(), name)
	}
	now := time.Unix(100, 5)
	s.EventReceived(now)
	s.ListSucceeded(now.Add(time.Second))
	s.MarkStarted(now.Add(2 * time.Second))
	s.RetryAfterWait(now.Add(3 * time.Second))
	assert.True(t, now.Equal(s.LastEvent()))
	assert.True(t, now.Add(time.Second).Equal(s.LastList()))
	assert.True(t, now.Add(2*time.Second).Equal(s.StartedAt()))
	assert.True(t, now.Add(3*time.Second).Equal(s.RetryAfterUntil()))
}

// TestStatsCurrentErrorClearsAfterAList: the last error is current until a
// list succeeds at or after it; the error signal closes at the next error.
func TestStatsCurrentErrorClearsAfterAList(t *testing.T) {
	s := NewStats()
	assert.NoError(t, s.CurrentError())
	sig := s.ErrorSignal()
	boom := errors.New("boom")
	at := time.Unix(10, 0)
	s.RecordError(nil, at)
	select {
	case <-sig:
		t.Fatal("a nil error closed the signal")
	default:
	}
	s.RecordError(boom, at)
	select {
	case <-sig:
	default:
		t.Fatal("the signal did not close at the error")
	}
	assert.Equal(t, boom, s.CurrentError())
	s.ListSucceeded(at.Add(-time.Second))
	assert.Equal(t, boom, s.CurrentError(), "a list before the error does not clear it")
	s.ListSucceeded(at)
	assert.NoError(t, s.CurrentError())
	err, errAt := s.LastError()
	assert.Equal(t, boom, err, "the last error is kept")
	assert.True(t, at.Equal(errAt))
}
