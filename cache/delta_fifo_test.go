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
	"k8s.io/klog/v2"
)

func tombstoneOf(key string, obj interface{}) DeletedFinalStateUnknown {
	return DeletedFinalStateUnknown{Key: key, Obj: obj}
}

// newTestDeltaFIFO builds a DeltaFIFO keyed by fakeObjKey.
func newTestDeltaFIFO(known KeyListerGetter, emitReplaced bool) *DeltaFIFO {
	opts := DeltaFIFOOptions{KeyFunction: fakeObjKey, EmitDeltaTypeReplaced: emitReplaced}
	if known != nil {
		opts.KnownObjects = known
	}
	return NewDeltaFIFOWithOptions(opts)
}

// popDeltas pops one Deltas.
func popDeltas(t *testing.T, q Queue) Deltas {
	t.Helper()
	obj, _ := popOne(t, q)
	d, ok := obj.(Deltas)
	require.True(t, ok, "popped %T, want Deltas", obj)
	return d
}

// drainAccumulators closes q and pops everything left.
func drainAccumulators(t *testing.T, q Queue) []Deltas {
	t.Helper()
	q.Close()
	var out []Deltas
	for {
		obj, err := q.Pop(func(interface{}, bool) error { return nil })
		if errors.Is(err, ErrFIFOClosed) {
			return out
		}
		require.NoError(t, err)
		out = append(out, obj.(Deltas))
	}
}

func TestDeltaFIFO_AccumulatesPerKeyInFirstEnqueueOrder(t *testing.T) {
	f := newTestDeltaFIFO(nil, false)
	require.NoError(t, f.Add(newFakeObj("foo", 10)))
	require.NoError(t, f.Add(newFakeObj("bar", 1)))
	require.NoError(t, f.Update(newFakeObj("foo", 11)))
	require.NoError(t, f.Update(newFakeObj("foo", 13)))
	require.NoError(t, f.Add(newFakeObj("zab", 30)))

	assert.Equal(t, Deltas{{Added, newFakeObj("foo", 10)}, {Updated, newFakeObj("foo", 11)}, {Updated, newFakeObj("foo", 13)}}, popDeltas(t, f))
	require.NoError(t, f.Update(newFakeObj("foo", 14))) // popped keys rejoin at the back
	assert.Equal(t, []Deltas{
		{{Added, newFakeObj("bar", 1)}},
		{{Added, newFakeObj("zab", 30)}},
		{{Updated, newFakeObj("foo", 14)}},
	}, drainAccumulators(t, f))
}

func TestDeltaFIFO_DeletionDedup(t *testing.T) {
	real1, real2 := newFakeObj("k", 1), newFakeObj("k", 2)
	tomb1, tomb2 := tombstoneOf("k", newFakeObj("k", 3)), tombstoneOf("k", newFakeObj("k", 4))
	tests := []struct {
		name          string
		first, second interface{}
		want          interface{}
	}{
		{"real then real keeps the older", real1, real2, real1},
		{"tombstone then real keeps the real one", tomb1, real2, real2},
		{"real then tombstone keeps the real one", real1, tomb2, real1},
		{"tombstone then tombstone keeps the newer", tomb1, tomb2, tomb2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestDeltaFIFO(newKnownStore(newFakeObj("k", 0)), false)
			require.NoError(t, f.Delete(tt.first))
			require.NoError(t, f.Delete(tt.second))
			assert.Equal(t, Deltas{{Deleted, tt.want}}, popDeltas(t, f))
		})
	}
	t.Run("only consecutive deletions collapse", func(t *testing.T) {
		f := newTestDeltaFIFO(nil, false)
		require.NoError(t, f.Add(real1))
		require.NoError(t, f.Delete(real1))
		require.NoError(t, f.Add(real2))
		require.NoError(t, f.Delete(real2))
		require.NoError(t, f.Delete(real2))
		assert.Equal(t, Deltas{{Added, real1}, {Deleted, real1}, {Added, real2}, {Deleted, real2}}, popDeltas(t, f))
	})
}

