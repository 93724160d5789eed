package cache

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// newNonAtomicRealFIFO builds a non-atomic RealFIFO keyed by fakeObjKey.
func newNonAtomicRealFIFO(known KeyListerGetter) *RealFIFO {
	return NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, KnownObjects: known})
}

// newAtomicRealFIFO builds an atomic RealFIFO keyed by fakeObjKey that emits bookmarks.
func newAtomicRealFIFO() *RealFIFO {
	return NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, AtomicEvents: true, EmitDeltaTypeBookmark: true})
}

// drainDeltas drains q and concatenates the popped Deltas.
func drainDeltas(t *testing.T, q Queue) Deltas {
	t.Helper()
	out := Deltas{}
	for _, d := range drainAccumulators(t, q) {
		out = append(out, d...)
	}
	return out
}

// poppedBatch is one PopBatch call as seen by the consumer.
type poppedBatch struct {
	single  bool
	deltas  []Delta
	initial bool
}

// popOneBatch calls PopBatch once, copying what the consumer receives.
func popOneBatch(t *testing.T, f *RealFIFO) (poppedBatch, error) {
	t.Helper()
	var got poppedBatch
	watchdog := time.AfterFunc(5*time.Second, f.Close)
	defer watchdog.Stop()
	err := f.PopBatch(func(deltas []Delta, initial bool) error {
		got = poppedBatch{deltas: append([]Delta(nil), deltas...), initial: initial}
		return nil
	}, func(obj interface{}, initial bool) error {
		d := obj.(Deltas)
		require.Len(t, d, 1)
		got = poppedBatch{single: true, deltas: []Delta{d[0]}, initial: initial}
		return nil
	})
	return got, err
}

func TestRealFIFO_DeliversEveryChangeInOrder(t *testing.T) {
	f := newNonAtomicRealFIFO(newKnownStore())
	require.NoError(t, f.Add(newFakeObj("foo", 10)))
	require.NoError(t, f.Add(newFakeObj("bar", 1)))
	require.NoError(t, f.Update(newFakeObj("foo", 11)))
	require.NoError(t, f.Delete(newFakeObj("foo", 12)))
	require.NoError(t, f.Delete(newFakeObj("foo", 12)))  // no dedup
	require.NoError(t, f.Delete(newFakeObj("never", 1))) // no existence check
	obj, _ := popOne(t, f)
	assert.Equal(t, Deltas{{Added, newFakeObj("foo", 10)}}, obj)
	require.NoError(t, f.Add(newFakeObj("foo", 14)))
	assert.Equal(t, Deltas{
		{Added, newFakeObj("bar", 1)},
		{Updated, newFakeObj("foo", 11)},
		{Deleted, newFakeObj("foo", 12)},
		{Deleted, newFakeObj("foo", 12)},
		{Deleted, newFakeObj("never", 1)},
		{Added, newFakeObj("foo", 14)},
	}, drainDeltas(t, f))
}

