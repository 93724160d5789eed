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

func qTomb(key string, obj interface{}) DeletedFinalStateUnknown {
	return DeletedFinalStateUnknown{Key: key, Obj: obj}
}

// qDeltaFIFO builds a DeltaFIFO keyed by qKey.
func qDeltaFIFO(known KeyListerGetter, emitReplaced bool) *DeltaFIFO {
	opts := DeltaFIFOOptions{KeyFunction: qKey, EmitDeltaTypeReplaced: emitReplaced}
	if known != nil {
		opts.KnownObjects = known
	}
	return NewDeltaFIFOWithOptions(opts)
}

// qPopDeltas pops one Deltas.
func qPopDeltas(t *testing.T, q Queue) Deltas {
	t.Helper()
	obj, _ := qPopObj(t, q)
	d, ok := obj.(Deltas)
	require.True(t, ok, "popped %T, want Deltas", obj)
	return d
}

// qDrain closes q and pops everything left.
func qDrain(t *testing.T, q Queue) []Deltas {
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
	f := qDeltaFIFO(nil, false)
	require.NoError(t, f.Add(qMk("foo", 10)))
	require.NoError(t, f.Add(qMk("bar", 1)))
	require.NoError(t, f.Update(qMk("foo", 11)))
	require.NoError(t, f.Update(qMk("foo", 13)))
	require.NoError(t, f.Add(qMk("zab", 30)))

	assert.Equal(t, Deltas{{Added, qMk("foo", 10)}, {Updated, qMk("foo", 11)}, {Updated, qMk("foo", 13)}}, qPopDeltas(t, f))
	require.NoError(t, f.Update(qMk("foo", 14))) // popped keys rejoin at the back
	assert.Equal(t, []Deltas{
		{{Added, qMk("bar", 1)}},
		{{Added, qMk("zab", 30)}},
		{{Updated, qMk("foo", 14)}},
	}, qDrain(t, f))
}

func TestDeltaFIFO_DeletionDedup(t *testing.T) {
	real1, real2 := qMk("k", 1), qMk("k", 2)
	tomb1, tomb2 := qTomb("k", qMk("k", 3)), qTomb("k", qMk("k", 4))
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
			f := qDeltaFIFO(qNewKnown(qMk("k", 0)), false)
			require.NoError(t, f.Delete(tt.first))
			require.NoError(t, f.Delete(tt.second))
			assert.Equal(t, Deltas{{Deleted, tt.want}}, qPopDeltas(t, f))
		})
	}
	t.Run("only consecutive deletions collapse", func(t *testing.T) {
		f := qDeltaFIFO(nil, false)
		require.NoError(t, f.Add(real1))
		require.NoError(t, f.Delete(real1))
		require.NoError(t, f.Add(real2))
		require.NoError(t, f.Delete(real2))
		require.NoError(t, f.Delete(real2))
		assert.Equal(t, Deltas{{Added, real1}, {Deleted, real1}, {Added, real2}, {Deleted, real2}}, qPopDeltas(t, f))
	})
}

