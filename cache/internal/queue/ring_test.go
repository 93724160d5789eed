package queue

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRing(t *testing.T) {
	var r Ring[int]
	next, want := 0, 0
	// Interleave pushes and pops so the ring wraps, grows and shrinks.
	for round := 0; round < 6; round++ {
		for i := 0; i < 1000*(round%3+1); i++ {
			r.Push(next)
			next++
		}
		require.Equal(t, next-want, r.Len())
		for i := 0; i < r.Len(); i++ {
			require.Equal(t, want+i, *r.At(i))
		}
		for i := 0; i < 800*(round%3+1); i++ {
			require.Equal(t, want, r.PopFront())
			want++
		}
	}
	for r.Len() > 0 {
		require.Equal(t, want, r.PopFront())
		want++
	}
	assert.LessOrEqual(t, len(r.buf), ringShrinkAbove, "storage shrinks after draining")
	r.Push(1)
	r.Reset()
	assert.Equal(t, 0, r.Len())
	r.Push(7)
	assert.Equal(t, 7, r.PopFront())
}