func TestRealFIFO_ReplaceNonAtomic(t *testing.T) {
	tests := []struct {
		name   string
		known  []fakeObj
		before func(t *testing.T, f *RealFIFO)
		list   []interface{}
		want   Deltas
	}{
		{
			name:  "known keys missing from the list are deleted first",
			known: []fakeObj{newFakeObj("foo", 5), newFakeObj("bar", 6), newFakeObj("baz", 7)},
			list:  []interface{}{newFakeObj("foo", 5)},
			want: Deltas{
				{Deleted, tombstoneOf("bar", newFakeObj("bar", 6))},
				{Deleted, tombstoneOf("baz", newFakeObj("baz", 7))},
				{Replaced, newFakeObj("foo", 5)},
			},
		},
		{
			name: "queued object missing from the list",
			before: func(t *testing.T, f *RealFIFO) {
				require.NoError(t, f.Add(newFakeObj("foo", 2)))
			},
			want: Deltas{{Added, newFakeObj("foo", 2)}, {Deleted, tombstoneOf("foo", newFakeObj("foo", 2))}},
		},
		{
			name: "queued deletion is not repeated",
			before: func(t *testing.T, f *RealFIFO) {
				require.NoError(t, f.Add(newFakeObj("foo", 2)))
				require.NoError(t, f.Delete(newFakeObj("foo", 2)))
			},
			want: Deltas{{Added, newFakeObj("foo", 2)}, {Deleted, newFakeObj("foo", 2)}},
		},
		{
			name: "tombstone carries the newest queued object",
			before: func(t *testing.T, f *RealFIFO) {
				require.NoError(t, f.Add(newFakeObj("foo", 2)))
				require.NoError(t, f.Delete(newFakeObj("foo", 2)))
				require.NoError(t, f.Add(newFakeObj("foo", 3)))
			},
			want: Deltas{
				{Added, newFakeObj("foo", 2)}, {Deleted, newFakeObj("foo", 2)}, {Added, newFakeObj("foo", 3)},
				{Deleted, tombstoneOf("foo", newFakeObj("foo", 3))},
			},
		},
		{
			name: "repeated replaces delete once",
			before: func(t *testing.T, f *RealFIFO) {
				require.NoError(t, f.Add(newFakeObj("foo", 2)))
				require.NoError(t, f.Replace([]interface{}{newFakeObj("foo", 2)}, "1"))
				require.NoError(t, f.Replace([]interface{}{}, "2"))
			},
			want: Deltas{
				{Added, newFakeObj("foo", 2)}, {Replaced, newFakeObj("foo", 2)},
				{Deleted, tombstoneOf("foo", newFakeObj("foo", 2))},
			},
		},
		{
			name:  "queued keys before known keys, each in its own order",
			known: []fakeObj{newFakeObj("a", 1), newFakeObj("q2", 1), newFakeObj("z", 1)},
			before: func(t *testing.T, f *RealFIFO) {
				require.NoError(t, f.Update(newFakeObj("q2", 2)))
				require.NoError(t, f.Update(newFakeObj("q1", 2)))
				require.NoError(t, f.Update(newFakeObj("q2", 3)))
			},
			list: []interface{}{newFakeObj("keep", 1)},
			want: Deltas{
				{Updated, newFakeObj("q2", 2)}, {Updated, newFakeObj("q1", 2)}, {Updated, newFakeObj("q2", 3)},
				{Deleted, tombstoneOf("q2", newFakeObj("q2", 3))},
				{Deleted, tombstoneOf("q1", newFakeObj("q1", 2))},
				{Deleted, tombstoneOf("a", newFakeObj("a", 1))},
				{Deleted, tombstoneOf("z", newFakeObj("z", 1))},
				{Replaced, newFakeObj("keep", 1)},
			},
		},
		{
			name:  "delete queued before a replace listing the object again",
			known: []fakeObj{newFakeObj("foo", 1)},
			before: func(t *testing.T, f *RealFIFO) {
				require.NoError(t, f.Delete(newFakeObj("foo", 1)))
			},
			list: []interface{}{newFakeObj("foo", 2)},
			want: Deltas{{Deleted, newFakeObj("foo", 1)}, {Replaced, newFakeObj("foo", 2)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newNonAtomicRealFIFO(newKnownStore(tt.known...))
			if tt.before != nil {
				tt.before(t, f)
			}
			require.NoError(t, f.Replace(tt.list, "10"))
			assert.Equal(t, tt.want, drainDeltas(t, f))
		})
	}
}

func TestRealFIFO_ReplaceKnownLookupFailures(t *testing.T) {
	known := newKnownStore(newFakeObj("a", 1), newFakeObj("b", 2))
	known.failGet["a"] = true
	f := newNonAtomicRealFIFO(known)
	require.NoError(t, f.Replace(nil, "1"))
	assert.Equal(t, Deltas{{Deleted, tombstoneOf("a", nil)}, {Deleted, tombstoneOf("b", newFakeObj("b", 2))}}, drainDeltas(t, f))
}

func TestRealFIFO_ResyncNonAtomic(t *testing.T) {
	known := newKnownStore(newFakeObj("a", 1), newFakeObj("b", 2), newFakeObj("c", 3), newFakeObj("d", 4))
	known.failGet["d"] = true
	f := newNonAtomicRealFIFO(known)
	require.NoError(t, f.Update(newFakeObj("b", 5)))
	require.NoError(t, f.Resync())
	assert.Equal(t, Deltas{{Updated, newFakeObj("b", 5)}, {Sync, newFakeObj("a", 1)}, {Sync, newFakeObj("c", 3)}}, drainDeltas(t, f))

	known.set("x", 42) // no key
	g := newNonAtomicRealFIFO(known)
	var ke KeyError
	assert.True(t, errors.As(g.Resync(), &ke))
	assert.Equal(t, Deltas{{Sync, newFakeObj("a", 1)}, {Sync, newFakeObj("b", 2)}, {Sync, newFakeObj("c", 3)}}, drainDeltas(t, g))
}

func TestRealFIFO_AtomicReplaceResyncBookmark(t *testing.T) {
	obj := newFakeObj("foo", 2)
	f := newAtomicRealFIFO()
	require.NoError(t, f.Bookmark("5"))
	require.NoError(t, f.Add(obj))
	require.NoError(t, f.Replace([]interface{}{obj}, "10"))
	require.NoError(t, f.Replace([]interface{}{}, "20"))
	require.NoError(t, f.Resync())
	require.NoError(t, f.Delete(obj))
	require.NoError(t, f.Bookmark("30"))
	assert.Equal(t, Deltas{
		{Bookmark, BookmarkInfo{ResourceVersion: "5"}},
		{Added, obj},
		{ReplacedAll, ReplacedAllInfo{ResourceVersion: "10", Objects: []interface{}{obj}}},
		{ReplacedAll, ReplacedAllInfo{ResourceVersion: "20", Objects: []interface{}{}}},
		{SyncAll, SyncAllInfo{}},
		{Deleted, obj},
		{Bookmark, BookmarkInfo{ResourceVersion: "30"}},
	}, drainDeltas(t, f))
}

func TestRealFIFO_BookmarkNeedsAtomicAndOption(t *testing.T) {
	for name, f := range map[string]*RealFIFO{
		"non-atomic":         newNonAtomicRealFIFO(newKnownStore()),
		"atomic, no option":  NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, AtomicEvents: true}),
		"option, not atomic": NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, KnownObjects: newKnownStore(), EmitDeltaTypeBookmark: true}),
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, f.Bookmark("1"))
			assert.Empty(t, drainDeltas(t, f))
		})
	}
}