func TestDeltaFIFO_DeleteOfUnknownObjectIsIgnored(t *testing.T) {
	known := newKnownStore(newFakeObj("known", 5))
	known.failGet["broken"] = true
	tests := []struct {
		name  string
		known KeyListerGetter
		setup []interface{}
		del   fakeObj
		want  []Deltas
	}{
		{name: "no known objects, not queued", del: newFakeObj("x", 1)},
		{name: "no known objects, queued", setup: []interface{}{newFakeObj("x", 1)}, del: newFakeObj("x", 2),
			want: []Deltas{{{Added, newFakeObj("x", 1)}, {Deleted, newFakeObj("x", 2)}}}},
		{name: "known objects lack it", known: known, del: newFakeObj("x", 1)},
		{name: "known objects have it", known: known, del: newFakeObj("known", 6),
			want: []Deltas{{{Deleted, newFakeObj("known", 6)}}}},
		{name: "known objects lookup fails", known: known, del: newFakeObj("broken", 1),
			want: []Deltas{{{Deleted, newFakeObj("broken", 1)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestDeltaFIFO(tt.known, false)
			for _, o := range tt.setup {
				require.NoError(t, f.Add(o))
			}
			require.NoError(t, f.Delete(tt.del))
			assert.Equal(t, tt.want, drainAccumulators(t, f))
		})
	}
}

func TestDeltaFIFO_Replace(t *testing.T) {
	tests := []struct {
		name         string
		known        []fakeObj
		noKnown      bool
		emitReplaced bool
		before       func(t *testing.T, f *DeltaFIFO)
		list         []interface{}
		want         []Deltas
	}{
		{
			name:  "sync deltas for listed, tombstones for known keys missing",
			known: []fakeObj{newFakeObj("foo", 5), newFakeObj("bar", 6), newFakeObj("baz", 7)},
			list:  []interface{}{newFakeObj("foo", 5)},
			want: []Deltas{
				{{Sync, newFakeObj("foo", 5)}},
				{{Deleted, tombstoneOf("bar", newFakeObj("bar", 6))}},
				{{Deleted, tombstoneOf("baz", newFakeObj("baz", 7))}},
			},
		},
		{
			name:         "replaced deltas with EmitDeltaTypeReplaced",
			known:        []fakeObj{newFakeObj("foo", 5), newFakeObj("bar", 6)},
			emitReplaced: true,
			list:         []interface{}{newFakeObj("foo", 6)},
			want: []Deltas{
				{{Replaced, newFakeObj("foo", 6)}},
				{{Deleted, tombstoneOf("bar", newFakeObj("bar", 6))}},
			},
		},
		{
			name:  "queued delete is kept, no second deletion",
			known: []fakeObj{newFakeObj("foo", 5), newFakeObj("bar", 6), newFakeObj("baz", 7)},
			before: func(t *testing.T, f *DeltaFIFO) {
				require.NoError(t, f.Delete(newFakeObj("baz", 10)))
			},
			list: []interface{}{newFakeObj("foo", 5)},
			want: []Deltas{
				{{Deleted, newFakeObj("baz", 10)}},
				{{Sync, newFakeObj("foo", 5)}},
				{{Deleted, tombstoneOf("bar", newFakeObj("bar", 6))}},
			},
		},
		{
			name:  "queued add gets a tombstone with the queued object",
			known: []fakeObj{newFakeObj("foo", 5), newFakeObj("baz", 7)},
			before: func(t *testing.T, f *DeltaFIFO) {
				require.NoError(t, f.Add(newFakeObj("baz", 10)))
			},
			list: []interface{}{newFakeObj("foo", 5)},
			want: []Deltas{
				{{Added, newFakeObj("baz", 10)}, {Deleted, tombstoneOf("baz", newFakeObj("baz", 10))}},
				{{Sync, newFakeObj("foo", 5)}},
			},
		},
		{
			name:  "deleted then recreated in queue, then gone from the list",
			known: []fakeObj{newFakeObj("foo", 5), newFakeObj("bar", 6), newFakeObj("baz", 7)},
			before: func(t *testing.T, f *DeltaFIFO) {
				require.NoError(t, f.Delete(newFakeObj("bar", 6)))
				require.NoError(t, f.Add(newFakeObj("bar", 100)))
			},
			list: []interface{}{newFakeObj("foo", 5)},
			want: []Deltas{
				{{Deleted, newFakeObj("bar", 6)}, {Added, newFakeObj("bar", 100)}, {Deleted, tombstoneOf("bar", newFakeObj("bar", 100))}},
				{{Sync, newFakeObj("foo", 5)}},
				{{Deleted, tombstoneOf("baz", newFakeObj("baz", 7))}},
			},
		},
		{
			name:  "tombstone of a tombstone carries the inner object",
			known: []fakeObj{newFakeObj("foo", 5)},
			before: func(t *testing.T, f *DeltaFIFO) {
				require.NoError(t, f.Replace([]interface{}{}, "1"))
			},
			list: []interface{}{},
			want: []Deltas{
				{{Deleted, tombstoneOf("foo", newFakeObj("foo", 5))}},
			},
		},
		{
			name:    "without known objects, only queued keys get tombstones",
			noKnown: true,
			before: func(t *testing.T, f *DeltaFIFO) {
				require.NoError(t, f.Add(newFakeObj("baz", 10)))
				require.NoError(t, f.Add(newFakeObj("zed", 1)))
				require.NoError(t, f.Add(newFakeObj("abc", 1)))
			},
			list: []interface{}{newFakeObj("foo", 5), newFakeObj("zed", 2)},
			want: []Deltas{
				{{Added, newFakeObj("baz", 10)}, {Deleted, tombstoneOf("baz", newFakeObj("baz", 10))}},
				{{Added, newFakeObj("zed", 1)}, {Sync, newFakeObj("zed", 2)}},
				{{Added, newFakeObj("abc", 1)}, {Deleted, tombstoneOf("abc", newFakeObj("abc", 1))}},
				{{Sync, newFakeObj("foo", 5)}},
			},
		},
		{
			name:  "delete queued before replace that re-lists the object (https://github.com/kubernetes/kubernetes/issues/83810)",
			known: []fakeObj{newFakeObj("foo", 1)},
			before: func(t *testing.T, f *DeltaFIFO) {
				require.NoError(t, f.Delete(newFakeObj("foo", 1)))
			},
			list: []interface{}{newFakeObj("foo", 2)},
			want: []Deltas{{{Deleted, newFakeObj("foo", 1)}, {Sync, newFakeObj("foo", 2)}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var known KeyListerGetter
			if !tt.noKnown {
				known = newKnownStore(tt.known...)
			}
			f := newTestDeltaFIFO(known, tt.emitReplaced)
			if tt.before != nil {
				tt.before(t, f)
			}
			require.NoError(t, f.Replace(tt.list, "10"))
			assert.Equal(t, tt.want, drainAccumulators(t, f))
		})
	}
}

func TestDeltaFIFO_ReplaceKnownLookupFailures(t *testing.T) {
	known := newKnownStore(newFakeObj("a", 1), newFakeObj("b", 2))
	known.failGet["a"] = true
	f := newTestDeltaFIFO(known, true)
	require.NoError(t, f.Replace(nil, "1"))
	assert.Equal(t, []Deltas{
		{{Deleted, tombstoneOf("a", nil)}},
		{{Deleted, tombstoneOf("b", newFakeObj("b", 2))}},
	}, drainAccumulators(t, f))
}

// probeInitialFlags pops n items and reports (isInInitialList, HasSynced after).
func probeInitialFlags(t *testing.T, q Queue, n int) (initial []bool, synced []bool) {
	for i := 0; i < n; i++ {
		_, in := popOne(t, q)
		initial = append(initial, in)
		synced = append(synced, q.HasSynced())
	}
	return initial, synced
}

func TestDeltaFIFO_HasSyncedAndInitialList(t *testing.T) {
	t.Run("initial replace with deletions", func(t *testing.T) {
		f := newTestDeltaFIFO(newKnownStore(newFakeObj("foo", 5), newFakeObj("bar", 6), newFakeObj("baz", 7)), false)
		require.NoError(t, f.Replace([]interface{}{newFakeObj("foo", 5)}, "0"))
		assert.False(t, f.HasSynced())
		initial, synced := probeInitialFlags(t, f, 3)
		assert.Equal(t, []bool{true, true, true}, initial)
		assert.Equal(t, []bool{false, false, true}, synced)
		require.NoError(t, f.Add(newFakeObj("late", 1)))
		_, in := popOne(t, f)
		assert.False(t, in)
	})
	tests := []struct {
		name string
		ops  func(t *testing.T, f *DeltaFIFO)
		want bool
	}{
		{"nothing", func(*testing.T, *DeltaFIFO) {}, false},
		{"add first", func(t *testing.T, f *DeltaFIFO) { require.NoError(t, f.Add(newFakeObj("a", 1))) }, true},
		{"update first", func(t *testing.T, f *DeltaFIFO) { require.NoError(t, f.Update(newFakeObj("a", 1))) }, true},
		{"ignored delete first", func(t *testing.T, f *DeltaFIFO) { require.NoError(t, f.Delete(newFakeObj("a", 1))) }, true},
		{"empty replace", func(t *testing.T, f *DeltaFIFO) { require.NoError(t, f.Replace(nil, "1")) }, true},
		{"replace unpopped", func(t *testing.T, f *DeltaFIFO) {
			require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("b", 2)}, "1"))
		}, false},
		{"replace half popped", func(t *testing.T, f *DeltaFIFO) {
			require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("b", 2)}, "1"))
			popOne(t, f)
		}, false},
		{"replace popped", func(t *testing.T, f *DeltaFIFO) {
			require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("b", 2)}, "1"))
			popOne(t, f)
			popOne(t, f)
		}, true},
		{"duplicate key in replace is one item", func(t *testing.T, f *DeltaFIFO) {
			require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1), newFakeObj("a", 2)}, "1"))
			popOne(t, f)
		}, true},
		{"second replace does not reset", func(t *testing.T, f *DeltaFIFO) {
			require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1)}, "1"))
			popOne(t, f)
			require.NoError(t, f.Replace([]interface{}{newFakeObj("b", 1)}, "2"))
		}, true},
		{"resync does not populate", func(t *testing.T, f *DeltaFIFO) {
			require.NoError(t, f.Resync())
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestDeltaFIFO(nil, false)
			tt.ops(t, f)
			assert.Equal(t, tt.want, f.HasSynced())
			assert.Equal(t, tt.want, IsDone(f.HasSyncedChecker()))
		})
	}
}

