//go:build !race

package apply

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testDiscard is a handler that does nothing.
type testDiscard struct{}

func (testDiscard) OnAdd(any, bool)   {}
func (testDiscard) OnUpdate(_, _ any) {}
func (testDiscard) OnDelete(any)      {}

// TestApplierBatchAllocatesNothing pins the cost of the informer's hot
// path: a batch of updates of cached objects, with the queue's keys,
// applied in one transaction of the own store, and collected by Notes,
// allocates nothing once the scratch space has grown (a delta is never
// copied into another record that outlives the batch).
func TestApplierBatchAllocatesNothing(t *testing.T) {
	const n = 64
	rounds := make([][]testDelta, 2)
	keys := make([]string, n)
	for r := range rounds {
		rounds[r] = make([]testDelta, n)
		for i := range n {
			name := "p" + strconv.Itoa(i)
			rounds[r][i] = testDelta{Updated, testPod(name, strconv.Itoa(10+r*n+i))}
			keys[i] = "ns/" + name
		}
	}
	s := newTestSetup(t, nil)
	s.cfg.KeysOf = func([]testDelta) []string { return keys }
	s.cfg.Handler = testDiscard{}
	a := New(s.cfg)
	require.NoError(t, a.ProcessBatch(rounds[0], false))
	r := 0
	allocs := testing.AllocsPerRun(100, func() {
		r++
		_ = a.ProcessBatch(rounds[r%2], false)
	})
	assert.Zero(t, allocs, "ProcessBatch of %d updates", n)
	assert.Equal(t, int64(0), s.keys.calls.Load(), "no key computed")

	notes := &Notes{}
	s.cfg.Handler = notes
	a = New(s.cfg)
	require.NoError(t, a.ProcessBatch(rounds[0], false))
	allocs = testing.AllocsPerRun(100, func() {
		r++
		notes.notes = notes.notes[:0]
		_ = a.ProcessBatch(rounds[r%2], false)
	})
	assert.Zero(t, allocs, "ProcessBatch of %d updates into Notes", n)
}
