package bench

import (
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	clientcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
)

// Scenario "a handler never stalls the informer": one handler
// is blocked for blockFor while the watch carries blockRate MODIFIED
// events per second; the informer has two more (counting) handlers.
const (
	blockFor  = 2 * time.Second
	blockRate = 10000 // events per second
	blockTick = 10 * time.Millisecond
)

// blockingHandler counts notifications; once blocking is set, the next
// notification blocks until release is closed.
type blockingHandler struct {
	countingHandler
	blocking atomic.Bool
	blocked  chan struct{}
	release  chan struct{}
}

func newBlockingHandler() *blockingHandler {
	return &blockingHandler{blocked: make(chan struct{}), release: make(chan struct{})}
}

func (h *blockingHandler) gate() {
	if h.blocking.CompareAndSwap(true, false) {
		close(h.blocked)
		<-h.release
	}
}

func (h *blockingHandler) OnAdd(obj interface{}, initial bool) {
	h.gate()
	h.countingHandler.OnAdd(obj, initial)
}
func (h *blockingHandler) OnUpdate(old, obj interface{}) {
	h.gate()
	h.countingHandler.OnUpdate(old, obj)
}
func (h *blockingHandler) OnDelete(obj interface{}) { h.gate(); h.countingHandler.OnDelete(obj) }

// BenchmarkBlockedHandler is the issue's "handlers never stall the
// informer" scenario, in process: after a sync of N pods (2,000; 10,000
// with KINFORMER_BENCH_FULL=1), one handler blocks for 2 s while the watch
// carries 10,000 MODIFIED events per second (cycling over the N pods); two
// other handlers count. One op is one pair (kinformer and client-go, in
// alternating order). buffer=unbounded gives kinformer's
// blocked handler the default buffer, buffer=coalesce
// HandlerBufferCoalesceByKey; client-go's (always unbounded) runs beside
// both; the coalescing buffer delivers fewer notifications by design, so
// its rows compare behaviours, not speed. Figures: the rate at which the other handlers received events while
// the one was blocked (others-events/s, the slower of the two) against the
// rate sent (sent-events/s) and their ratio (others/sent, 1 = unchanged);
// the heap the blocked handler's backlog holds at the end of the block
// (backlog-MB: settled heap then, less the settled heap before the block);
// kinformer's count of notifications waiting in the blocked handler's buffer
// (backlog-notes, HandlerBufferReporter); and how many notifications the
// blocked handler received after its release (after-release).
func BenchmarkBlockedHandler(b *testing.B) {
	pods := sizeFor(2000, 10000)
	templates := NewPodList(0, pods, "1000").Items
	events := int(blockFor / time.Second * blockRate)
	rvs := make([]string, events)
	for i := range rvs {
		rvs[i] = strconv.Itoa(1001 + i)
	}
	for _, policy := range []struct {
		name   string
		policy cache.HandlerBufferPolicy
	}{{"unbounded", cache.HandlerBufferUnbounded}, {"coalesce", cache.HandlerBufferCoalesceByKey}} {
		b.Run("buffer="+policy.name, func(b *testing.B) {
			samples := figureSamples{}
			for range b.N {
				// No floor: the floor calls handlers inline.
				for _, side := range sideOrder(SideKinformer, SideClientGo) {
					runBlockedOnce(b, side, policy.policy, templates, rvs, samples)
				}
			}
			samples.report(b)
		})
	}
}

