package diag

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFreshnessCountsConfirmationsOnceReached drives the confirmation
// tracker step by step: a confirmation counts once the store's
// resourceVersion reaches it, with its own time; a newer confirmation at or
// below an older one's resourceVersion replaces it; resourceVersions that
// are not integers count only when equal.
func TestFreshnessCountsConfirmationsOnceReached(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type step struct {
		confirm string // confirm this rv at the step's time
		store   string // else move the store to this rv
		wantRV  string // the confirmation counted after the step ("": none)
		wantAt  int
		pending int
	}
	tests := []struct {
		name  string
		store string
		steps []step
	}{{
		name:  "counts once the store reaches it",
		store: "5",
		steps: []step{
			{confirm: "10", pending: 1},
			{store: "9", pending: 1},
			{store: "10", wantRV: "10", wantAt: 0},
		},
	}, {
		name:  "store already past: counts at once",
		store: "20",
		steps: []step{{confirm: "15", wantRV: "15"}},
	}, {
		name:  "a newer confirmation at a lower resourceVersion replaces an older one",
		store: "5",
		steps: []step{
			{confirm: "12", pending: 1},
			{confirm: "11", pending: 1},
			{store: "11", wantRV: "11", wantAt: 1},
		},
	}, {
		name:  "reaching several counts the newest",
		store: "5",
		steps: []step{
			{confirm: "8", pending: 1},
			{confirm: "9", pending: 2},
			{confirm: "30", pending: 3},
			{store: "10", wantRV: "9", wantAt: 1, pending: 1},
			{store: "31", wantRV: "30", wantAt: 2},
		},
	}, {
		name:  "resourceVersions that are not integers count when equal",
		store: "a",
		steps: []step{
			{confirm: "b", pending: 1},
			{store: "c", pending: 1},
			{store: "b", wantRV: "b", wantAt: 0},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			storeRV := tc.store
			f := &Freshness{storeRV: func() string {
				mu.Lock()
				defer mu.Unlock()
				return storeRV
			}}
			for i, s := range tc.steps {
				if s.confirm != "" {
					f.Confirm(s.confirm, at(i))
				} else {
					mu.Lock()
					storeRV = s.store
					mu.Unlock()
					f.WatermarkMoved()
				}
				c := f.LastConfirmed()
				assert.Equal(t, s.wantRV, c.ResourceVersion, "step %d", i)
				if s.wantRV != "" {
					assert.Equal(t, at(s.wantAt), c.At, "step %d", i)
				}
				f.mu.Lock()
				assert.Len(t, f.pending, s.pending, "step %d", i)
				f.mu.Unlock()
				assert.Equal(t, s.pending > 0, f.waiting.Load(), "step %d", i)
			}
		})
	}
}

// TestFreshnessBoundsPending checks that at most maxPendingConfirmations
// wait, the oldest dropped, and that stats built without a watermark reader (NewStats, a Reflector built alone)
// tracks nothing.
func TestFreshnessBoundsPending(t *testing.T) {
	f := &Freshness{storeRV: func() string { return "1" }}
	for i := range maxPendingConfirmations + 4 {
		f.Confirm(string(rune('a'+i)), time.Unix(int64(i), 0))
	}
	f.mu.Lock()
	require.Len(t, f.pending, maxPendingConfirmations)
	assert.Equal(t, "e", f.pending[0].ResourceVersion)
	f.mu.Unlock()

	var alone Freshness
	alone.Confirm("5", time.Unix(1, 0))
	alone.WatermarkMoved()
	assert.Zero(t, alone.LastConfirmed())
	assert.True(t, alone.LastReceived().IsZero())
}
