package cache

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	clientcache "k8s.io/client-go/tools/cache"
)

// deltaFIFOSide is a DeltaFIFO and the cache its consumer keeps, driven by
// hand: the queue methods the Reflector calls, and pop, which pops one key,
// applies it and returns the notifications and the cache's resourceVersion
// after it.
type deltaFIFOSide struct {
	replace func(list []interface{}, rv string)
	update  func(obj interface{})
	delete  func(obj interface{})
	resync  func()
	pop     func() (events []string, rv string)
	store   func() []string
}

// ourDeltaFIFOSide wires kinformer's DeltaFIFO, consumer and cache as a
// shared informer with UseDeltaFIFO does.
func ourDeltaFIFOSide(t *testing.T) deltaFIFOSide {
	logger := testLogger(t)
	store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{}, withResourceVersionWatermark(nil))
	queue := newInformerQueue(logger, informerQueueConfig{objectType: &v1.Pod{}, store: store, useDeltaFIFO: true})
	rec := &eventRecorder{}
	applier := newInformerApplier(logger, queue, store, rec, nil)
	return deltaFIFOSide{
		replace: func(list []interface{}, rv string) { require.NoError(t, queue.Replace(list, rv)) },
		update:  func(obj interface{}) { require.NoError(t, queue.Update(obj)) },
		delete:  func(obj interface{}) { require.NoError(t, queue.Delete(obj)) },
		resync:  func() { require.NoError(t, queue.Resync()) },
		pop: func() ([]string, string) {
			before := len(rec.get())
			_, err := queue.Pop(applier.Process)
			require.NoError(t, err)
			return rec.get()[before:], store.LastStoreSyncResourceVersion()
		},
		store: func() []string { return describedStore(store) },
	}
}

// clientGoDeltaFIFOSide is client-go v0.37.2's DeltaFIFO with the consumer
// its informers used before RealFIFO (processDeltas: an update when the key
// is cached, else an add; a delete for Deleted).
func clientGoDeltaFIFOSide(t *testing.T) deltaFIFOSide {
	store := clientcache.NewIndexer(clientcache.DeletionHandlingMetaNamespaceKeyFunc, clientcache.Indexers{})
	queue := clientcache.NewDeltaFIFOWithOptions(clientcache.DeltaFIFOOptions{KnownObjects: store, EmitDeltaTypeReplaced: true})
	rec := &eventRecorder{}
	process := func(obj interface{}, isInInitialList bool) error {
		for _, d := range obj.(clientcache.Deltas) {
			switch d.Type {
			case clientcache.Sync, clientcache.Replaced, clientcache.Added, clientcache.Updated:
				if old, exists, err := store.Get(d.Object); err == nil && exists {
					require.NoError(t, store.Update(d.Object))
					rec.OnUpdate(old, d.Object)
				} else {
					require.NoError(t, store.Add(d.Object))
					rec.OnAdd(d.Object, isInInitialList)
				}
			case clientcache.Deleted:
				require.NoError(t, store.Delete(d.Object))
				rec.OnDelete(d.Object)
			}
		}
		return nil
	}
	return deltaFIFOSide{
		replace: func(list []interface{}, rv string) { require.NoError(t, queue.Replace(list, rv)) },
		update:  func(obj interface{}) { require.NoError(t, queue.Update(obj)) },
		delete:  func(obj interface{}) { require.NoError(t, queue.Delete(obj)) },
		resync:  func() { require.NoError(t, queue.Resync()) },
		pop: func() ([]string, string) {
			before := len(rec.get())
			_, err := queue.Pop(process)
			require.NoError(t, err)
			return rec.get()[before:], store.LastStoreSyncResourceVersion()
		},
		store: func() []string { return describedStore(store) },
	}
}

// deltaFIFOStep is what one step of the script observed: the notifications
// of each pop, the cache's resourceVersion after each pop, and the cache
// at the end of the step.
type deltaFIFOStep struct {
	events [][]string
	rvs    []string
	store  []string
}