// Difference from client-go: Done closes only once the last initial item
// has been processed, so a waiter never runs alongside that processing.
func TestDeltaFIFO_DoneClosesAfterLastInitialItemIsProcessed(t *testing.T) {
	f := newTestDeltaFIFO(nil, false)
	require.NoError(t, f.Replace([]interface{}{newFakeObj("a", 1)}, "1"))
	done := f.Done()
	_, err := f.Pop(func(interface{}, bool) error {
		select {
		case <-done:
			t.Error("Done closed before the initial item was processed")
		default:
		}
		return nil
	})
	require.NoError(t, err)
	select {
	case <-done:
	default:
		t.Error("Done not closed after the initial item was processed")
	}
}

func TestDeltaFIFO_Resync(t *testing.T) {
	t.Run("queues known objects that are not queued", func(t *testing.T) {
		known := newKnownStore(newFakeObj("a", 1), newFakeObj("b", 2), newFakeObj("c", 3))
		f := newTestDeltaFIFO(known, false)
		require.NoError(t, f.Update(newFakeObj("b", 5)))
		require.NoError(t, f.Resync())
		assert.Equal(t, []Deltas{
			{{Updated, newFakeObj("b", 5)}},
			{{Sync, newFakeObj("a", 1)}},
			{{Sync, newFakeObj("c", 3)}},
		}, drainAccumulators(t, f))
	})
	t.Run("queued delete suppresses the sync", func(t *testing.T) {
		f := newTestDeltaFIFO(newKnownStore(newFakeObj("foo", 5)), false)
		require.NoError(t, f.Delete(newFakeObj("foo", 10)))
		require.NoError(t, f.Resync())
		assert.Equal(t, []Deltas{{{Deleted, newFakeObj("foo", 10)}}}, drainAccumulators(t, f))
	})
	t.Run("no known objects", func(t *testing.T) {
		f := newTestDeltaFIFO(nil, false)
		require.NoError(t, f.Resync())
		assert.Empty(t, drainAccumulators(t, f))
	})
	t.Run("lookup failures are skipped, key errors reported after the rest", func(t *testing.T) {
		known := newKnownStore(newFakeObj("a", 1), newFakeObj("c", 3))
		known.failGet["a"] = true
		known.set("b", 42) // no key
		f := newTestDeltaFIFO(known, false)
		err := f.Resync()
		var ke KeyError
		assert.True(t, errors.As(err, &ke), "got %v", err)
		assert.Equal(t, []Deltas{{{Sync, newFakeObj("c", 3)}}}, drainAccumulators(t, f))
	})
}

