package fanout

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"
)

// waitTimeout bounds every wait of these tests.
const waitTimeout = 10 * time.Second

// recorder is a Handler that records every call as a string; gate, when
// not nil, makes each call wait for a value on it first.
type recorder struct {
	gate chan struct{}

	mu    sync.Mutex
	calls []string
}

func (r *recorder) record(s string) {
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
}

func (r *recorder) OnAdd(obj any, initial bool) {
	r.record(fmt.Sprintf("add %s initial=%v", describe(obj), initial))
}
func (r *recorder) OnUpdate(oldObj, newObj any) {
	r.record(fmt.Sprintf("update %s -> %s", describe(oldObj), describe(newObj)))
}
func (r *recorder) OnDelete(obj any) { r.record("delete " + describe(obj)) }

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// waitN waits until r recorded n calls and returns them.
func (r *recorder) waitN(t *testing.T, n int) []string {
	t.Helper()
	require.Eventually(t, func() bool { return len(r.get()) >= n }, waitTimeout, time.Millisecond, "calls so far: %v", r.get())
	return r.get()
}

// newTestProcessor returns a processor with the tests' keys and
// placeholders, and runs it until the test ends (and waits for it).
func newTestProcessor(t *testing.T, clk *testingclock.FakeClock) *Processor {
	t.Helper()
	cfg := Config{KeyOf: testKeyOf, IsFinalStateUnknown: isPlaceholder}
	if clk != nil {
		cfg.Clock = clk
	}
	p := NewProcessor(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return p
}

// addListener builds and registers a listener of h on p.
func addListener(t *testing.T, p *Processor, h Handler, cfg ListenerConfig) *Listener {
	t.Helper()
	cfg.Handler = h
	cfg.Logger = klog.Background()
	if cfg.Name == "" {
		cfg.Name = fmt.Sprintf("%T", h)
	}
	l, err := p.NewListener(cfg)
	require.NoError(t, err)
	p.Add(l)
	return l
}

// TestEachHandlerGetsEveryNotificationInOrder: a blocked handler delays
// neither Distribute nor another handler, and once released it gets every
// notification, in order.
func TestEachHandlerGetsEveryNotificationInOrder(t *testing.T) {
	p := newTestProcessor(t, nil)
	blocked := &recorder{gate: make(chan struct{})}
	free := &recorder{}
	addListener(t, p, blocked, ListenerConfig{})
	addListener(t, p, free, ListenerConfig{})

	var want []string
	for i := 1; i <= 100; i++ {
		p.Distribute([]Notification{updateNote(pod("a", fmt.Sprint(i)), pod("a", fmt.Sprint(i+1)))}, false)
		want = append(want, fmt.Sprintf("update ns/a@%d -> ns/a@%d", i, i+1))
	}
	assert.Equal(t, want, free.waitN(t, len(want)))
	assert.Empty(t, blocked.get())
	close(blocked.gate)
	assert.Equal(t, want, blocked.waitN(t, len(want)))
}

// TestListenerSyncsOncePerHandler: a listener syncs once the processor was
// told the informer synced and its own handler processed its initial list;
// a blocked handler keeps only its own listener unsynced, and initial adds
// merged away by coalescing count as processed.
func TestListenerSyncsOncePerHandler(t *testing.T) {
	p := newTestProcessor(t, nil)
	blocked := &recorder{gate: make(chan struct{})}
	lb := addListener(t, p, blocked, ListenerConfig{SyncName: "informer + event handler blocked"})
	free := &recorder{}
	lf := addListener(t, p, free, ListenerConfig{})
	coalesced := &recorder{}
	lc := addListener(t, p, coalesced, ListenerConfig{Buffer: BufferCoalesceByKey})

	p.Distribute([]Notification{addNote(pod("a", "1"), true), addNote(pod("b", "1"), true), deleteNote(pod("b", "1"))}, false)
	free.waitN(t, 3)
	assert.False(t, lf.HasSynced(), "synced before the informer said so")
	p.UpstreamHasSynced()
	require.Eventually(t, lf.HasSynced, waitTimeout, time.Millisecond)
	require.Eventually(t, lc.HasSynced, waitTimeout, time.Millisecond)
	assert.Equal(t, []string{"add ns/a@1 initial=true"}, coalesced.waitN(t, 1))
	assert.False(t, lb.HasSynced(), "the blocked handler's listener synced")
	assert.Equal(t, "informer + event handler blocked", lb.SyncTracker().Name())

	blocked.gate <- struct{}{}
	blocked.gate <- struct{}{}
	select {
	case <-lb.SyncTracker().Done():
	case <-time.After(waitTimeout):
		t.Fatal("the blocked handler's listener did not sync once it processed its initial list")
	}
	close(blocked.gate)

	// A listener added later, with its own initial list, syncs once it has
	// processed it.
	late := &recorder{}
	ll, err := p.NewListener(ListenerConfig{Logger: klog.Background(), Handler: late, Name: "late"})
	require.NoError(t, err)
	ll.Enqueue([]Notification{addNote(pod("a", "1"), true)}, true)
	p.Add(ll)
	require.Eventually(t, ll.HasSynced, waitTimeout, time.Millisecond)
	assert.Equal(t, []string{"add ns/a@1 initial=true"}, late.get())
}

// TestResyncNotesGoOnlyToListenersDue: ShouldResync decides which
// listeners are due; Resync notes reach those only, other notes all.
func TestResyncNotesGoOnlyToListenersDue(t *testing.T) {
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	p := newTestProcessor(t, clk)
	fast, slow, none := &recorder{}, &recorder{}, &recorder{}
	addListener(t, p, fast, ListenerConfig{RequestedResyncPeriod: time.Second, ResyncPeriod: time.Second, Now: clk.Now()})
	addListener(t, p, slow, ListenerConfig{RequestedResyncPeriod: 3 * time.Second, ResyncPeriod: 3 * time.Second, Now: clk.Now()})
	addListener(t, p, none, ListenerConfig{Now: clk.Now()})

	clk.Step(time.Second)
	require.True(t, p.ShouldResync())
	resync := Notification{Kind: Update, Resync: true, OldObj: pod("a", "1"), NewObj: pod("a", "1")}
	p.Distribute([]Notification{resync, addNote(pod("b", "2"), false)}, true)
	assert.Equal(t, []string{"update ns/a@1 -> ns/a@1", "add ns/b@2 initial=false"}, fast.waitN(t, 2))
	assert.Equal(t, []string{"add ns/b@2 initial=false"}, slow.waitN(t, 1))
	assert.Equal(t, []string{"add ns/b@2 initial=false"}, none.waitN(t, 1))

	// The check period changed: effective periods follow.
	p.ResyncCheckPeriodChanged(func(requested time.Duration) time.Duration { return 2 * requested })
	assert.False(t, p.ShouldResync(), "due again before the new period")
}

// TestHandlerPanicIsCountedAndDeliveryGoesOn: a panicking handler's
// notification is skipped and counted, the next ones are delivered, and an
// initial add that panicked counts as processed.
func TestHandlerPanicIsCountedAndDeliveryGoesOn(t *testing.T) {
	p := newTestProcessor(t, nil)
	rec := &recorder{}
	h := panicOnFirstAdd{recorder: rec}
	l := addListener(t, p, &h, ListenerConfig{Name: "panicky"})
	p.Distribute([]Notification{addNote(pod("a", "1"), true), addNote(pod("b", "1"), true)}, false)
	p.UpstreamHasSynced()
	assert.Equal(t, []string{"add ns/b@1 initial=true"}, rec.waitN(t, 1))
	require.Eventually(t, l.HasSynced, waitTimeout, time.Millisecond)
	assert.Equal(t, int64(1), p.Panics())
	assert.Equal(t, []ListenerStatus{{Name: "panicky", Pending: 0, Panics: 1, Synced: true}}, p.Statuses())
}

// panicOnFirstAdd panics in its first OnAdd and records the others.
type panicOnFirstAdd struct {
	*recorder
	panicked bool
}

func (h *panicOnFirstAdd) OnAdd(obj any, initial bool) {
	if !h.panicked {
		h.panicked = true
		panic("first add")
	}
	h.recorder.OnAdd(obj, initial)
}

// TestStoppedListenersFinish: Remove stops one listener (its buffer
// dropped, its Finished closed once its handler returned); the end of Run
// stops the others, and a listener added after it is finished at once.
func TestStoppedListenersFinish(t *testing.T) {
	p := NewProcessor(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	blocked := &recorder{gate: make(chan struct{})}
	removed := addListener(t, p, blocked, ListenerConfig{})
	kept := addListener(t, p, &recorder{}, ListenerConfig{})
	p.Distribute([]Notification{addNote(pod("a", "1"), false), addNote(pod("b", "1"), false)}, false)
	require.Eventually(t, func() bool { return removed.Buffered() == 0 && removed.Pending() == 2 }, waitTimeout, time.Millisecond)

	p.Remove(removed)
	assert.False(t, p.IsRegistered(removed))
	assert.Equal(t, 1, p.ListenerCount())
	select {
	case <-removed.Finished():
		t.Fatal("finished while its handler still runs")
	default:
	}
	blocked.gate <- struct{}{}
	select {
	case <-removed.Finished():
	case <-time.After(waitTimeout):
		t.Fatal("a removed listener did not finish")
	}
	assert.Equal(t, []string{"add ns/a@1 initial=false"}, blocked.get(), "delivered after its removal")
	p.Remove(removed) // removing twice does nothing

	cancel()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return")
	}
	select {
	case <-kept.Finished():
	default:
		t.Fatal("a listener still runs after Run returned")
	}
	late := addListener(t, p, &recorder{}, ListenerConfig{})
	select {
	case <-late.Finished():
	default:
		t.Fatal("a listener added to a stopped processor is not finished")
	}
	assert.Equal(t, 0, p.ListenerCount())
}

// TestUnknownBufferIsRejected: NewListener refuses a Buffer it does not
// know.
func TestUnknownBufferIsRejected(t *testing.T) {
	_, err := NewProcessor(Config{}).NewListener(ListenerConfig{Name: "h", Buffer: Buffer(7)})
	require.ErrorContains(t, err, "handler h: unknown buffer 7")
}
