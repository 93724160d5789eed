package queue

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"
)

func TestSyncGate(t *testing.T) {
	t.Run("a change before any list syncs at once", func(t *testing.T) {
		var g SyncGate
		g.Init()
		assert.False(t, g.IsDone())
		g.MarkPopulated()
		assert.True(t, g.IsDone())
		<-g.Done()
		g.FirstReplace(3)
		assert.Equal(t, 0, g.Pending(), "a later list has no initial batch")
	})
	t.Run("the first list sets the initial batch", func(t *testing.T) {
		var g SyncGate
		g.Init()
		g.FirstReplace(3)
		g.MarkPopulated()
		g.Consumed(2)
		assert.False(t, g.IsDone())
		assert.Equal(t, 1, g.Pending())
		g.Consumed(5)
		assert.True(t, g.IsDone())
		assert.Equal(t, 0, g.Pending())
	})
	t.Run("an empty first list syncs at once", func(t *testing.T) {
		var g SyncGate
		g.Init()
		g.FirstReplace(0)
		assert.True(t, g.IsDone())
	})
}

// newReal returns an atomic Real over changeOps, keyed by podKey.
func newReal(reuse bool) *Real[change, changeOps] {
	r := &Real[change, changeOps]{}
	r.Configure(RealConfig{Logger: klog.Background(), KeyFunc: podKey, Atomic: true, Bookmarks: true, ReusePopBuffers: reuse})
	return r
}

func TestRealPopBatchRuns(t *testing.T) {
	r := newReal(true)
	require.NoError(t, r.Change(Added, pod("a", "1")))
	require.NoError(t, r.Change(Updated, pod("b", "2")))
	require.NoError(t, r.Change(Updated, pod("a", "3"))) // same key: ends the run
	r.Bookmark("4")                                      // atomic kind: popped alone
	require.NoError(t, r.Change(Deleted, tombstone{key: "ns/c"}))

	var got []string
	batch := func(ds []change, _ bool) error {
		s := "batch"
		for i, d := range ds {
			s += " " + describe(d.obj) + "=" + r.PoppedKeys(ds)[i]
		}
		got = append(got, s)
		return nil
	}
	single := func(obj any, _ bool) error {
		ds := obj.(changes)
		got = append(got, "single "+describe(ds[0].obj)+"="+r.PoppedKeys(ds)[0])
		return nil
	}
	for r.Len() > 0 {
		require.NoError(t, r.PopBatch(batch, single))
	}
	assert.Equal(t, []string{
		"batch ns/a@1=ns/a ns/b@2=ns/b",
		"single ns/a@3=ns/a",
		"single bookmark@4:false=",
		"single tombstone(ns/c)=ns/c",
	}, got)
	assert.Nil(t, r.PoppedKeys([]change{{Added, pod("a", "1")}}), "outside a pop there are no keys")

	r.Close()
	assert.ErrorIs(t, r.PopBatch(batch, single), errClosed)
	_, err := r.Pop(single)
	assert.ErrorIs(t, err, errClosed)
}

// TestRealReusedPopsDoNotAllocate: with ReusePopBuffers, a change and its
// pop allocate nothing (the boxing of the list of one is done once), given
// a key function that does not allocate.
func TestRealReusedPopsDoNotAllocate(t *testing.T) {
	r := &Real[change, changeOps]{}
	r.Configure(RealConfig{
		Logger: klog.Background(), Atomic: true, ReusePopBuffers: true,
		KeyFunc: func(any) (string, error) { return "ns/a", nil },
	})
	p := pod("a", "1")
	batch := func([]change, bool) error { return nil }
	single := func(any, bool) error { return nil }
	require.NoError(t, r.Change(Updated, p))
	require.NoError(t, r.PopBatch(batch, single))
	allocs := testing.AllocsPerRun(100, func() {
		_ = r.Change(Updated, p)
		_ = r.PopBatch(batch, single)
	})
	assert.Equal(t, 0.0, allocs)
}

func TestRealRefusedDeletionQueuesTombstone(t *testing.T) {
	r := &Real[change, changeOps]{}
	r.Configure(RealConfig{
		Logger: klog.Background(), KeyFunc: podKey, Atomic: true,
		Transform: func(any) (any, error) { return nil, errRefused },
	})
	assert.ErrorIs(t, r.Change(Added, pod("a", "1")), errRefused)
	require.NoError(t, r.Change(Deleted, pod("a", "2")))
	obj, err := r.Pop(func(any, bool) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, changes{{Deleted, tombstone{key: "ns/a"}}}, obj)
}

func TestKeyedCoalescesDeletionsAndTracksWatermark(t *testing.T) {
	var marks [][2]string
	k := &Keyed[change, changeOps]{}
	k.Configure(KeyedConfig{
		Logger: klog.Background(), KeyFunc: podKey, Replaced: true, Watermark: true,
		Lists: Lists{SetWatermark: func(rv string, reset bool) {
			marks = append(marks, [2]string{rv, map[bool]string{true: "reset", false: "advance"}[reset]})
		}},
	})
	require.NoError(t, k.Replace(nil, "5"))
	assert.Equal(t, [][2]string{{"5", "reset"}}, marks, "an empty list moves the watermark at once")
	assert.True(t, k.Synced())

	require.NoError(t, k.Change(Added, pod("a", "10")))
	require.NoError(t, k.Change(Added, pod("b", "11")))
	require.NoError(t, k.Change(Updated, pod("a", "12")))
	require.NoError(t, k.Delete(tombstone{key: "ns/a", obj: pod("a", "12")}))
	require.NoError(t, k.Delete(pod("a", "13")))
	assert.Equal(t, []string{"ns/a", "ns/b"}, k.QueuedKeys())

	var popped []string
	pop := func() {
		_, err := k.Pop(func(obj any, _ bool) error {
			s := ""
			for _, d := range obj.(changes) {
				s += describe(d.obj) + " "
			}
			rv, reset := k.PoppedWatermark()
			popped = append(popped, s+"wm="+rv+map[bool]string{true: " reset"}[reset])
			return nil
		})
		require.NoError(t, err)
	}
	pop()
	pop()
	assert.Equal(t, []string{
		// the watch deletion replaces the tombstone; b@11 still queued holds the mark at 10
		"ns/a@10 ns/a@12 ns/a@13 wm=10",
		"ns/b@11 wm=13",
	}, popped)
	assert.True(t, k.Settled())
	k.Close()
	_, err := k.Pop(func(any, bool) error { return errors.New("not called") })
	assert.ErrorIs(t, err, errClosed)
}