func TestDeltaFIFO_CloseUnblocksPop(t *testing.T) {
	f := newTestDeltaFIFO(nil, false)
	const waiters = 5
	errs := make(chan error, waiters)
	for i := 0; i < waiters; i++ {
		go func() {
			_, err := f.Pop(func(interface{}, bool) error { return nil })
			errs <- err
		}()
	}
	f.Close()
	assert.True(t, f.IsClosed())
	for i := 0; i < waiters; i++ {
		select {
		case err := <-errs:
			assert.ErrorIs(t, err, ErrFIFOClosed)
		case <-time.After(5 * time.Second):
			t.Fatal("Pop did not return after Close")
		}
	}
}

func TestDeltaFIFO_ProcessErrorIsReturnedAndNotRequeued(t *testing.T) {
	f := newTestDeltaFIFO(nil, false)
	require.NoError(t, f.Add(newFakeObj("a", 1)))
	boom := errors.New("boom")
	obj, err := f.Pop(func(interface{}, bool) error { return boom })
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, Deltas{{Added, newFakeObj("a", 1)}}, obj)
	assert.Empty(t, drainAccumulators(t, f))
}

// markTransformed increments xf on fakeObjs and rejects tombstones.
func markTransformed(t *testing.T) TransformFunc {
	return func(obj interface{}) (interface{}, error) {
		switch o := obj.(type) {
		case fakeObj:
			o.xf++
			return o, nil
		default:
			t.Errorf("transformer called with %#v", obj)
			return obj, nil
		}
	}
}