func TestRealFIFO_AtomicReplaceTransformsOnce(t *testing.T) {
	f := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, AtomicEvents: true, Transformer: markTransformed(t)})
	require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("b", 2)}, "3"))
	require.NoError(t, f.Delete(tombstoneOf("a", newFakeObj("a", 1))))
	assert.Equal(t, Deltas{
		{ReplacedAll, ReplacedAllInfo{ResourceVersion: "3", Objects: []interface{}{
			fakeObj{name: "a", val: 1, xf: 1}, fakeObj{name: "b", val: 2, xf: 1},
		}}},
		{Deleted, tombstoneOf("a", newFakeObj("a", 1))},
	}, drainDeltas(t, f))
}

func TestRealFIFO_Transformer(t *testing.T) {
	xf := func(name string, val int) fakeObj { return fakeObj{name: name, val: val, xf: 1} }
	known := newKnownStore(newFakeObj("k", 1))
	f := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, KnownObjects: known, Transformer: markTransformed(t)})
	assert.NotNil(t, f.Transformer())
	require.NoError(t, f.Add(newFakeObj("a", 1)))
	require.NoError(t, f.Update(newFakeObj("a", 2)))
	require.NoError(t, f.Delete(newFakeObj("a", 3)))
	require.NoError(t, f.Resync())
	require.NoError(t, f.Replace([]interface{}{newFakeObj("c", 1)}, "5"))
	assert.Equal(t, Deltas{
		{Added, xf("a", 1)}, {Updated, xf("a", 2)}, {Deleted, xf("a", 3)},
		{Sync, newFakeObj("k", 1)},
		{Deleted, tombstoneOf("k", newFakeObj("k", 1))},
		{Replaced, xf("c", 1)},
	}, drainDeltas(t, f))

	boom := errors.New("boom")
	g := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, KnownObjects: newKnownStore(), Transformer: func(obj interface{}) (interface{}, error) {
		if obj.(fakeObj).val < 0 {
			return nil, boom
		}
		return obj, nil
	}})
	assert.ErrorIs(t, g.Add(newFakeObj("a", -1)), boom)
	assert.ErrorIs(t, g.Update(newFakeObj("a", -1)), boom)
	assert.ErrorIs(t, g.Delete(newFakeObj("a", -1)), boom)
	require.NoError(t, g.Add(newFakeObj("ok", 1)))
	assert.ErrorIs(t, g.Replace([]interface{}{newFakeObj("b", 1), newFakeObj("c", -1)}, "1"), boom)
	assert.Equal(t, Deltas{{Added, newFakeObj("ok", 1)}}, drainDeltas(t, g))
}

func TestRealFIFO_BadObjectsGiveKeyErrors(t *testing.T) {
	for name, f := range map[string]*RealFIFO{
		"non-atomic": NewRealFIFOWithOptions(RealFIFOOptions{KnownObjects: newKnownStore()}),
		"atomic":     NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true}),
	} {
		t.Run(name, func(t *testing.T) {
			good := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
			for _, bad := range []interface{}{nil, 42, "s", (*v1.Pod)(nil), Deltas{}} {
				for op, fn := range map[string]func(interface{}) error{"Add": f.Add, "Update": f.Update, "Delete": f.Delete} {
					var ke KeyError
					assert.True(t, errors.As(fn(bad), &ke), "%s(%#v)", op, bad)
				}
				if name != "atomic" {
					var ke KeyError
					assert.True(t, errors.As(f.Replace([]interface{}{good, bad}, "1"), &ke), "Replace with %#v", bad)
				}
			}
			assert.False(t, f.HasSynced())
			assert.Empty(t, drainDeltas(t, f))
		})
	}
}

