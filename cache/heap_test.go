package cache

import (
	"errors"
	"math/rand"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heapItem is a keyed integer for heap tests.
type heapItem struct {
	name string
	val  int
}

func heapKey(obj interface{}) (string, error) {
	it, ok := obj.(heapItem)
	if !ok {
		return "", errors.New("not a heap item")
	}
	return it.name, nil
}

func heapLess(a, b interface{}) bool { return a.(heapItem).val < b.(heapItem).val }

func newHeap() *Heap { return NewHeap(heapKey, heapLess) }

func popAllItems(t *testing.T, h *Heap) []heapItem {
	t.Helper()
	var out []heapItem
	for len(h.ListKeys()) > 0 {
		obj, err := h.Pop()
		require.NoError(t, err)
		out = append(out, obj.(heapItem))
	}
	return out
}

func TestHeapOperations(t *testing.T) {
	type step struct {
		op  string // add, addIfNotPresent, update, delete, bulk
		its []heapItem
		err bool
	}
	cases := []struct {
		name  string
		steps []step
		want  []heapItem
	}{
		{name: "orders by less", steps: []step{{op: "add", its: []heapItem{{"a", 5}, {"b", 1}, {"c", 3}}}},
			want: []heapItem{{"b", 1}, {"c", 3}, {"a", 5}}},
		{name: "add replaces and reorders", steps: []step{{op: "add", its: []heapItem{{"a", 5}, {"b", 1}}}, {op: "add", its: []heapItem{{"a", 0}}}},
			want: []heapItem{{"a", 0}, {"b", 1}}},
		{name: "update moves down", steps: []step{{op: "add", its: []heapItem{{"a", 1}, {"b", 2}, {"c", 3}}}, {op: "update", its: []heapItem{{"a", 9}}}},
			want: []heapItem{{"b", 2}, {"c", 3}, {"a", 9}}},
		{name: "add if not present keeps existing", steps: []step{{op: "add", its: []heapItem{{"a", 5}}}, {op: "addIfNotPresent", its: []heapItem{{"a", 0}, {"b", 1}}}},
			want: []heapItem{{"b", 1}, {"a", 5}}},
		{name: "delete", steps: []step{{op: "add", its: []heapItem{{"a", 1}, {"b", 2}, {"c", 3}}}, {op: "delete", its: []heapItem{{"a", 0}}}, {op: "delete", its: []heapItem{{"zz", 0}}, err: true}},
			want: []heapItem{{"b", 2}, {"c", 3}}},
		{name: "bulk add", steps: []step{{op: "add", its: []heapItem{{"a", 4}}}, {op: "bulk", its: []heapItem{{"b", 2}, {"a", 1}, {"c", 3}}}},
			want: []heapItem{{"a", 1}, {"b", 2}, {"c", 3}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHeap()
			for _, s := range tc.steps {
				var errs []error
				switch s.op {
				case "bulk":
					list := make([]interface{}, 0, len(s.its))
					for _, it := range s.its {
						list = append(list, it)
					}
					errs = append(errs, h.BulkAdd(list))
				default:
					for _, it := range s.its {
						switch s.op {
						case "add":
							errs = append(errs, h.Add(it))
						case "addIfNotPresent":
							errs = append(errs, h.AddIfNotPresent(it))
						case "update":
							errs = append(errs, h.Update(it))
						case "delete":
							errs = append(errs, h.Delete(it))
						}
					}
				}
				if s.err {
					assert.Error(t, errors.Join(errs...))
				} else {
					assert.NoError(t, errors.Join(errs...))
				}
			}
			keys := h.ListKeys()
			sort.Strings(keys)
			wantKeys := []string{}
			for _, it := range tc.want {
				wantKeys = append(wantKeys, it.name)
			}
			sort.Strings(wantKeys)
			assert.Equal(t, wantKeys, append([]string{}, keys...))
			assert.Len(t, h.List(), len(tc.want))
			for _, it := range tc.want {
				got, ok, err := h.GetByKey(it.name)
				require.NoError(t, err)
				require.True(t, ok)
				assert.Equal(t, it, got)
			}
			assert.Equal(t, tc.want, popAllItems(t, h))
		})
	}
}

func TestHeapKeyErrors(t *testing.T) {
	h := newHeap()
	require.NoError(t, h.Add(heapItem{"a", 1}))
	var ke KeyError
	assert.ErrorAs(t, h.Add("bad"), &ke)
	assert.ErrorAs(t, h.AddIfNotPresent("bad"), &ke)
	assert.ErrorAs(t, h.Delete("bad"), &ke)
	_, _, err := h.Get("bad")
	assert.ErrorAs(t, err, &ke)
	assert.ErrorAs(t, h.BulkAdd([]interface{}{heapItem{"b", 0}, "bad"}), &ke)
	assert.Equal(t, []string{"a"}, h.ListKeys(), "BulkAdd adds nothing when a key fails")
	obj, ok, err := h.Get(heapItem{"a", 99})
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, heapItem{"a", 1}, obj)
}