func TestDeltaFIFO_Transformer(t *testing.T) {
	xf := func(name string, val int) fakeObj { return fakeObj{name: name, val: val, xf: 1} }
	known := newKnownStore(newFakeObj("k", 1)) // known objects were transformed already
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{
		KeyFunction: fakeObjKey, KnownObjects: known, EmitDeltaTypeReplaced: true, Transformer: markTransformed(t),
	})
	assert.NotNil(t, f.Transformer())
	require.NoError(t, f.Add(newFakeObj("a", 1)))
	require.NoError(t, f.Update(newFakeObj("a", 2)))
	require.NoError(t, f.Delete(newFakeObj("a", 3)))
	require.NoError(t, f.Add(newFakeObj("b", 1)))
	require.NoError(t, f.Resync()) // Sync of k: not transformed
	require.NoError(t, f.Replace([]interface{}{newFakeObj("c", 1)}, "5"))
	assert.Equal(t, []Deltas{
		{{Added, xf("a", 1)}, {Updated, xf("a", 2)}, {Deleted, xf("a", 3)}},
		{{Added, xf("b", 1)}, {Deleted, tombstoneOf("b", xf("b", 1))}},
		{{Sync, newFakeObj("k", 1)}, {Deleted, tombstoneOf("k", newFakeObj("k", 1))}},
		{{Replaced, xf("c", 1)}},
	}, drainAccumulators(t, f))
}

func TestDeltaFIFO_TransformerErrors(t *testing.T) {
	boom := errors.New("boom")
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{
		KeyFunction: fakeObjKey,
		Transformer: func(obj interface{}) (interface{}, error) {
			if obj.(fakeObj).val < 0 {
				return nil, boom
			}
			return obj, nil
		},
	})
	assert.ErrorIs(t, f.Add(newFakeObj("a", -1)), boom)
	assert.ErrorIs(t, f.Update(newFakeObj("a", -1)), boom)
	require.NoError(t, f.Add(newFakeObj("b", 1)))
	assert.ErrorIs(t, f.Delete(newFakeObj("b", -1)), boom)
	// Difference from client-go: a failing Replace queues nothing at all.
	assert.ErrorIs(t, f.Replace([]interface{}{newFakeObj("c", 1), newFakeObj("d", -1)}, "1"), boom)
	assert.Equal(t, []Deltas{{{Added, newFakeObj("b", 1)}}}, drainAccumulators(t, f))
}