func TestRealFIFO_KeyOf(t *testing.T) {
	f := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, AtomicEvents: true})
	tests := []struct {
		obj  interface{}
		want string
	}{
		{newFakeObj("A", 1), "A"},
		{tombstoneOf("B", nil), "B"},
		{Deltas{{Object: newFakeObj("C", 1)}}, "C"},
		{Deltas{{Object: tombstoneOf("D", nil)}}, "D"},
		{Delta{Object: newFakeObj("E", 1)}, "E"},
	}
	for _, tt := range tests {
		got, err := f.q.KeyOf(tt.obj)
		require.NoError(t, err)
		assert.Equal(t, tt.want, got)
	}
	_, err := f.q.KeyOf(Deltas{})
	assert.ErrorIs(t, err, ErrZeroLengthDeltasObject)
}

func TestRealFIFO_HasSyncedAndInitialList(t *testing.T) {
	t.Run("non-atomic initial replace", func(t *testing.T) {
		f := newNonAtomicRealFIFO(newKnownStore(newFakeObj("foo", 5), newFakeObj("bar", 6), newFakeObj("baz", 7)))
		require.NoError(t, f.Replace([]interface{}{newFakeObj("foo", 5)}, "0"))
		initial, synced := probeInitialFlags(t, f, 3)
		assert.Equal(t, []bool{true, true, true}, initial)
		assert.Equal(t, []bool{false, false, true}, synced)
	})
	t.Run("atomic initial replace is one item, including what was queued before", func(t *testing.T) {
		f := newAtomicRealFIFO()
		require.NoError(t, f.Bookmark("1"))
		require.NoError(t, f.Resync())
		require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("b", 1)}, "2"))
		require.NoError(t, f.Add(newFakeObj("c", 1)))
		initial, synced := probeInitialFlags(t, f, 4)
		assert.Equal(t, []bool{true, true, true, false}, initial)
		assert.Equal(t, []bool{false, false, true, true}, synced)
	})
	tests := []struct {
		name string
		ops  func(t *testing.T, f *RealFIFO)
		want bool
	}{
		{"nothing", func(*testing.T, *RealFIFO) {}, false},
		{"add first", func(t *testing.T, f *RealFIFO) { require.NoError(t, f.Add(newFakeObj("a", 1))) }, true},
		{"delete first", func(t *testing.T, f *RealFIFO) { require.NoError(t, f.Delete(newFakeObj("a", 1))) }, true},
		{"empty replace", func(t *testing.T, f *RealFIFO) { require.NoError(t, f.Replace(nil, "0")) }, true},
		{"replace unpopped", func(t *testing.T, f *RealFIFO) {
			require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("b", 2)}, "0"))
		}, false},
		{"replace half popped", func(t *testing.T, f *RealFIFO) {
			require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("b", 2)}, "0"))
			popOne(t, f)
		}, false},
		{"replace popped", func(t *testing.T, f *RealFIFO) {
			require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("b", 2)}, "0"))
			popOne(t, f)
			popOne(t, f)
		}, true},
		{"duplicate keys are popped separately", func(t *testing.T, f *RealFIFO) {
			require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("a", 2)}, "0"))
			popOne(t, f)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newNonAtomicRealFIFO(newKnownStore())
			tt.ops(t, f)
			assert.Equal(t, tt.want, f.HasSynced())
			assert.Equal(t, tt.want, IsDone(f.HasSyncedChecker()))
		})
	}
}

func TestRealFIFO_DoneClosesAfterProcessing(t *testing.T) {
	f := newAtomicRealFIFO()
	require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1)}, "1"))
	done := f.Done()
	require.NoError(t, f.PopBatch(func([]Delta, bool) error {
		t.Error("a ReplacedAll must not be batched")
		return nil
	}, func(obj interface{}, initial bool) error {
		assert.True(t, initial)
		select {
		case <-done:
			t.Error("Done closed before processing finished")
		default:
		}
		return nil
	}))
	assert.True(t, IsDone(f))
}

