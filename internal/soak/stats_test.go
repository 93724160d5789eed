package soak

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWriteStatsStallIsLongestGapAfterRestart checks how the soak measures the writer's stall in a server
// restart: the longest gap between confirmed writes from the restart's start to the first
// write after the server was ready, failed writes not counting.
func TestWriteStatsStallIsLongestGapAfterRestart(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	s := &writeStats{start: t0}
	for _, ms := range []int{100, 900, 1000, 1100, 1200, 1300, 4000} {
		s.add(at(ms), 0, true)
	}
	s.add(at(2000), 0, false) // failed: no end of the stall
	for _, ms := range []int{4100, 4200, 9000} {
		s.add(at(ms), 0, true)
	}
	for _, tc := range []struct {
		name             string
		from, ready, end int
		want             int
	}{
		{"old server answered after the start, gap until the new one", 1050, 3000, 10000, 2700},
		{"ready while writes still succeed: the first write after it ends the window", 1050, 1250, 10000, 100},
		{"first write after ready ends the window", 4050, 4150, 10000, 100},
		{"writer stopped before a write after ready", 4250, 5000, 6000, 4750},
		{"no write after the start", 9100, 9200, 9500, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, time.Duration(tc.want)*time.Millisecond, s.stall(at(tc.from), at(tc.ready), at(tc.end)))
		})
	}
	require.Equal(t, 10, s.confirmed(0, time.Hour))
	require.Equal(t, 11, s.attempts)
	require.Equal(t, []int{2, 4, 0, 0, 3, 0, 0, 0, 0, 1}, s.series())
}