func TestHeapRandomizedOrder(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	h := newHeap()
	model := map[string]int{}
	for i := 0; i < 500; i++ {
		name := strconv.Itoa(r.Intn(60))
		switch r.Intn(4) {
		case 0, 1:
			v := r.Intn(1000)
			require.NoError(t, h.Add(heapItem{name, v}))
			model[name] = v
		case 2:
			err := h.Delete(heapItem{name, 0})
			_, had := model[name]
			assert.Equal(t, had, err == nil)
			delete(model, name)
		case 3:
			if len(model) == 0 {
				continue
			}
			obj, err := h.Pop()
			require.NoError(t, err)
			it := obj.(heapItem)
			for _, v := range model {
				require.LessOrEqual(t, it.val, v)
			}
			require.Equal(t, model[it.name], it.val)
			delete(model, it.name)
		}
	}
	prev := -1
	for _, it := range popAllItems(t, h) {
		require.GreaterOrEqual(t, it.val, prev)
		prev = it.val
		delete(model, it.name)
	}
	assert.Empty(t, model)
}

func TestHeapPopBlocksUntilAddOrClose(t *testing.T) {
	h := newHeap()
	got := make(chan interface{}, 1)
	go func() {
		obj, err := h.Pop()
		if err != nil {
			got <- err
			return
		}
		got <- obj
	}()
	select {
	case v := <-got:
		t.Fatalf("Pop returned %v before anything was added", v)
	default:
	}
	require.NoError(t, h.Add(heapItem{"a", 1}))
	select {
	case v := <-got:
		assert.Equal(t, heapItem{"a", 1}, v)
	case <-time.After(5 * time.Second):
		t.Fatal("Pop did not return after Add")
	}

	errCh := make(chan error, 1)
	go func() {
		_, err := h.Pop()
		errCh <- err
	}()
	h.Close()
	select {
	case err := <-errCh:
		assert.Error(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Pop did not return after Close")
	}
	assert.True(t, h.IsClosed())
	assert.Error(t, h.Add(heapItem{"b", 1}))
	assert.Error(t, h.AddIfNotPresent(heapItem{"b", 1}))
	assert.Error(t, h.BulkAdd([]interface{}{heapItem{"b", 1}}))
}

func TestHeapClosedStillDrains(t *testing.T) {
	h := newHeap()
	require.NoError(t, h.Add(heapItem{"a", 1}))
	h.Close()
	obj, err := h.Pop()
	require.NoError(t, err)
	assert.Equal(t, heapItem{"a", 1}, obj)
	_, err = h.Pop()
	assert.Error(t, err)
}

func TestHeapNilLessFuncDoesNotPanic(t *testing.T) {
	h := NewHeap(func(obj interface{}) (string, error) { return obj.(heapItem).name, nil }, nil)
	for i, name := range []string{"a", "b", "c"} {
		require.NoError(t, h.Add(heapItem{name: name, val: i}))
	}
	var got []string
	for i := 0; i < 3; i++ {
		obj, err := h.Pop()
		require.NoError(t, err)
		got = append(got, obj.(heapItem).name)
	}
	require.ElementsMatch(t, []string{"a", "b", "c"}, got)
}
