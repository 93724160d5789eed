package bench

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestLiveHeapWatchCountsCyclesAfterItsStart(t *testing.T) {
	runtime.GC()
	w := StartLiveHeapWatch(time.Millisecond)
	keep := make([]byte, 64<<20)
	runtime.GC()
	runtime.GC()
	p := w.Stop()
	runtime.KeepAlive(keep)
	assert.GreaterOrEqual(t, p.Cycles, uint64(2))
	assert.LessOrEqual(t, p.Unseen, p.Cycles-1, "the last cycle is always read")
	assert.GreaterOrEqual(t, p.Peak, uint64(64<<20), "the live 64 MiB")
}

func TestHeapPhaseCountsWhatThePhaseKeeps(t *testing.T) {
	p := StartHeapPhase()
	keep := make([]byte, 64<<20)
	for i := range keep {
		keep[i] = byte(i)
	}
	peak, seen := p.End()
	retained := p.Retained()
	runtime.KeepAlive(keep)
	assert.GreaterOrEqual(t, seen.Cycles, uint64(1), "End forces a cycle")
	assert.GreaterOrEqual(t, peak, 64.0, "the live 64 MiB at the peak")
	assert.GreaterOrEqual(t, retained, 64.0, "the live 64 MiB after the phase")
	assert.Less(t, retained, 80.0, "little more than the 64 MiB")
}