func runBlockedOnce(b *testing.B, side string, policy cache.HandlerBufferPolicy, templates []v1.Pod, rvs []string, samples figureSamples) {
	pods := len(templates)
	lw := NewMemoryLW(pods, 1000)
	others := []*countingHandler{{}, {}}
	blocked := newBlockingHandler()
	var run informerUnderTest
	var backlog func() int
	switch engineOf(side) {
	case SideKinformer:
		inf := cache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
		for _, h := range others {
			if _, err := inf.AddEventHandler(h); err != nil {
				b.Fatal(err)
			}
		}
		reg, err := inf.AddEventHandlerWithOptions(blocked, cache.HandlerOptions{BufferPolicy: policy})
		if err != nil {
			b.Fatal(err)
		}
		backlog = reg.(cache.HandlerBufferReporter).PendingNotifications
		run = informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}
	case SideClientGo:
		inf := clientcache.NewSharedIndexInformer(lw, &v1.Pod{}, 0, clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc})
		for _, h := range append([]clientcache.ResourceEventHandler{others[0], others[1]}, blocked) {
			if _, err := inf.AddEventHandler(h); err != nil {
				b.Fatal(err)
			}
		}
		run = informerUnderTest{run: inf.RunWithContext, synced: inf.HasSyncedChecker().Done()}
	}
	synced := []<-chan struct{}{others[0].arm(pods), others[1].arm(pods), blocked.arm(pods)}
	stop := startInformer(run, lw)
	defer stop()
	defer func() {
		select {
		case <-blocked.release:
		default:
			close(blocked.release)
		}
	}()
	waitSynced(b, run)
	others[0].waitFor(b, synced[0], "initial adds")
	others[1].waitFor(b, synced[1], "initial adds")
	blocked.waitFor(b, synced[2], "initial adds")
	w := waitForWatch(b, lw)

	before := LiveHeap()
	blocked.blocking.Store(true)
	base := [2]int64{others[0].seen.Load(), others[1].seen.Load()}
	blockedBase := blocked.seen.Load()
	start := time.Now()
	if err := sendModifiedPaced(w, templates, rvs, blockRate, blockTick); err != nil {
		b.Fatal(err)
	}
	sent := time.Since(start)
	// The others' rate: events they received until the last was sent, or
	// until they caught up, whichever is later.
	n := int64(len(rvs))
	deadline := time.After(waitTimeout)
	for others[0].seen.Load()-base[0] < n || others[1].seen.Load()-base[1] < n {
		select {
		case <-deadline:
			b.Fatalf("other handlers saw %d and %d of %d events", others[0].seen.Load()-base[0], others[1].seen.Load()-base[1], n)
		case <-time.After(time.Millisecond):
		}
	}
	othersDone := time.Since(start)
	select {
	case <-blocked.blocked:
	default:
		b.Fatal("the blocked handler was never called")
	}
	// Hold the block for the full period.
	if rest := blockFor - time.Since(start); rest > 0 {
		time.Sleep(rest)
	}
	heldBacklog := LiveHeap()
	notes := -1
	if backlog != nil {
		notes = backlog()
	}
	close(blocked.release)
	// After the release, the blocked handler catches up.
	var after int64
	for {
		prev := blocked.seen.Load()
		if backlog != nil && backlog() == 0 || backlog == nil && prev-blockedBase >= n {
			after = blocked.seen.Load() - blockedBase
			break
		}
		select {
		case <-deadline:
			b.Fatalf("the blocked handler did not catch up: %d notifications after release", prev-blockedBase)
		case <-time.After(time.Millisecond):
		}
	}

	samples.add(side, "sent-events/s", float64(n)/sent.Seconds())
	samples.add(side, "others-events/s", float64(n)/max(othersDone, sent).Seconds())
	samples.add(side, "others/sent", sent.Seconds()/max(othersDone, sent).Seconds())
	samples.add(side, "backlog-MB", mibAbove(heldBacklog, before))
	if notes >= 0 {
		samples.add(side, "backlog-notes", float64(notes))
	}
	samples.add(side, "after-release", float64(after))
	runtime.KeepAlive(templates)
}

// sendModifiedPaced sends one MODIFIED event per resource version, cycling
// over the template pods, at rate events per second, in bursts every tick.
func sendModifiedPaced(w *MemoryWatch, templates []v1.Pod, rvs []string, rate int, tick time.Duration) error {
	perTick := int(float64(rate) * tick.Seconds())
	start := time.Now()
	for i, rv := range rvs {
		if i%perTick == 0 && i > 0 {
			if wait := time.Duration(i/perTick)*tick - time.Since(start); wait > 0 {
				time.Sleep(wait)
			}
		}
		p := new(v1.Pod)
		*p = templates[i%len(templates)]
		p.ResourceVersion = rv
		if err := w.Send(watch.Event{Type: watch.Modified, Object: p}); err != nil {
			return err
		}
	}
	return nil
}