func TestDeltaFIFO_DeleteOfUnknownObjectIsIgnored(t *testing.T) {
	known := qNewKnown(qMk("known", 5))
	known.failGet["broken"] = true
	tests := []struct {
		name  string
		known KeyListerGetter
		setup []interface{}
		del   qObj
		want  []Deltas
	}{
		{name: "no known objects, not queued", del: qMk("x", 1)},
		{name: "no known objects, queued", setup: []interface{}{qMk("x", 1)}, del: qMk("x", 2),
			want: []Deltas{{{Added, qMk("x", 1)}, {Deleted, qMk("x", 2)}}}},
		{name: "known objects lack it", known: known, del: qMk("x", 1)},
		{name: "known objects have it", known: known, del: qMk("known", 6),
			want: []Deltas{{{Deleted, qMk("known", 6)}}}},
		{name: "known objects lookup fails", known: known, del: qMk("broken", 1),
			want: []Deltas{{{Deleted, qMk("broken", 1)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := qDeltaFIFO(tt.known, false)
			for _, o := range tt.setup {
				require.NoError(t, f.Add(o))
			}
			require.NoError(t, f.Delete(tt.del))
			assert.Equal(t, tt.want, qDrain(t, f))
		})
	}
}

func TestDeltaFIFO_Replace(t *testing.T) {
	tests := []struct {
		name         string
		known        []qObj
		noKnown      bool
		emitReplaced bool
		before       func(t *testing.T, f *DeltaFIFO)
		list         []interface{}
		want         []Deltas
	}{
		{
			name:  "sync deltas for listed, tombstones for known keys missing",
			known: []qObj{qMk("foo", 5), qMk("bar", 6), qMk("baz", 7)},
			list:  []interface{}{qMk("foo", 5)},
			want: []Deltas{
				{{Sync, qMk("foo", 5)}},
				{{Deleted, qTomb("bar", qMk("bar", 6))}},
				{{Deleted, qTomb("baz", qMk("baz", 7))}},
			},
		},
		{
			name:         "replaced deltas with EmitDeltaTypeReplaced",
			known:        []qObj{qMk("foo", 5), qMk("bar", 6)},
			emitReplaced: true,
			list:         []interface{}{qMk("foo", 6)},
			want: []Deltas{
				{{Replaced, qMk("foo", 6)}},
				{{Deleted, qTomb("bar", qMk("bar", 6))}},
			},
		},
		{
			name:  "queued delete is kept, no second deletion",
			known: []qObj{qMk("foo", 5), qMk("bar", 6), qMk("baz", 7)},
			before: func(t *testing.T, f *DeltaFIFO) {
				require.NoError(t, f.Delete(qMk("baz", 10)))
			},
			list: []interface{}{qMk("foo", 5)},
			want: []Deltas{
				{{Deleted, qMk("baz", 10)}},
				{{Sync, qMk("foo", 5)}},
				{{Deleted, qTomb("bar", qMk("bar", 6))}},
			},
		},
		{
			name:  "queued add gets a tombstone with the queued object",
			known: []qObj{qMk("foo", 5), qMk("baz", 7)},
			before: func(t *testing.T, f *DeltaFIFO) {
				require.NoError(t, f.Add(qMk("baz", 10)))
			},
			list: []interface{}{qMk("foo", 5)},
			want: []Deltas{
				{{Added, qMk("baz", 10)}, {Deleted, qTomb("baz", qMk("baz", 10))}},
				{{Sync, qMk("foo", 5)}},
			},
		},
		{
			name:  "deleted then recreated in queue, then gone from the list",
			known: []qObj{qMk("foo", 5), qMk("bar", 6), qMk("baz", 7)},
			before: func(t *testing.T, f *DeltaFIFO) {
				require.NoError(t, f.Delete(qMk("bar", 6)))
				require.NoError(t, f.Add(qMk("bar", 100)))
			},
			list: []interface{}{qMk("foo", 5)},
			want: []Deltas{
				{{Deleted, qMk("bar", 6)}, {Added, qMk("bar", 100)}, {Deleted, qTomb("bar", qMk("bar", 100))}},
				{{Sync, qMk("foo", 5)}},
				{{Deleted, qTomb("baz", qMk("baz", 7))}},
			},
		},
		{
			name:  "tombstone of a tombstone carries the inner object",
			known: []qObj{qMk("foo", 5)},
			before: func(t *testing.T, f *DeltaFIFO) {
				require.NoError(t, f.Replace([]interface{}{}, "1"))
			},
			list: []interface{}{},
			want: []Deltas{
				{{Deleted, qTomb("foo", qMk("foo", 5))}},
			},
		},
		{
			name:    "without known objects, only queued keys get tombstones",
			noKnown: true,
			before: func(t *testing.T, f *DeltaFIFO) {
				require.NoError(t, f.Add(qMk("baz", 10)))
				require.NoError(t, f.Add(qMk("zed", 1)))
				require.NoError(t, f.Add(qMk("abc", 1)))
			},
			list: []interface{}{qMk("foo", 5), qMk("zed", 2)},
			want: []Deltas{
				{{Added, qMk("baz", 10)}, {Deleted, qTomb("baz", qMk("baz", 10))}},
				{{Added, qMk("zed", 1)}, {Sync, qMk("zed", 2)}},
				{{Added, qMk("abc", 1)}, {Deleted, qTomb("abc", qMk("abc", 1))}},
				{{Sync, qMk("foo", 5)}},
			},
		},
		{
			name:  "delete queued before replace that re-lists the object (kubernetes#83810)",
			known: []qObj{qMk("foo", 1)},
			before: func(t *testing.T, f *DeltaFIFO) {
				require.NoError(t, f.Delete(qMk("foo", 1)))
			},
			list: []interface{}{qMk("foo", 2)},
			want: []Deltas{{{Deleted, qMk("foo", 1)}, {Sync, qMk("foo", 2)}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var known KeyListerGetter
			if !tt.noKnown {
				known = qNewKnown(tt.known...)
			}
			f := qDeltaFIFO(known, tt.emitReplaced)
			if tt.before != nil {
				tt.before(t, f)
			}
			require.NoError(t, f.Replace(tt.list, "10"))
			assert.Equal(t, tt.want, qDrain(t, f))
		})
	}
}

func TestDeltaFIFO_ReplaceKnownLookupFailures(t *testing.T) {
	known := qNewKnown(qMk("a", 1), qMk("b", 2))
	known.failGet["a"] = true
	f := qDeltaFIFO(known, true)
	require.NoError(t, f.Replace(nil, "1"))
	assert.Equal(t, []Deltas{
		{{Deleted, qTomb("a", nil)}},
		{{Deleted, qTomb("b", qMk("b", 2))}},
	}, qDrain(t, f))
}

// qInitialProbe pops n items and reports (isInInitialList, HasSynced after).
func qInitialProbe(t *testing.T, q Queue, n int) (initial []bool, synced []bool) {
	for i := 0; i < n; i++ {
		_, in := qPopObj(t, q)
		initial = append(initial, in)
		synced = append(synced, q.HasSynced())
	}
	return initial, synced
}

func TestDeltaFIFO_HasSyncedAndInitialList(t *testing.T) {
	t.Run("initial replace with deletions", func(t *testing.T) {
		f := qDeltaFIFO(qNewKnown(qMk("foo", 5), qMk("bar", 6), qMk("baz", 7)), false)
		require.NoError(t, f.Replace([]interface{}{qMk("foo", 5)}, "0"))
		assert.False(t, f.HasSynced())
		initial, synced := qInitialProbe(t, f, 3)
		assert.Equal(t, []bool{true, true, true}, initial)
		assert.Equal(t, []bool{false, false, true}, synced)
		require.NoError(t, f.Add(qMk("late", 1)))
		_, in := qPopObj(t, f)
		assert.False(t, in)
	})
	tests := []struct {
		name string
		ops  func(t *testing.T, f *DeltaFIFO)
		want bool
	}{
		{"nothing", func(*testing.T, *DeltaFIFO) {}, false},
		{"add first", func(t *testing.T, f *DeltaFIFO) { require.NoError(t, f.Add(qMk("a", 1))) }, true},
		{"update first", func(t *testing.T, f *DeltaFIFO) { require.NoError(t, f.Update(qMk("a", 1))) }, true},
		{"ignored delete first", func(t *testing.T, f *DeltaFIFO) { require.NoError(t, f.Delete(qMk("a", 1))) }, true},
		{"empty replace", func(t *testing.T, f *DeltaFIFO) { require.NoError(t, f.Replace(nil, "1")) }, true},
		{"replace unpopped", func(t *testing.T, f *DeltaFIFO) {
			require.NoError(t, f.Replace([]interface{}{qMk("a", 1), qMk("b", 2)}, "1"))
		}, false},
		{"replace half popped", func(t *testing.T, f *DeltaFIFO) {
			require.NoError(t, f.Replace([]interface{}{qMk("a", 1), qMk("b", 2)}, "1"))
			qPopObj(t, f)
		}, false},
		{"replace popped", func(t *testing.T, f *DeltaFIFO) {
			require.NoError(t, f.Replace([]interface{}{qMk("a", 1), qMk("b", 2)}, "1"))
			qPopObj(t, f)
			qPopObj(t, f)
		}, true},
		{"duplicate key in replace is one item", func(t *testing.T, f *DeltaFIFO) {
			require.NoError(t, f.Replace([]interface{}{qMk("a", 1), qMk("a", 2)}, "1"))
			qPopObj(t, f)
		}, true},
		{"second replace does not reset", func(t *testing.T, f *DeltaFIFO) {
			require.NoError(t, f.Replace([]interface{}{qMk("a", 1)}, "1"))
			qPopObj(t, f)
			require.NoError(t, f.Replace([]interface{}{qMk("b", 1)}, "2"))
		}, true},
		{"resync does not populate", func(t *testing.T, f *DeltaFIFO) {
			require.NoError(t, f.Resync())
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := qDeltaFIFO(nil, false)
			tt.ops(t, f)
			assert.Equal(t, tt.want, f.HasSynced())
			assert.Equal(t, tt.want, IsDone(f.HasSyncedChecker()))
		})
	}
}

// Difference from client-go: Done closes only once the last initial item
// has been processed, so a waiter never runs alongside that processing.
func TestDeltaFIFO_DoneClosesAfterLastInitialItemIsProcessed(t *testing.T) {
	f := qDeltaFIFO(nil, false)
	require.NoError(t, f.Replace([]interface{}{qMk("a", 1)}, "1"))
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
		known := qNewKnown(qMk("a", 1), qMk("b", 2), qMk("c", 3))
		f := qDeltaFIFO(known, false)
		require.NoError(t, f.Update(qMk("b", 5)))
		require.NoError(t, f.Resync())
		assert.Equal(t, []Deltas{
			{{Updated, qMk("b", 5)}},
			{{Sync, qMk("a", 1)}},
			{{Sync, qMk("c", 3)}},
		}, qDrain(t, f))
	})
	t.Run("queued delete suppresses the sync", func(t *testing.T) {
		f := qDeltaFIFO(qNewKnown(qMk("foo", 5)), false)
		require.NoError(t, f.Delete(qMk("foo", 10)))
		require.NoError(t, f.Resync())
		assert.Equal(t, []Deltas{{{Deleted, qMk("foo", 10)}}}, qDrain(t, f))
	})
	t.Run("no known objects", func(t *testing.T) {
		f := qDeltaFIFO(nil, false)
		require.NoError(t, f.Resync())
		assert.Empty(t, qDrain(t, f))
	})
	t.Run("lookup failures are skipped, key errors reported after the rest", func(t *testing.T) {
		known := qNewKnown(qMk("a", 1), qMk("c", 3))
		known.failGet["a"] = true
		known.set("b", 42) // no key
		f := qDeltaFIFO(known, false)
		err := f.Resync()
		var ke KeyError
		assert.True(t, errors.As(err, &ke), "got %v", err)
		assert.Equal(t, []Deltas{{{Sync, qMk("c", 3)}}}, qDrain(t, f))
	})
}

func TestDeltaFIFO_CloseUnblocksPop(t *testing.T) {
	f := qDeltaFIFO(nil, false)
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
	f := qDeltaFIFO(nil, false)
	require.NoError(t, f.Add(qMk("a", 1)))
	boom := errors.New("boom")
	obj, err := f.Pop(func(interface{}, bool) error { return boom })
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, Deltas{{Added, qMk("a", 1)}}, obj)
	assert.Empty(t, qDrain(t, f))
}

