package cache

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
)

func addNote(obj interface{}, initial bool) notification {
	return notification{kind: notifyAdd, initial: initial, newObj: obj}
}

func updateNote(old, obj interface{}) notification {
	return notification{kind: notifyUpdate, oldObj: old, newObj: obj}
}

func deleteNote(obj interface{}) notification {
	return notification{kind: notifyDelete, oldObj: obj}
}

func tombstoneOf(name string) DeletedFinalStateUnknown {
	return DeletedFinalStateUnknown{Key: "ns/" + name}
}

// describeNotes renders notifications as infRecorder does.
func describeNotes(notes []notification) []string {
	var out []string
	for _, n := range notes {
		switch n.kind {
		case notifyAdd:
			out = append(out, fmt.Sprintf("add %s initial=%v", infDescribe(n.newObj), n.initial))
		case notifyUpdate:
			out = append(out, fmt.Sprintf("update %s -> %s", infDescribe(n.oldObj), infDescribe(n.newObj)))
		case notifyDelete:
			out = append(out, "delete "+infDescribe(n.oldObj))
		}
	}
	return out
}

// TestCoalescingBufferMergeRules: the merge rules of HandlerBufferCoalesceByKey,
// one case per rule, each with the exact notifications delivered.
func TestCoalescingBufferMergeRules(t *testing.T) {
	p := infPod
	cases := []struct {
		name    string
		in      []notification
		want    []string
		dropped int // initial adds merged away
	}{
		{"add then updates: one add of the newest state",
			[]notification{addNote(p("a", "1"), true), updateNote(p("a", "1"), p("a", "2")), updateNote(p("a", "2"), p("a", "3"))},
			[]string{"add ns/a@3 initial=true"}, 0},
		{"updates: from the state the handler knew to the newest",
			[]notification{updateNote(p("a", "1"), p("a", "2")), updateNote(p("a", "2"), p("a", "3"))},
			[]string{"update ns/a@1 -> ns/a@3"}, 0},
		{"add then delete, never delivered: nothing",
			[]notification{addNote(p("b", "1"), false), updateNote(p("b", "1"), p("b", "2")), deleteNote(p("b", "2"))},
			nil, 0},
		{"initial add then delete: nothing, counted for HasSynced",
			[]notification{addNote(p("b", "1"), true), deleteNote(p("b", "1"))},
			nil, 1},
		{"update then delete: the delete with the last known object",
			[]notification{updateNote(p("c", "1"), p("c", "2")), deleteNote(p("c", "2"))},
			[]string{"delete ns/c@2"}, 0},
		{"update then relist deletion: the tombstone stays deliverable",
			[]notification{updateNote(p("d", "1"), p("d", "2")), deleteNote(DeletedFinalStateUnknown{Key: "ns/d", Obj: p("d", "2")})},
			[]string{"delete tombstone(ns/d@2)"}, 0},
		{"tombstone then real delete: the real final state",
			[]notification{deleteNote(tombstoneOf("g")), deleteNote(p("g", "4"))},
			[]string{"delete ns/g@4"}, 0},
		{"real delete then tombstone: the real final state",
			[]notification{deleteNote(p("g", "4")), deleteNote(tombstoneOf("g"))},
			[]string{"delete ns/g@4"}, 0},
		{"delete then re-creation: both, the add merged with its updates",
			[]notification{deleteNote(p("e", "1")), addNote(p("e", "2"), false), updateNote(p("e", "2"), p("e", "3"))},
			[]string{"delete ns/e@1", "add ns/e@3 initial=false"}, 0},
		{"delete, re-creation, delete: the first delete only",
			[]notification{deleteNote(p("f", "1")), addNote(p("f", "2"), false), deleteNote(p("f", "2"))},
			[]string{"delete ns/f@1"}, 0},
		{"keys in the order they became pending",
			[]notification{updateNote(p("x", "1"), p("x", "2")), addNote(p("y", "3"), false), updateNote(p("x", "2"), p("x", "4")), deleteNote(p("z", "5")), updateNote(p("y", "3"), p("y", "6"))},
			[]string{"update ns/x@1 -> ns/x@4", "add ns/y@6 initial=false", "delete ns/z@5"}, 0},
		{"a key without a usable key is queued on its own",
			[]notification{addNote("not an object", false), addNote("not an object", false)},
			[]string{"add string initial=false", "add string initial=false"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newCoalescingBuffer()
			dropped := 0
			for _, n := range tc.in {
				b.add(n, func(notification) { dropped++ })
			}
			var got []notification
			for b.head != nil {
				got = b.popFront(got)
			}
			assert.Equal(t, tc.want, describeNotes(got))
			assert.Equal(t, tc.dropped, dropped)
			assert.Equal(t, 0, b.notes)
			assert.Empty(t, b.entries)
		})
	}
}

