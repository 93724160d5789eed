package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
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
	require.NoError(t, queue.Replace([]interface{}{infPod("a", "1"), noKey, infPod("b", "2")}, "3"))

	var info ReplacedAllInfo
	rec := &infRecorder{}
	applier := newInformerApplier(klog.Background(), queue, store, rec, nil)
	require.NoError(t, queue.PopBatch(applier.processBatch, func(obj interface{}, initial bool) error {
		info = obj.(Deltas)[0].Object.(ReplacedAllInfo)
		// The keys the queue computed, with a key changed so that the
		// test sees which one the store uses.
		info.keys[2] = "ns/b-as-the-queue-keyed-it"
		return applier.process(Deltas{{Type: ReplacedAll, Object: info}}, initial)
	}))
	assert.Equal(t, []string{"ns/a", "", "ns/b-as-the-queue-keyed-it"}, info.keys)
	assert.ElementsMatch(t, []string{"ns/a", "ns/b-as-the-queue-keyed-it"}, store.ListKeys(), "the store took the queue's keys")
	assert.Equal(t, int64(1), applier.rejected.Load(), "the object without a key was keyed by the store, and rejected")

	// A queue built by a caller keeps no keys.
	plain := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, KeyFunction: MetaNamespaceKeyFunc})
	require.NoError(t, plain.Replace([]interface{}{infPod("a", "1")}, "1"))
	require.NoError(t, plain.PopBatch(func([]Delta, bool) error { return nil }, func(obj interface{}, _ bool) error {
		assert.Nil(t, obj.(Deltas)[0].Object.(ReplacedAllInfo).keys)
		return nil
	}))

	// With a transform between queue and store the applier keys objects itself.
	store2 := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{}, withResourceVersionWatermark(nil))
	applier2 := newInformerApplier(klog.Background(), queue, store2, rec, func(obj interface{}) (interface{}, error) { return obj, nil })
	require.NoError(t, applier2.process(Deltas{{Type: ReplacedAll, Object: info}}, true))
	assert.ElementsMatch(t, []string{"ns/a", "ns/b"}, store2.ListKeys())
}