// qCountingTransform increments xf on qObjs and rejects tombstones.
func qCountingTransform(t *testing.T) TransformFunc {
	return func(obj interface{}) (interface{}, error) {
		switch o := obj.(type) {
		case qObj:
			o.xf++
			return o, nil
		default:
			t.Errorf("transformer called with %#v", obj)
			return obj, nil
		}
	}
}

func TestDeltaFIFO_Transformer(t *testing.T) {
	xf := func(name string, val int) qObj { return qObj{name: name, val: val, xf: 1} }
	known := qNewKnown(qMk("k", 1)) // known objects were transformed already
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{
		KeyFunction: qKey, KnownObjects: known, EmitDeltaTypeReplaced: true, Transformer: qCountingTransform(t),
	})
	assert.NotNil(t, f.Transformer())
	require.NoError(t, f.Add(qMk("a", 1)))
	require.NoError(t, f.Update(qMk("a", 2)))
	require.NoError(t, f.Delete(qMk("a", 3)))
	require.NoError(t, f.Add(qMk("b", 1)))
	require.NoError(t, f.Resync()) // Sync of k: not transformed
	require.NoError(t, f.Replace([]interface{}{qMk("c", 1)}, "5"))
	assert.Equal(t, []Deltas{
		{{Added, xf("a", 1)}, {Updated, xf("a", 2)}, {Deleted, xf("a", 3)}},
		{{Added, xf("b", 1)}, {Deleted, qTomb("b", xf("b", 1))}},
		{{Sync, qMk("k", 1)}, {Deleted, qTomb("k", qMk("k", 1))}},
		{{Replaced, xf("c", 1)}},
	}, qDrain(t, f))
}

