package cache

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	testingclock "k8s.io/utils/clock/testing"
)

var errRetryable = errors.New("retryable")

func TestRetryWithDeadline(t *testing.T) {
	isRetryable := func(err error) bool { return errors.Is(err, errRetryable) }
	type step struct {
		advance time.Duration
		err     error // nil: no After call
		after   bool  // call After(err) even when err is nil
		want    bool  // ShouldRetry
	}
	cases := []struct {
		name  string
		max   time.Duration
		steps []step
	}{
		{
			name:  "disabled",
			max:   0,
			steps: []step{{err: errRetryable, want: false}, {advance: time.Second, err: errRetryable, want: false}},
		},
		{
			name:  "no error yet",
			max:   time.Minute,
			steps: []step{{want: false}},
		},
		{
			name: "retries within the deadline, then stops",
			max:  30 * time.Second,
			steps: []step{
				{err: errRetryable, want: true},
				{advance: 20 * time.Second, err: errRetryable, want: true},
				{advance: 10 * time.Second, err: errRetryable, want: true},
				{advance: time.Second, err: errRetryable, want: false},
			},
		},
		{
			name: "a quiet period starts a new run",
			max:  30 * time.Second,
			steps: []step{
				{err: errRetryable, want: true},
				{advance: 20 * time.Second, err: errRetryable, want: true},
				{advance: time.Minute, err: errRetryable, want: true},
				{advance: 25 * time.Second, err: errRetryable, want: true},
			},
		},
		{
			name: "other errors are ignored",
			max:  30 * time.Second,
			steps: []step{
				{err: errors.New("other"), want: false},
				{after: true, want: false},
				{err: errRetryable, want: true},
			},
		},
		{
			name: "after giving up a new run starts",
			max:  10 * time.Second,
			steps: []step{
				{err: errRetryable, want: true},
				{advance: 11 * time.Second, want: false},
				{err: errRetryable, want: true},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakeClock(time.Unix(1000, 0))
			r := NewRetryWithDeadline(tc.max, time.Minute, isRetryable, clk)
			for i, s := range tc.steps {
				clk.Step(s.advance)
				if s.err != nil || s.after {
					r.After(s.err)
				}
				assert.Equal(t, s.want, r.ShouldRetry(), "step %d", i)
			}
		})
	}
}

func TestRetryWithDeadlineNilArguments(t *testing.T) {
	r := NewRetryWithDeadline(time.Minute, time.Minute, nil, nil)
	r.After(errRetryable)
	assert.False(t, r.ShouldRetry(), "a nil predicate retries nothing")
}