func TestRealFIFO_PopBatchBoundaries(t *testing.T) {
	const unlimited = 1 << 20
	o1, o2, o3, o4 := newFakeObj("foo1", 5), newFakeObj("foo2", 5), newFakeObj("foo3", 5), newFakeObj("foo4", 5)
	tests := []struct {
		name      string
		atomic    bool
		initial   []interface{}
		actions   func(t *testing.T, f *RealFIFO)
		batchSize int
		want      []poppedBatch
	}{
		{
			name: "unique initial items form one batch", initial: []interface{}{o1, o2, o3}, batchSize: unlimited,
			want: []poppedBatch{{deltas: []Delta{{Replaced, o1}, {Replaced, o2}, {Replaced, o3}}, initial: true}},
		},
		{
			name: "initial and later items are not mixed", initial: []interface{}{o1, o2}, batchSize: unlimited,
			actions: func(t *testing.T, f *RealFIFO) {
				require.NoError(t, f.Update(o3))
				require.NoError(t, f.Update(o4))
			},
			want: []poppedBatch{
				{deltas: []Delta{{Replaced, o1}, {Replaced, o2}}, initial: true},
				{deltas: []Delta{{Updated, o3}, {Updated, o4}}},
			},
		},
		{
			name: "a repeated key ends the batch", initial: []interface{}{o1}, batchSize: unlimited,
			actions: func(t *testing.T, f *RealFIFO) {
				require.NoError(t, f.Update(o1))
				require.NoError(t, f.Update(o1))
				require.NoError(t, f.Update(o2))
				require.NoError(t, f.Update(o3))
				require.NoError(t, f.Update(o2))
			},
			want: []poppedBatch{
				{single: true, deltas: []Delta{{Replaced, o1}}, initial: true},
				{single: true, deltas: []Delta{{Updated, o1}}},
				{deltas: []Delta{{Updated, o1}, {Updated, o2}, {Updated, o3}}},
				{single: true, deltas: []Delta{{Updated, o2}}},
			},
		},
		{
			name: "batch size bounds initial and later batches", initial: []interface{}{o1, o2, o3}, batchSize: 2,
			actions: func(t *testing.T, f *RealFIFO) {
				require.NoError(t, f.Update(o4))
			},
			want: []poppedBatch{
				{deltas: []Delta{{Replaced, o1}, {Replaced, o2}}, initial: true},
				{single: true, deltas: []Delta{{Replaced, o3}}, initial: true},
				{single: true, deltas: []Delta{{Updated, o4}}},
			},
		},
		{
			name: "atomic kinds are popped alone", atomic: true, initial: []interface{}{o1}, batchSize: unlimited,
			actions: func(t *testing.T, f *RealFIFO) {
				require.NoError(t, f.Add(o2))
				require.NoError(t, f.Delete(o3))
				require.NoError(t, f.Resync())
				require.NoError(t, f.Add(o4))
				require.NoError(t, f.Bookmark("9"))
				require.NoError(t, f.Update(o1))
			},
			want: []poppedBatch{
				{single: true, deltas: []Delta{{ReplacedAll, ReplacedAllInfo{ResourceVersion: "1", Objects: []interface{}{o1}}}}, initial: true},
				{deltas: []Delta{{Added, o2}, {Deleted, o3}}},
				{single: true, deltas: []Delta{{SyncAll, SyncAllInfo{}}}},
				{single: true, deltas: []Delta{{Added, o4}}},
				{single: true, deltas: []Delta{{Bookmark, BookmarkInfo{ResourceVersion: "9"}}}},
				{single: true, deltas: []Delta{{Updated, o1}}},
			},
		},
		{
			name: "deletions with tombstones are batched by their key", initial: []interface{}{o1, o2}, batchSize: unlimited,
			actions: func(t *testing.T, f *RealFIFO) {
				require.NoError(t, f.Replace([]interface{}{o3}, "2"))
			},
			want: []poppedBatch{
				{deltas: []Delta{{Replaced, o1}, {Replaced, o2}}, initial: true},
				{deltas: []Delta{{Deleted, tombstoneOf("foo1", o1)}, {Deleted, tombstoneOf("foo2", o2)}, {Replaced, o3}}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f *RealFIFO
			if tt.atomic {
				f = newAtomicRealFIFO()
			} else {
				f = newNonAtomicRealFIFO(newKnownStore())
			}
			f.q.SetBatchSize(tt.batchSize)
			require.NoError(t, f.Replace(tt.initial, "1"))
			if tt.actions != nil {
				tt.actions(t, f)
			}
			f.Close()
			var got []poppedBatch
			for {
				b, err := popOneBatch(t, f)
				if errors.Is(err, ErrFIFOClosed) {
					break
				}
				require.NoError(t, err)
				got = append(got, b)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRealFIFO_PopBatchLongRuns(t *testing.T) {
	// Long runs use a set to find repeated keys; make sure the set is
	// consulted and reset between batches.
	f := newNonAtomicRealFIFO(newKnownStore())
	for i := 0; i < 40; i++ {
		require.NoError(t, f.Add(newFakeObj(fmt.Sprintf("k%02d", i), i)))
	}
	require.NoError(t, f.Add(newFakeObj("k30", 100)))
	for i := 0; i < 20; i++ {
		require.NoError(t, f.Add(newFakeObj(fmt.Sprintf("k%02d", i), 200+i)))
	}
	require.NoError(t, f.Add(newFakeObj("k00", 300)))
	sizes := []int{}
	for i := 0; i < 3; i++ {
		b, err := popOneBatch(t, f)
		require.NoError(t, err)
		sizes = append(sizes, len(b.deltas))
	}
	// 40 unique; then k30 + k00..k19 (21 unique); then k00 alone.
	assert.Equal(t, []int{40, 21, 1}, sizes)
	assert.Empty(t, drainDeltas(t, f))
}

func TestRealFIFO_PopBatchProcessErrorAndClose(t *testing.T) {
	f := newNonAtomicRealFIFO(newKnownStore())
	boom := errors.New("boom")
	require.NoError(t, f.Add(newFakeObj("a", 1)))
	require.NoError(t, f.Add(newFakeObj("b", 1)))
	err := f.PopBatch(func([]Delta, bool) error { return boom }, func(interface{}, bool) error { return nil })
	assert.ErrorIs(t, err, boom)
	require.NoError(t, f.Add(newFakeObj("c", 1)))
	err = f.PopBatch(func([]Delta, bool) error { return nil }, func(interface{}, bool) error { return boom })
	assert.ErrorIs(t, err, boom)

	errs := make(chan error, 2)
	go func() {
		errs <- f.PopBatch(func([]Delta, bool) error { return nil }, func(interface{}, bool) error { return nil })
	}()
	go func() {
		_, err := f.Pop(func(interface{}, bool) error { return nil })
		errs <- err
	}()
	f.Close()
	for i := 0; i < 2; i++ {
		select {
		case err := <-errs:
			assert.ErrorIs(t, err, ErrFIFOClosed)
		case <-time.After(5 * time.Second):
			t.Fatal("pop did not return after Close")
		}
	}
	assert.True(t, f.IsClosed())
}

func TestRealFIFO_PopReturnsFreshDeltas(t *testing.T) {
	f := newNonAtomicRealFIFO(newKnownStore())
	require.NoError(t, f.Add(newFakeObj("a", 1)))
	require.NoError(t, f.Add(newFakeObj("b", 1)))
	first, _ := popOne(t, f)
	second, _ := popOne(t, f)
	assert.Equal(t, Deltas{{Added, newFakeObj("a", 1)}}, first)
	assert.Equal(t, Deltas{{Added, newFakeObj("b", 1)}}, second)
}

func TestRealFIFO_UnlockWhileProcessing(t *testing.T) {
	f := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, AtomicEvents: true, UnlockWhileProcessing: true})
	require.NoError(t, f.Add(newFakeObj("a", 1)))
	added := make(chan error, 1)
	_, err := f.Pop(func(interface{}, bool) error {
		go func() { added <- f.Add(newFakeObj("b", 1)) }()
		select {
		case err := <-added:
			return err
		case <-time.After(5 * time.Second):
			return errors.New("producer blocked while the consumer was processing")
		}
	})
	require.NoError(t, err)
	assert.Equal(t, Deltas{{Added, newFakeObj("b", 1)}}, drainDeltas(t, f))

	t.Run("a long queue keeps producers out", func(t *testing.T) {
		f := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, AtomicEvents: true, UnlockWhileProcessing: true})
		f.q.SetBatchSize(1)
		for i := 0; i < 4; i++ {
			require.NoError(t, f.Add(newFakeObj(fmt.Sprint(i), i)))
		}
		added := make(chan error, 1)
		err := f.PopBatch(func([]Delta, bool) error { return nil }, func(interface{}, bool) error {
			go func() { added <- f.Add(newFakeObj("late", 1)) }()
			select {
			case <-added:
				return errors.New("producer got in although two batches were waiting")
			case <-time.After(50 * time.Millisecond):
				return nil
			}
		})
		require.NoError(t, err)
		select {
		case err := <-added:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("producer still blocked after processing")
		}
		assert.Len(t, drainDeltas(t, f), 4)
	})
}

func TestRealFIFO_OptionsThatClientGoRejects(t *testing.T) {
	known := newKnownStore(newFakeObj("k", 1))
	t.Run("atomic ignores known objects", func(t *testing.T) {
		f := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, AtomicEvents: true, KnownObjects: known})
		require.NoError(t, f.Replace(nil, "1"))
		assert.Equal(t, Deltas{{ReplacedAll, ReplacedAllInfo{ResourceVersion: "1"}}}, drainDeltas(t, f))
	})
	t.Run("non-atomic without known objects reconciles against the queue", func(t *testing.T) {
		f := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey})
		require.NoError(t, f.Add(newFakeObj("a", 1)))
		require.NoError(t, f.Resync())
		require.NoError(t, f.Replace(nil, "1"))
		assert.Equal(t, Deltas{{Added, newFakeObj("a", 1)}, {Deleted, tombstoneOf("a", newFakeObj("a", 1))}}, drainDeltas(t, f))
	})
	t.Run("non-atomic ignores UnlockWhileProcessing", func(t *testing.T) {
		f := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, KnownObjects: known, UnlockWhileProcessing: true})
		assert.False(t, f.q.UnlocksWhileProcessing())
	})
	t.Run("zero value", func(t *testing.T) {
		var f RealFIFO
		assert.Equal(t, "RealFIFO", f.Name())
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
		require.NoError(t, f.Add(pod))
		require.NoError(t, f.Resync())
		assert.Equal(t, Deltas{{Added, pod}}, drainDeltas(t, &f))
	})
	t.Run("deprecated constructor", func(t *testing.T) {
		f := NewRealFIFO(fakeObjKey, known, nil)
		require.NoError(t, f.Replace(nil, "1"))
		assert.Equal(t, Deltas{{Deleted, tombstoneOf("k", newFakeObj("k", 1))}}, drainDeltas(t, f))
		assert.Nil(t, f.Transformer())
	})
	t.Run("names", func(t *testing.T) {
		assert.Equal(t, "pods", NewRealFIFOWithOptions(RealFIFOOptions{Name: "pods", AtomicEvents: true}).Name())
		assert.Equal(t, "RealFIFO", NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true}).HasSyncedChecker().Name())
	})
}