// runDeltaFIFOScript drives side through an initial list, watch events, a
// relist that finds a vanished object, and a resync, popping everything
// after each step.
func runDeltaFIFOScript(side deltaFIFOSide) []deltaFIFOStep {
	var steps []deltaFIFOStep
	popAll := func(n int) {
		var step deltaFIFOStep
		for i := 0; i < n; i++ {
			events, rv := side.pop()
			step.events = append(step.events, events)
			step.rvs = append(step.rvs, rv)
		}
		step.store = side.store()
		steps = append(steps, step)
	}
	side.replace([]interface{}{newPod("a", "1"), newPod("b", "2"), newPod("c", "3")}, "3")
	popAll(3)
	side.update(newPod("a", "4"))
	side.update(newPod("d", "5"))
	side.update(newPod("a", "6"))
	side.delete(newPod("b", "7"))
	popAll(3) // a (a@4, a@6), d, b
	side.replace([]interface{}{newPod("a", "6"), newPod("c", "8"), newPod("e", "9")}, "9")
	popAll(4) // a, c, e, then d's deletion
	side.resync()
	popAll(3) // a, c, e
	return steps
}

// TestDeltaFIFOInformerMatchesClientGo: an informer with UseDeltaFIFO
// pops and notifies exactly as client-go's DeltaFIFO with processDeltas
// (the resync's per-key order is map order on both sides, compared as a
// set), and its cache holds the same objects after every pop. Its
// resourceVersion deliberately differs: client-go's store records the
// version of each object it writes, so it runs ahead of what is applied
// (a@6 popped while d@5 is queued), moves backwards (d@5 after a@6, the
// relist's a@6 after b@7, a resync's old objects) and moves during a
// relist; kinformer's is a watermark, which moves only once every change up
// to a version is applied.
func TestDeltaFIFOInformerMatchesClientGo(t *testing.T) {
	want := runDeltaFIFOScript(clientGoDeltaFIFOSide(t))
	got := runDeltaFIFOScript(ourDeltaFIFOSide(t))
	require.Len(t, got, len(want))
	sortResync := func(steps []deltaFIFOStep) [][]string {
		events := append([][]string(nil), steps[3].events...)
		sort.Slice(events, func(i, j int) bool { return events[i][0] < events[j][0] })
		return events
	}
	for i := range want {
		if i == 3 {
			assert.Equal(t, sortResync(want), sortResync(got), "step %d (resync): notifications", i)
		} else {
			assert.Equal(t, want[i].events, got[i].events, "step %d: notifications", i)
		}
		assert.Equal(t, want[i].store, got[i].store, "step %d: cache", i)
	}
	// Sanity: the script does what it claims on client-go.
	require.Equal(t, [][]string{{"add ns/a@1 initial=true"}, {"add ns/b@2 initial=true"}, {"add ns/c@3 initial=true"}}, want[0].events)
	require.Equal(t, [][]string{{"update ns/a@1 -> ns/a@4", "update ns/a@4 -> ns/a@6"}, {"add ns/d@5 initial=false"}, {"delete ns/b@7"}}, want[1].events)
	require.Equal(t, [][]string{
		{"update ns/a@6 -> ns/a@6"}, {"update ns/c@3 -> ns/c@8"}, {"add ns/e@9 initial=false"}, {"delete tombstone(ns/d@5)"},
	}, want[2].events)
	require.Equal(t, []string{"ns/a@6", "ns/c@8", "ns/e@9"}, want[3].store)

	// The resourceVersion after each pop.
	assert.Equal(t, []string{"1", "2", "3"}, want[0].rvs, "client-go: the initial list")
	assert.Equal(t, []string{"", "", "3"}, got[0].rvs, "kinformer: nothing before the whole list is applied")
	assert.Equal(t, []string{"6", "5", "7"}, want[1].rvs, "client-go: a@6 with d@5 queued, then back to 5")
	assert.Equal(t, []string{"4", "6", "7"}, got[1].rvs, "kinformer: a@6 applied, d@5 not yet: 4")
	assert.Equal(t, []string{"6", "8", "9", "9"}, want[2].rvs, "client-go: the relist moves back to 6, and moves while it is applied")
	assert.Equal(t, []string{"7", "7", "7", "9"}, got[2].rvs, "kinformer: the relist moves it once applied")
	assert.Equal(t, []string{"9", "9", "9"}, got[3].rvs, "kinformer: a resync does not move it")
	assert.NotEqual(t, []string{"9", "9", "9"}, want[3].rvs, "client-go: a resync moves it back to old objects' versions")
}
