package cache

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// gatedRecorder is an eventRecorder whose first update of gateName blocks
// until release is closed.
type gatedRecorder struct {
	eventRecorder
	gateName string
	blocked  chan struct{}
	release  chan struct{}
	once     sync.Once
}

func (r *gatedRecorder) OnUpdate(oldObj, newObj interface{}) {
	if newObj.(*v1.Pod).Name == r.gateName {
		r.once.Do(func() {
			close(r.blocked)
			<-r.release
		})
	}
	r.eventRecorder.OnUpdate(oldObj, newObj)
}

// TestCoalescingHandlerInInformerDeliversLatestState: while a coalescing handler is blocked,
// the changes meant for it are merged per object (and its buffer holds one
// entry per object), while a default handler of the same informer gets
// every notification, in order, without waiting for it.
//
// The buffer does not depend on the queue; the RealFIFO (the default) makes
// the order in which notifications reach the listeners exact.
func TestCoalescingHandlerInInformerDeliversLatestState(t *testing.T) {
	for _, q := range queueKinds[:1] {
		t.Run(q.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a")
			srv.Create("b")
			informer := newPodInformer(t, srv, q.useDeltaFIFO, 0)
			all := &eventRecorder{}
			gated := &gatedRecorder{gateName: "a", blocked: make(chan struct{}), release: make(chan struct{})}
			defer func() {
				select {
				case <-gated.release:
				default:
					close(gated.release)
				}
			}()
			allReg, err := informer.AddEventHandler(all)
			require.NoError(t, err)
			gatedReg, err := informer.AddEventHandlerWithOptions(gated, HandlerOptions{BufferPolicy: HandlerBufferCoalesceByKey})
			require.NoError(t, err)
			runInformer(t, informer)
			waitUntilSynced(t, informer.HasSyncedChecker(), allReg.HasSyncedChecker(), gatedReg.HasSyncedChecker())

			srv.Update("a") // a@3: blocks the gated handler
			select {
			case <-gated.blocked:
			case <-time.After(waitTimeout):
				t.Fatal("the gated handler was not called")
			}
			srv.Update("b") // b@4
			srv.Create("c") // c@5
			srv.Update("a") // a@6
			srv.Update("c") // c@7
			srv.Update("b") // b@8
			srv.Delete("c") // c@9
			srv.Create("d") // d@10
			srv.Update("a") // a@11
			srv.Delete("b") // b@12
			srv.Create("b") // b@13
			srv.Update("b") // b@14
			want := []string{
				"add ns/a@1 initial=true",
				"add ns/b@2 initial=true",
				"update ns/a@1 -> ns/a@3",
				"update ns/b@2 -> ns/b@4",
				"add ns/c@5 initial=false",
				"update ns/a@3 -> ns/a@6",
				"update ns/c@5 -> ns/c@7",
				"update ns/b@4 -> ns/b@8",
				"delete ns/c@9",
				"add ns/d@10 initial=false",
				"update ns/a@6 -> ns/a@11",
				"delete ns/b@12",
				"add ns/b@13 initial=false",
				"update ns/b@13 -> ns/b@14",
			}
			// The default handler is not held up by the blocked one.
			assert.Equal(t, want, all.waitN(t, len(want)))
			// Pending for the blocked handler: b (delete + re-creation), a,
			// d (c was added and deleted unseen), plus the update of a in
			// delivery.
			reporter, ok := gatedReg.(HandlerBufferReporter)
			require.True(t, ok)
			require.Eventually(t, func() bool { return reporter.PendingNotifications() == 5 }, waitTimeout, time.Millisecond,
				"pending %d", reporter.PendingNotifications())

			close(gated.release)
			got := gated.waitN(t, 7)
			assert.Equal(t, []string{
				"add ns/a@1 initial=true",
				"add ns/b@2 initial=true",
				"update ns/a@1 -> ns/a@3",
				// Keys in the order they became pending: b first (b@4), a
				// again (a@6), d (d@10); c vanished unseen.
				"delete ns/b@12",
				"add ns/b@14 initial=false",
				"update ns/a@3 -> ns/a@11",
				"add ns/d@10 initial=false",
			}, got)
			require.Eventually(t, func() bool { return reporter.PendingNotifications() == 0 }, waitTimeout, time.Millisecond)
		})
	}
}

// TestHandlerBufferPolicyInvalidIsRejected: an unknown policy is refused.
func TestHandlerBufferPolicyInvalidIsRejected(t *testing.T) {
	srv := fakeapi.NewServer(false)
	informer := newPodInformer(t, srv, false, 0)
	_, err := informer.AddEventHandlerWithOptions(&eventRecorder{}, HandlerOptions{BufferPolicy: HandlerBufferPolicy(7)})
	require.ErrorContains(t, err, "unknown HandlerBufferPolicy 7")
}