func TestRealFIFO_ConcurrentProducersBatchConsumer(t *testing.T) {
	f := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, AtomicEvents: true, UnlockWhileProcessing: true})
	f.q.SetBatchSize(7)
	const perProducer = 400
	var wg sync.WaitGroup
	for p := 0; p < 3; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= perProducer; i++ {
				assert.NoError(t, f.Update(newFakeObj(fmt.Sprintf("p%d-%d", p, i%5), i)))
			}
		}()
	}
	last := map[byte]int{}
	total := 0
	check := func(d Delta) {
		o := d.Object.(fakeObj)
		assert.Equal(t, last[o.name[1]]+1, o.val, "every change of producer %c, in order", o.name[1])
		last[o.name[1]] = o.val
		total++
	}
	for total < 3*perProducer {
		b, err := popOneBatch(t, f)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(b.deltas), 7)
		for _, d := range b.deltas {
			check(d)
		}
	}
	wg.Wait()
}

// recordingFIFOMetrics records what a RealFIFO publishes.
type recordingFIFOMetrics struct {
	mu        sync.Mutex
	ids       []InformerNameAndResource
	depths    []float64
	latencies int
}

type recordingGauge struct{ p *recordingFIFOMetrics }

func (g recordingGauge) Set(v float64) {
	g.p.mu.Lock()
	defer g.p.mu.Unlock()
	g.p.depths = append(g.p.depths, v)
}