func TestDeltaFIFO_TransformerErrors(t *testing.T) {
	boom := errors.New("boom")
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{
		KeyFunction: qKey,
		Transformer: func(obj interface{}) (interface{}, error) {
			if obj.(qObj).val < 0 {
				return nil, boom
			}
			return obj, nil
		},
	})
	assert.ErrorIs(t, f.Add(qMk("a", -1)), boom)
	assert.ErrorIs(t, f.Update(qMk("a", -1)), boom)
	require.NoError(t, f.Add(qMk("b", 1)))
	assert.ErrorIs(t, f.Delete(qMk("b", -1)), boom)
	// Difference from client-go: a failing Replace queues nothing at all.
	assert.ErrorIs(t, f.Replace([]interface{}{qMk("c", 1), qMk("d", -1)}, "1"), boom)
	assert.Equal(t, []Deltas{{{Added, qMk("b", 1)}}}, qDrain(t, f))
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
		{name: "tombstone", obj: qTomb("B", nil), want: "B"},
		{name: "deltas", obj: Deltas{{Added, qTomb("x", nil)}, {Updated, pod}}, want: "ns/p"},
		{name: "deltas ending in tombstone", obj: Deltas{{Deleted, qTomb("D", nil)}}, want: "D"},
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
	f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: qNewKnown()})
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
	assert.Empty(t, qDrain(t, f))
}