func TestDeltaFIFO_KeyOf(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{})
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	tests := []struct {
		name    string
		obj     interface{}
		want    string
		wantErr error
	}{
		{name: "object", obj: pod, want: "ns/p"},
		{name: "tombstone", obj: tombstoneOf("B", nil), want: "B"},
		{name: "deltas", obj: Deltas{{Added, tombstoneOf("x", nil)}, {Updated, pod}}, want: "ns/p"},
		{name: "deltas ending in tombstone", obj: Deltas{{Deleted, tombstoneOf("D", nil)}}, want: "D"},
		{name: "explicit key", obj: ExplicitKey("ns/e"), want: "ns/e"},
		{name: "empty deltas", obj: Deltas{}, wantErr: ErrZeroLengthDeltasObject},
		{name: "nil", obj: nil},
		{name: "no metadata", obj: 42},
		{name: "typed nil", obj: (*v1.Pod)(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.KeyOf(tt.obj)
			if tt.want != "" {
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
				return
			}
			var ke KeyError
			require.True(t, errors.As(err, &ke), "got %v", err)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
		})
	}
}

func TestDeltaFIFO_BadObjectsGiveKeyErrors(t *testing.T) {
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: newKnownStore()})
	good := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	for _, bad := range []interface{}{nil, 42, "s", (*v1.Pod)(nil), Deltas{}} {
		for name, op := range map[string]func(interface{}) error{"Add": f.Add, "Update": f.Update, "Delete": f.Delete} {
			var ke KeyError
			assert.True(t, errors.As(op(bad), &ke), "%s(%#v)", name, bad)
		}
		var ke KeyError
		assert.True(t, errors.As(f.Replace([]interface{}{good, bad}, "1"), &ke), "Replace with %#v", bad)
	}
	assert.False(t, f.HasSynced(), "failed calls do not count as populating")
	assert.Empty(t, drainAccumulators(t, f))
}

func TestDeltaFIFO_ZeroValueAndOptions(t *testing.T) {
	var f DeltaFIFO
	assert.Equal(t, "DeltaFIFO", f.Name())
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	require.NoError(t, f.Add(pod))
	assert.Equal(t, Deltas{{Added, pod}}, popDeltas(t, &f))

	logger := klog.Background()
	g := NewDeltaFIFOWithOptions(DeltaFIFOOptions{Name: "pods", Logger: &logger})
	assert.Equal(t, "pods", g.Name())
	assert.Equal(t, "pods", g.HasSyncedChecker().Name())
	assert.Nil(t, g.Transformer())

	// The deprecated constructor emits Sync on Replace.
	h := NewDeltaFIFO(fakeObjKey, newKnownStore())
	require.NoError(t, h.Replace([]interface{}{newFakeObj("a", 1)}, "1"))
	assert.Equal(t, []Deltas{{{Sync, newFakeObj("a", 1)}}}, drainAccumulators(t, h))
}

func TestDeltaFIFO_NewestOldest(t *testing.T) {
	var empty Deltas
	assert.Nil(t, empty.Newest())
	assert.Nil(t, empty.Oldest())
	d := Deltas{{Added, 1}, {Updated, 2}}
	assert.Equal(t, &d[0], d.Oldest())
	assert.Equal(t, &d[1], d.Newest())
}

func TestDeltaFIFO_ConcurrentProducersAndConsumer(t *testing.T) {
	known := newKnownStore()
	f := newTestDeltaFIFO(known, true)
	const perProducer = 300
	var wg sync.WaitGroup
	for p := 0; p < 2; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= perProducer; i++ {
				assert.NoError(t, f.Add(newFakeObj(fmt.Sprintf("p%d-%d", p, i), i)))
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			assert.NoError(t, f.Resync())
		}
	}()
	last := map[byte]int{}
	seen := 0
	for seen < 2*perProducer {
		d := popDeltas(t, f)
		for _, delta := range d {
			o := delta.Object.(fakeObj)
			known.set(o.name, o) // play the consumer updating its store
			if delta.Type == Added {
				assert.Greater(t, o.val, last[o.name[1]])
				last[o.name[1]] = o.val
				seen++
			}
		}
	}
	wg.Wait()
}