type recordingLatencies struct{ p *recordingFIFOMetrics }

func (h recordingLatencies) Observe(v float64) {
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	if v >= 0 {
		h.p.latencies++
	}
}

func (p *recordingFIFOMetrics) NewQueuedItemMetric(id InformerNameAndResource) GaugeMetric {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ids = append(p.ids, id)
	return recordingGauge{p}
}

func (p *recordingFIFOMetrics) NewProcessingLatencyMetric(InformerNameAndResource) HistogramMetric {
	return recordingLatencies{p}
}

func (p *recordingFIFOMetrics) NewStoreResourceVersionMetric(InformerNameAndResource) GaugeMetric {
	return recordingGauge{p}
}

func TestRealFIFO_Metrics(t *testing.T) {
	name, err := NewInformerName("queues-metrics-test")
	require.NoError(t, err)
	defer name.Release()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	id := name.WithResource(gvr)
	require.True(t, id.Reserved())

	p := &recordingFIFOMetrics{}
	f := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, AtomicEvents: true, Identifier: id, MetricsProvider: p})
	assert.Equal(t, "queues-metrics-test", f.Name(), "the identifier's name wins")
	require.NoError(t, f.Add(newFakeObj("a", 1)))
	require.NoError(t, f.Add(newFakeObj("b", 1)))
	require.NoError(t, f.Add(newFakeObj("a", 2)))
	_, err = popOneBatch(t, f) // a, b
	require.NoError(t, err)
	popOne(t, f) // a
	p.mu.Lock()
	assert.Equal(t, []float64{1, 2, 3, 1, 0}, p.depths, "queue depth after every push and pop")
	assert.Equal(t, 2, p.latencies, "one latency per processing call")
	assert.Equal(t, []InformerNameAndResource{id}, p.ids)
	p.mu.Unlock()

	// A second identity for the same resource is not reserved: nothing is
	// created or published.
	q := &recordingFIFOMetrics{}
	g := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, AtomicEvents: true, Identifier: name.WithResource(gvr), MetricsProvider: q})
	require.NoError(t, g.Add(newFakeObj("a", 1)))
	popOne(t, g)
	assert.Empty(t, q.ids)
	assert.Empty(t, q.depths)
}