func TestDeltaFIFO_ZeroValueAndOptions(t *testing.T) {
	var f DeltaFIFO
	assert.Equal(t, "DeltaFIFO", f.Name())
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	require.NoError(t, f.Add(pod))
	assert.Equal(t, Deltas{{Added, pod}}, qPopDeltas(t, &f))

	logger := klog.Background()
	g := NewDeltaFIFOWithOptions(DeltaFIFOOptions{Name: "pods", Logger: &logger})
	assert.Equal(t, "pods", g.Name())
	assert.Equal(t, "pods", g.HasSyncedChecker().Name())
	assert.Nil(t, g.Transformer())

	// The deprecated constructor emits Sync on Replace.
	h := NewDeltaFIFO(qKey, qNewKnown())
	require.NoError(t, h.Replace([]interface{}{qMk("a", 1)}, "1"))
	assert.Equal(t, []Deltas{{{Sync, qMk("a", 1)}}}, qDrain(t, h))
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
	known := qNewKnown()
	f := qDeltaFIFO(known, true)
	const perProducer = 300
	var wg sync.WaitGroup
	for p := 0; p < 2; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= perProducer; i++ {
				assert.NoError(t, f.Add(qMk(fmt.Sprintf("p%d-%d", p, i), i)))
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
		d := qPopDeltas(t, f)
		for _, delta := range d {
			o := delta.Object.(qObj)
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