// TestCoalescingBufferStaysBoundedByKeys: however many notifications arrive for a
// fixed set of objects, the buffer holds one entry per object.
func TestCoalescingBufferStaysBoundedByKeys(t *testing.T) {
	b := newCoalescingBuffer()
	for i := 0; i < 10000; i++ {
		name := fmt.Sprintf("p%d", i%10)
		b.add(updateNote(infPod(name, fmt.Sprint(i)), infPod(name, fmt.Sprint(i+1))), func(notification) {})
	}
	assert.Equal(t, 10, b.notes)
	assert.Len(t, b.entries, 10)
	got := b.popFront(nil)
	assert.Equal(t, []string{"update ns/p0@0 -> ns/p0@9991"}, describeNotes(got))
}

// gatedRecorder is an infRecorder whose first update of gateName blocks
// until release is closed.
type gatedRecorder struct {
	infRecorder
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
	r.infRecorder.OnUpdate(oldObj, newObj)
}

// TestCoalescingHandlerInInformerDeliversLatestState: while a coalescing handler is blocked,
// the changes meant for it are merged per object (and its buffer holds one
// entry per object), while a default handler of the same informer gets
// every notification, in order, without waiting for it.
//
// The buffer does not depend on the queue; the RealFIFO (the default) makes
// the order in which notifications reach the listeners exact.
func TestCoalescingHandlerInInformerDeliversLatestState(t *testing.T) {
	for _, q := range infQueueKinds[:1] {
		t.Run(q.name, func(t *testing.T) {
			srv := newInfServer()
			srv.create("a")
			srv.create("b")
			informer := infNewInformer(t, srv, q.useDeltaFIFO, 0)
			all := &infRecorder{}
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
			infRunInformer(t, informer)
			infWaitSynced(t, informer.HasSyncedChecker(), allReg.HasSyncedChecker(), gatedReg.HasSyncedChecker())

			srv.update("a") // a@3: blocks the gated handler
			select {
			case <-gated.blocked:
			case <-time.After(infTimeout):
				t.Fatal("the gated handler was not called")
			}
			srv.update("b") // b@4
			srv.create("c") // c@5
			srv.update("a") // a@6
			srv.update("c") // c@7
			srv.update("b") // b@8
			srv.remove("c") // c@9
			srv.create("d") // d@10
			srv.update("a") // a@11
			srv.remove("b") // b@12
			srv.create("b") // b@13
			srv.update("b") // b@14
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
			require.Eventually(t, func() bool { return reporter.PendingNotifications() == 5 }, infTimeout, time.Millisecond,
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
			require.Eventually(t, func() bool { return reporter.PendingNotifications() == 0 }, infTimeout, time.Millisecond)
		})
	}
}

// TestHandlerBufferPolicyInvalidIsRejected: an unknown policy is refused.
func TestHandlerBufferPolicyInvalidIsRejected(t *testing.T) {
	srv := newInfServer()
	informer := infNewInformer(t, srv, false, 0)
	_, err := informer.AddEventHandlerWithOptions(&infRecorder{}, HandlerOptions{BufferPolicy: HandlerBufferPolicy(7)})
	require.ErrorContains(t, err, "unknown HandlerBufferPolicy 7")
}
