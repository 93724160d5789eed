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
