package cache

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// TestInformerQueueHandsListKeysToTheApplier: the RealFIFO an informer
// builds keeps the key it computed for each object of a whole list in the
// ReplacedAll delta, and the informer's applier stores each object under
// that key instead of computing it again (an object without a key is keyed
// by the store, and rejected there). A queue built by a caller, and an
// applier with a transform between queue and store, do not take this path.
func TestInformerQueueHandsListKeysToTheApplier(t *testing.T) {
	store := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{}, withResourceVersionWatermark(nil))
	queue := newInformerQueue(klog.Background(), informerQueueConfig{objectType: &v1.Pod{}, store: store}).(*RealFIFO)
	noKey := "not an object"
	require.NoError(t, queue.Replace([]interface{}{newPod("a", "1"), noKey, newPod("b", "2")}, "3"))

	var info ReplacedAllInfo
	rec := &eventRecorder{}
	applier := newInformerApplier(klog.Background(), queue, store, rec, nil)
	require.NoError(t, queue.PopBatch(applier.ProcessBatch, func(obj interface{}, initial bool) error {
		info = obj.(Deltas)[0].Object.(ReplacedAllInfo)
		// The keys the queue computed, with a key changed so that the
		// test sees which one the store uses.
		info.keys[2] = "ns/b-as-the-queue-keyed-it"
		return applier.Process(Deltas{{Type: ReplacedAll, Object: info}}, initial)
	}))
	assert.Equal(t, []string{"ns/a", "", "ns/b-as-the-queue-keyed-it"}, info.keys)
	assert.ElementsMatch(t, []string{"ns/a", "ns/b-as-the-queue-keyed-it"}, store.ListKeys(), "the store took the queue's keys")
	assert.Equal(t, int64(1), applier.Rejected(), "the object without a key was keyed by the store, and rejected")

	// A queue built by a caller keeps no keys.
	plain := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, KeyFunction: MetaNamespaceKeyFunc})
	require.NoError(t, plain.Replace([]interface{}{newPod("a", "1")}, "1"))
	require.NoError(t, plain.PopBatch(func([]Delta, bool) error { return nil }, func(obj interface{}, _ bool) error {
		assert.Nil(t, obj.(Deltas)[0].Object.(ReplacedAllInfo).keys)
		return nil
	}))

	// With a transform between queue and store the applier keys objects itself.
	store2 := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{}, withResourceVersionWatermark(nil))
	applier2 := newInformerApplier(klog.Background(), queue, store2, rec, func(obj interface{}) (interface{}, error) { return obj, nil })
	require.NoError(t, applier2.Process(Deltas{{Type: ReplacedAll, Object: info}}, true))
	assert.ElementsMatch(t, []string{"ns/a", "ns/b"}, store2.ListKeys())
}

// TestInformerAppliesAListWhoseObjectAUserIndexFunctionFailsOn: an index
// function that fails on one object neither empties the initial list nor
// keeps the pre-relist cache. The object is stored and delivered, left out
// of the failing index and counted; the rest of the list is applied, the
// watermark is the list's version, and later watch events apply as usual.
// (client-go panics here; kinformer's documented difference is that it does
// not.)
func TestInformerAppliesAListWhoseObjectAUserIndexFunctionFailsOn(t *testing.T) {
	failsOnBad := func(obj interface{}) ([]string, error) {
		pod := obj.(*v1.Pod)
		if pod.Name == "bad" {
			return nil, errors.New("no value for bad")
		}
		return []string{pod.Name}, nil
	}
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a")   // 1
			srv.Create("bad") // 2
			srv.Create("b")   // 3
			t.Cleanup(srv.StopWatches)
			informer := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, SharedIndexInformerOptions{
				Indexers:     Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "name": failsOnBad},
				UseDeltaFIFO: q.useDeltaFIFO,
			}).(*sharedIndexInformer)
			rec := &eventRecorder{}
			reg, err := informer.AddEventHandler(rec)
			require.NoError(t, err)
			runInformer(t, informer)
			waitUntilSynced(t, reg.HasSyncedChecker())

			got := rec.waitN(t, 3)
			want := []string{"add ns/a@1 initial=true", "add ns/bad@2 initial=true", "add ns/b@3 initial=true"}
			assert.ElementsMatch(t, want, got)
			assert.Equal(t, []string{"ns/a@1", "ns/b@3", "ns/bad@2"}, describedStore(informer.GetStore()))
			assert.Equal(t, "3", informer.LastSyncResourceVersion())
			indexer := informer.GetIndexer()
			byName, err := indexer.IndexKeys("name", "a")
			require.NoError(t, err)
			assert.Equal(t, []string{"ns/a"}, byName)
			assert.ElementsMatch(t, []string{"a", "b"}, indexer.ListIndexFuncValues("name"))
			byNS, err := indexer.IndexKeys(NamespaceIndex, "ns")
			require.NoError(t, err)
			assert.Equal(t, []string{"ns/a", "ns/b", "ns/bad"}, byNS)
			assert.Equal(t, int64(1), informer.applier.Unindexed())

			// A relist that finds a gone: the relist is applied, bad kept.
			srv.DeleteMissed("a") // 4
			srv.Expire()
			require.Eventually(t, func() bool {
				return assert.ObjectsAreEqual([]string{"ns/b@3", "ns/bad@2"}, describedStore(informer.GetStore()))
			}, waitTimeout, time.Millisecond, "the relist is applied")
			assert.Equal(t, "4", informer.LastSyncResourceVersion())
			got = rec.waitN(t, 4)
			assert.Contains(t, got[3:], "delete tombstone(ns/a@1)")
			assert.Equal(t, int64(2), informer.applier.Unindexed())

			// A watch event for the bad object stores it too.
			srv.Update("bad") // 5
			require.Eventually(t, func() bool {
				return assert.ObjectsAreEqual([]string{"ns/b@3", "ns/bad@5"}, describedStore(informer.GetStore()))
			}, waitTimeout, time.Millisecond, "the update is applied")
			assert.Equal(t, int64(3), informer.applier.Unindexed())
		})
	}
}
