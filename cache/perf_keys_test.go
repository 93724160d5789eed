package cache

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pfCountingKeyFunc is DeletionHandlingMetaNamespaceKeyFunc counting its
// calls.
type pfCountingKeyFunc struct{ calls atomic.Int64 }

func (k *pfCountingKeyFunc) fn(obj interface{}) (string, error) {
	k.calls.Add(1)
	return DeletionHandlingMetaNamespaceKeyFunc(obj)
}

func TestRealFIFOPopHandsOutComputedKeys(t *testing.T) {
	// The queue as a shared informer builds it: only its reused buffers
	// carry keys.
	f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true, EmitDeltaTypeBookmark: true, reusePopBuffers: true})
	for _, name := range []string{"a", "b", "c"} {
		require.NoError(t, f.Add(infPod(name, "1")))
	}
	var gotBatch, gotCopy []string
	err := f.PopBatch(func(deltas []Delta, _ bool) error {
		gotBatch = append([]string(nil), f.poppedKeys(deltas)...)
		gotCopy = f.poppedKeys(append([]Delta(nil), deltas...))
		return nil
	}, func(interface{}, bool) error {
		t.Fatal("expected one batch of three")
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/a", "ns/b", "ns/c"}, gotBatch)
	assert.Nil(t, gotCopy, "a slice that is not the queue's buffer has no keys")

	require.NoError(t, f.Delete(DeletedFinalStateUnknown{Key: "ns/z", Obj: infPod("z", "1")}))
	var gotSingle []string
	err = f.PopBatch(func([]Delta, bool) error {
		t.Fatal("expected a single delta")
		return nil
	}, func(obj interface{}, _ bool) error {
		gotSingle = append([]string(nil), f.poppedKeys(obj.(Deltas))...)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/z"}, gotSingle)

	require.NoError(t, f.Bookmark("7"))
	err = f.PopBatch(nil, func(obj interface{}, _ bool) error {
		assert.Equal(t, []string{""}, f.poppedKeys(obj.(Deltas)), "atomic kinds have no key")
		return nil
	})
	require.NoError(t, err)
	assert.Nil(t, f.poppedKeys(Deltas{{Added, infPod("a", "1")}}), "outside a pop there are no keys")
}

func TestStoreTransactionUsesGivenKeys(t *testing.T) {
	kf := &pfCountingKeyFunc{}
	c := NewIndexer(kf.fn, Indexers{NamespaceIndex: MetaNamespaceIndexFunc}).(*cache)
	a1, a2, b1 := infPod("a", "1"), infPod("a", "2"), infPod("b", "1")
	require.NoError(t, c.Add(a1))
	kf.calls.Store(0)

	txns := []Transaction{
		{Type: TransactionTypeUpdate, Object: a2},
		{Type: TransactionTypeUpdate, Object: b1},
		{Type: TransactionTypeDelete, Object: a2},
	}
	prev := make([]interface{}, len(txns))
	require.Nil(t, c.transactionWithKeys(txns, []string{"ns/a", "ns/b", "ns/a"}, prev))
	assert.Equal(t, int64(0), kf.calls.Load(), "known keys are not computed again")
	assert.Equal(t, []TransactionType{TransactionTypeUpdate, TransactionTypeAdd, TransactionTypeDelete},
		[]TransactionType{txns[0].Type, txns[1].Type, txns[2].Type})
	assert.Equal(t, []interface{}{a1, nil, a2}, prev)
	assert.Equal(t, []string{"ns/b@1"}, infStoreContents(c))
	byNS, err := c.ByIndex(NamespaceIndex, "ns")
	require.NoError(t, err)
	assert.Equal(t, []interface{}{b1}, byNS)

	// Keys of the wrong length are ignored: the store computes them.
	txns = []Transaction{{Type: TransactionTypeUpdate, Object: a1}}
	require.Nil(t, c.transactionWithKeys(txns, []string{"x", "y"}, make([]interface{}, 1)))
	assert.Equal(t, int64(1), kf.calls.Load())
	assert.Equal(t, []string{"ns/a@1", "ns/b@1"}, infStoreContents(c))

	old, existed, err := c.updateKeyedWithPrevious("ns/a", a2)
	require.NoError(t, err)
	assert.True(t, existed)
	assert.Same(t, a1, old)
	c.deleteKeyed("ns/b", b1)
	assert.Equal(t, int64(1), kf.calls.Load())
	assert.Equal(t, []string{"ns/a@2"}, infStoreContents(c))
}

func TestDeltaApplierReusesQueueKeys(t *testing.T) {
	a1, a2, b1 := infPod("a", "1"), infPod("a", "2"), infPod("b", "1")
	deltas := []Delta{{Updated, a2}, {Added, b1}, {Deleted, a2}}
	keys := []string{"ns/a", "ns/b", "ns/a"}
	want := []string{"update ns/a@1 -> ns/a@2", "add ns/b@1 initial=false", "delete ns/a@2"}
	for _, batch := range []bool{false, true} {
		kf := &pfCountingKeyFunc{}
		store := NewIndexer(kf.fn, Indexers{})
		require.NoError(t, store.Add(a1))
		kf.calls.Store(0)
		rec := &infRecorder{}
		a := newDeltaApplier(infTestLogger(t), store, rec)
		a.keysOf = func(ds []Delta) []string {
			if len(ds) == len(deltas) {
				return keys
			}
			return nil
		}
		if batch {
			require.NoError(t, a.processBatch(deltas, false))
		} else {
			require.NoError(t, a.process(Deltas(deltas), false))
		}
		assert.Equal(t, want, rec.get())
		assert.Equal(t, []string{"ns/b@1"}, infStoreContents(store))
		assert.Equal(t, int64(0), kf.calls.Load(), "batch=%v: the queue's keys are reused", batch)
	}
}

func TestReplaceAllComputesEachKeyOnce(t *testing.T) {
	kf := &pfCountingKeyFunc{}
	store := NewIndexer(kf.fn, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	rec := &infRecorder{}
	a := newDeltaApplier(infTestLogger(t), store, rec)

	list := []interface{}{infPod("a", "1"), infPod("b", "1"), infPod("c", "1")}
	require.NoError(t, a.process(Deltas{{ReplacedAll, ReplacedAllInfo{ResourceVersion: "1", Objects: list}}}, true))
	assert.Equal(t, int64(3), kf.calls.Load(), "one key computation per listed object")
	assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/b@1 initial=true", "add ns/c@1 initial=true"}, rec.get())
	assert.Equal(t, "1", store.LastStoreSyncResourceVersion())

	kf.calls.Store(0)
	relist := []interface{}{infPod("c", "2"), infPod("d", "2")}
	require.NoError(t, a.process(Deltas{{ReplacedAll, ReplacedAllInfo{ResourceVersion: "2", Objects: relist}}}, false))
	assert.Equal(t, int64(2), kf.calls.Load())
	assert.Equal(t, []string{
		"delete tombstone(ns/a@1)", "delete tombstone(ns/b@1)",
		"update ns/c@1 -> ns/c@2", "add ns/d@2 initial=false",
	}, rec.get()[3:])
	assert.Equal(t, []string{"ns/c@2", "ns/d@2"}, infStoreContents(store))
	byNS, err := store.IndexKeys(NamespaceIndex, "ns")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/c", "ns/d"}, byNS)
}
