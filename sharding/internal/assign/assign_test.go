package assign

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func members(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("replica-%d", i)
	}
	return out
}

// TestOwnerIsOrderIndependent: every permutation of the members gives the
// same owners.
func TestOwnerIsOrderIndependent(t *testing.T) {
	ms := members(5)
	want := Assign("g", 64, ms)
	rev := slices.Clone(ms)
	slices.Reverse(rev)
	assert.Equal(t, want, Assign("g", 64, rev))
	_, ok := Owner("g", 0, nil)
	assert.False(t, ok)
	assert.Equal(t, []string{"", ""}, Assign("g", 2, nil))
}

// TestJoinAndLeaveMoveOnlyWhatTheyMust: a member joining takes only ranges
// it wins, every other range keeps its owner; a member leaving gives up
// only its own ranges.
func TestJoinAndLeaveMoveOnlyWhatTheyMust(t *testing.T) {
	for n := 1; n <= 8; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			before := Assign("group", 16, members(n))
			after := Assign("group", 16, members(n+1))
			joined := fmt.Sprintf("replica-%d", n)
			for i := range before {
				if after[i] != before[i] {
					assert.Equal(t, joined, after[i], "range %d moved from %s to %s on a join", i, before[i], after[i])
				}
			}
			// Leaving is the same comparison read backwards: from n+1 to n,
			// only the leaver's ranges move.
			for i := range after {
				if after[i] != joined {
					assert.Equal(t, after[i], before[i], "range %d moved on a leave", i)
				}
			}
		})
	}
}

// TestSpreadIsRoughlyEven: over many ranges every member wins a share
// within a factor of two of the mean.
func TestSpreadIsRoughlyEven(t *testing.T) {
	const ranges = 4096
	for _, n := range []int{2, 3, 4, 7} {
		counts := map[string]int{}
		for _, o := range Assign("group", ranges, members(n)) {
			counts[o]++
		}
		require.Len(t, counts, n)
		mean := ranges / n
		for m, c := range counts {
			assert.Greater(t, c, mean/2, "%s of %d", m, n)
			assert.Less(t, c, mean*2, "%s of %d", m, n)
		}
	}
}
