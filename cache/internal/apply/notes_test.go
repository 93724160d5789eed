package apply

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kinformer/kinformer/cache/internal/fanout"
)

// testDetector records the objects it is given.
type testDetector struct{ objs []any }

func (d *testDetector) AddObject(obj any) { d.objs = append(d.objs, obj) }

// testListenerHandler records what a listener delivers.
type testListenerHandler struct {
	mu  sync.Mutex
	got []string
}

func (h *testListenerHandler) record(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, s)
}
func (h *testListenerHandler) OnAdd(obj any, initial bool) { h.record("add " + testDesc(obj)) }
func (h *testListenerHandler) OnUpdate(old, obj any) {
	h.record("update " + testDesc(old) + " -> " + testDesc(obj))
}
func (h *testListenerHandler) OnDelete(obj any) { h.record("delete " + testDesc(obj)) }
func (h *testListenerHandler) snapshot() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...)
}

// runTestProcessor runs a processor with one listener, whose handler it
// returns, until the test ends.
func runTestProcessor(t *testing.T) (*fanout.Processor, *testListenerHandler) {
	t.Helper()
	p := fanout.NewProcessor(fanout.Config{})
	h := &testListenerHandler{}
	l, err := p.NewListener(fanout.ListenerConfig{Handler: h, Name: "test", Now: time.Now()})
	require.NoError(t, err)
	p.Add(l)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { p.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return p, h
}

// TestNotesCollectAndHandOnABatch: Notes collects a batch (an update
// between equal resourceVersions is a resync note; the detector sees every
// added or updated object), the applier's handOn gives it to the
// processor's listeners and empties the collection.
func TestNotesCollectAndHandOnABatch(t *testing.T) {
	det := &testDetector{}
	n := &Notes{Detector: det}
	a1, a2, b1 := testPod("a", "1"), testPod("a", "2"), testPod("b", "1")
	n.OnAdd(b1, true)
	n.OnUpdate(a1, a2)
	n.OnUpdate(a2, a2)
	n.OnDelete(b1)
	require.Len(t, n.notes, 4)
	assert.Equal(t, fanout.Notification{Kind: fanout.Add, Initial: true, NewObj: b1}, n.notes[0])
	assert.False(t, n.notes[1].Resync)
	assert.True(t, n.notes[2].Resync)
	assert.True(t, n.hasResync)
	assert.Equal(t, []any{b1, a2, a2}, det.objs)

	p, h := runTestProcessor(t)
	// The resync note goes only to listeners due for a resync: this one
	// has no resync period.
	p.ShouldResync()
	a := &Applier[testDelta]{deliver: &Delivery[testDelta]{Notes: n, To: p}}
	a.handOn(nil, 0)
	assert.Empty(t, n.notes)
	assert.False(t, n.hasResync)
	want := []string{"add b@1", "update a@1 -> a@2", "delete b@1"}
	assert.Eventually(t, func() bool { return len(h.snapshot()) >= len(want) }, 10*time.Second, time.Millisecond)
	assert.Equal(t, want, h.snapshot())
}