// TestRealFIFO_PopBatchAllocations: the queue a shared informer builds for
// itself (reusePopBuffers) pops without allocating; any other RealFIFO hands
// out fresh slices, one allocation per batch (two for a single Deltas: its
// array and its interface value), and nothing per delta.
func TestRealFIFO_PopBatchAllocations(t *testing.T) {
	for _, tc := range []struct {
		name                string
		reuse               bool
		perBatch, perSingle float64
	}{
		{name: "informer's own queue", reuse: true},
		{name: "caller's queue", perBatch: 1, perSingle: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, AtomicEvents: true, reusePopBuffers: tc.reuse})
			objs := make([]interface{}, 64)
			for i := range objs {
				objs[i] = newFakeObj(fmt.Sprintf("k%d", i), i)
			}
			noopBatch := func([]Delta, bool) error { return nil }
			noopSingle := func(interface{}, bool) error { return nil }
			warm := func() {
				for _, o := range objs {
					_ = f.Update(o)
				}
				for f.q.Len() > 0 {
					_ = f.PopBatch(noopBatch, noopSingle)
				}
			}
			warm()
			// Batches of 64 updates (the long-run set included) and single pops.
			allocs := testing.AllocsPerRun(50, warm)
			assert.Equal(t, tc.perBatch, allocs, "Update+PopBatch allocations per round of 64 (one batch)")
			allocs = testing.AllocsPerRun(200, func() {
				_ = f.Update(objs[0])
				_ = f.PopBatch(noopBatch, noopSingle)
			})
			assert.Equal(t, tc.perSingle, allocs, "Update+PopBatch allocations for a single delta")
		})
	}
}

// Difference from client-go: a delta popped before the first Replace does not
// complete the initial batch when the Replace lands while it is processed.
func TestRealFIFO_ReplaceDuringUnlockedProcessingKeepsInitialCount(t *testing.T) {
	f := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: fakeObjKey, AtomicEvents: true, UnlockWhileProcessing: true})
	require.NoError(t, f.Resync())
	_, err := f.Pop(func(obj interface{}, initial bool) error {
		assert.Equal(t, Deltas{{SyncAll, SyncAllInfo{}}}, obj)
		return f.Replace([]interface{}{newFakeObj("a", 1)}, "1") // the lock is released here
	})
	require.NoError(t, err)
	assert.False(t, f.HasSynced(), "the ReplacedAll is still queued")
	_, initial := popOne(t, f)
	assert.True(t, initial)
	assert.True(t, f.HasSynced())
}

func TestRealFIFOPopHandsOutComputedKeys(t *testing.T) {
	// The queue as a shared informer builds it: only its reused buffers
	// carry keys.
	f := NewRealFIFOWithOptions(RealFIFOOptions{AtomicEvents: true, UnlockWhileProcessing: true, EmitDeltaTypeBookmark: true, reusePopBuffers: true})
	for _, name := range []string{"a", "b", "c"} {
		require.NoError(t, f.Add(newPod(name, "1")))
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

	require.NoError(t, f.Delete(DeletedFinalStateUnknown{Key: "ns/z", Obj: newPod("z", "1")}))
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
	assert.Nil(t, f.poppedKeys(Deltas{{Added, newPod("a", "1")}}), "outside a pop there are no keys")
}
