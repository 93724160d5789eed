package store

import (
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
)

func TestMapMaintainsIndices(t *testing.T) {
	type op struct {
		do  string // put, delete, replace
		obj []*v1.Pod
	}
	a1 := testPod("ns1", "a", "1", "app", "web", "tier", "fe")
	a2 := testPod("ns1", "a", "2", "app", "db") // app changes, tier dropped
	a3 := testPod("ns2", "a", "3", "app", "db") // different key (namespace)
	b1 := testPod("ns1", "b", "4", "app", "web")
	c1 := testPod("", "c", "5")
	cases := []struct {
		name string
		ops  []op
		want []*v1.Pod
	}{
		{name: "put", ops: []op{{"put", []*v1.Pod{a1, b1, c1}}}, want: []*v1.Pod{a1, b1, c1}},
		{name: "put changes indexed values", ops: []op{{"put", []*v1.Pod{a1, b1}}, {"put", []*v1.Pod{a2}}}, want: []*v1.Pod{a2, b1}},
		{name: "put with same values", ops: []op{{"put", []*v1.Pod{a1}}, {"put", []*v1.Pod{a1}}}, want: []*v1.Pod{a1}},
		{name: "delete", ops: []op{{"put", []*v1.Pod{a1, b1, a3}}, {"delete", []*v1.Pod{a1}}}, want: []*v1.Pod{b1, a3}},
		{name: "delete all drops values", ops: []op{{"put", []*v1.Pod{a1, b1}}, {"delete", []*v1.Pod{a1, b1}}}, want: nil},
		{name: "delete absent", ops: []op{{"put", []*v1.Pod{a1}}, {"delete", []*v1.Pod{b1}}}, want: []*v1.Pod{a1}},
		{name: "replace rebuilds", ops: []op{{"put", []*v1.Pod{a1, b1}}, {"replace", []*v1.Pod{a3, c1}}}, want: []*v1.Pod{a3, c1}},
		{name: "replace duplicate key last wins", ops: []op{{"replace", []*v1.Pod{a1, b1, a2}}}, want: []*v1.Pod{a2, b1}},
		{name: "replace empty", ops: []op{{"put", []*v1.Pod{a1}}, {"replace", nil}}, want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			indexers := testIndexers()
			m := newTestMap(indexers, false)
			for _, o := range tc.ops {
				switch o.do {
				case "replace":
					list := make([]any, 0, len(o.obj))
					for _, p := range o.obj {
						list = append(list, p)
					}
					require.NoError(t, replace(m, "99", list...))
				default:
					for _, p := range o.obj {
						switch o.do {
						case "put":
							require.NoError(t, put(m, p))
						case "delete":
							m.Delete(testKey(p), p)
						}
					}
				}
				checkIndices(t, m, indexers)
			}
			want := map[string]any{}
			for _, p := range tc.want {
				want[testKey(p)] = p
			}
			assert.Equal(t, want, contents(t, m))
		})
	}
}

func TestMapPutReturnsThePreviousObject(t *testing.T) {
	for _, indexers := range []map[string]IndexFunc{nil, testIndexers()} {
		m := newTestMap(indexers, false)
		a1, a2 := testPod("ns", "a", "1"), testPod("ns", "a", "2")
		prev, existed, err := m.Put("ns/a", a1)
		require.NoError(t, err)
		assert.False(t, existed)
		assert.Nil(t, prev)
		prev, existed, err = m.Put("ns/a", a2)
		require.NoError(t, err)
		assert.True(t, existed)
		assert.Same(t, a1, prev)
	}
}

func TestMapIndexQueries(t *testing.T) {
	m := newTestMap(testIndexers(), false)
	a := testPod("ns1", "a", "1", "app", "web", "tier", "fe")
	b := testPod("ns1", "b", "2", "app", "web")
	c := testPod("ns2", "c", "3", "app", "db", "tier", "fe")
	for _, p := range []*v1.Pod{a, b, c} {
		require.NoError(t, put(m, p))
	}
	keysOf := func(objs []any) []string {
		out := []string{}
		for _, o := range objs {
			out = append(out, testKey(o))
		}
		sort.Strings(out)
		return out
	}
	cases := []struct {
		name  string
		index string
		probe any
		want  []string
		err   bool
	}{
		{name: "namespace", index: "namespace", probe: testPod("ns1", "zz", ""), want: []string{"ns1/a", "ns1/b"}},
		{name: "namespace none", index: "namespace", probe: testPod("ns9", "zz", ""), want: []string{}},
		{name: "single value", index: "app", probe: testPod("x", "y", "", "app", "db"), want: []string{"ns2/c"}},
		{name: "multi value union deduped", index: "labels", probe: testPod("x", "y", "", "app", "web", "tier", "fe"), want: []string{"ns1/a", "ns1/b", "ns2/c"}},
		{name: "no values", index: "labels", probe: testPod("x", "y", ""), want: []string{}},
		{name: "unknown index", index: "nope", probe: a, err: true},
		{name: "index func error", index: "app", probe: &v1.Node{}, err: true},
		{name: "namespace of non-object", index: "namespace", probe: "str", err: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := m.Index(tc.index, tc.probe)
			if tc.err {
				require.Error(t, err)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, keysOf(got))
		})
	}

	t.Run("unknown index name", func(t *testing.T) {
		_, err := m.ByIndex("nope", "x")
		assert.ErrorContains(t, err, "nope")
		_, err = m.IndexKeys("nope", "x")
		assert.ErrorContains(t, err, "nope")
		assert.Empty(t, m.ListIndexFuncValues("nope"))
	})
	t.Run("absent value", func(t *testing.T) {
		objs, err := m.ByIndex("app", "none")
		require.NoError(t, err)
		assert.Empty(t, objs)
		keys, err := m.IndexKeys("app", "none")
		require.NoError(t, err)
		assert.Empty(t, keys)
	})
	t.Run("values", func(t *testing.T) {
		vals := m.ListIndexFuncValues("labels")
		sort.Strings(vals)
		assert.Equal(t, []string{"app=db", "app=web", "tier=fe"}, vals)
	})
}

// TestMapStoresObjectsAnIndexFunctionFailsOnOutsideThatIndex checks the one
// rule for index function failures, for single writes, transactions and
// replacements alike: the object is stored and left out of the index that
// failed (every other index lists it), the write reports an error naming the
// index and the key, and a list is never dropped whole because of one object.
func TestMapStoresObjectsAnIndexFunctionFailsOnOutsideThatIndex(t *testing.T) {
	good := testPod("ns", "a", "1", "app", "x")
	bad := testPod("ns", "a", "2", "app", "y", "bad", "true")
	other := testPod("ns", "b", "3", "app", "x")
	indexers := map[string]IndexFunc{"name": failingIndex, "app": appIndex, "namespace": testNamespaceIndex}
	view := func(t *testing.T, m *Map) indexView {
		return viewOf(t, m, []string{"name", "app", "namespace"})
	}

	t.Run("put stores the object outside the failing index", func(t *testing.T) {
		m := newTestMap(indexers, false)
		err := put(m, bad)
		require.ErrorIs(t, err, errBadIndex)
		assert.True(t, IsIndexError(err))
		assert.ErrorContains(t, err, `"name"`)
		assert.ErrorContains(t, err, "ns/a")
		assert.Equal(t, map[string]any{"ns/a": bad}, contents(t, m))
		assert.Equal(t, "2", m.ResourceVersion())
		assert.Equal(t, indexView{
			"name":      {},
			"app":       {"y": {"ns/a"}},
			"namespace": {"ns": {"ns/a"}},
		}, view(t, m))
	})
	t.Run("put moves the object out of the failing index and back", func(t *testing.T) {
		m := newTestMap(indexers, false)
		require.NoError(t, put(m, good))
		require.ErrorIs(t, put(m, bad), errBadIndex)
		obj, ok := m.Get("ns/a")
		require.True(t, ok)
		assert.Same(t, bad, obj)
		assert.Equal(t, indexView{
			"name":      {},
			"app":       {"y": {"ns/a"}},
			"namespace": {"ns": {"ns/a"}},
		}, view(t, m))
		fixed := testPod("ns", "a", "4", "app", "x")
		require.NoError(t, put(m, fixed))
		assert.Equal(t, indexView{
			"name":      {"a": {"ns/a"}},
			"app":       {"x": {"ns/a"}},
			"namespace": {"ns": {"ns/a"}},
		}, view(t, m))
	})
	t.Run("delete never needs the index function", func(t *testing.T) {
		m := newTestMap(indexers, false)
		require.ErrorIs(t, put(m, bad), errBadIndex)
		m.Delete("ns/a", good)
		assert.Empty(t, m.List())
		assert.Equal(t, indexView{"name": {}, "app": {}, "namespace": {}}, view(t, m))
	})
	t.Run("replace applies the whole list", func(t *testing.T) {
		m := newTestMap(indexers, false)
		require.NoError(t, put(m, good))
		err := replace(m, "7", other, bad)
		require.ErrorIs(t, err, errBadIndex)
		assert.True(t, IsIndexError(err))
		var failures *IndexFailures
		require.ErrorAs(t, err, &failures)
		assert.Equal(t, 1, failures.Total())
		assert.ErrorContains(t, err, "ns/a")
		assert.Equal(t, map[string]any{"ns/a": bad, "ns/b": other}, contents(t, m))
		assert.Equal(t, "7", m.ResourceVersion())
		assert.Equal(t, indexView{
			"name":      {"b": {"ns/b"}},
			"app":       {"x": {"ns/b"}, "y": {"ns/a"}},
			"namespace": {"ns": {"ns/a", "ns/b"}},
		}, view(t, m))
		// Replacing it by a good object indexes it again.
		require.NoError(t, replace(m, "8", good))
		assert.Equal(t, indexView{
			"name":      {"a": {"ns/a"}},
			"app":       {"x": {"ns/a"}},
			"namespace": {"ns": {"ns/a"}},
		}, view(t, m))
	})
	t.Run("replace counts each object once and keeps the first errors", func(t *testing.T) {
		m := newTestMap(map[string]IndexFunc{"name": failingIndex, "fails-too": failingIndex}, false)
		var objs []any
		for i := 0; i < 8; i++ {
			objs = append(objs, testPod("ns", "p"+strconv.Itoa(i), "1", "bad", "true"))
		}
		err := replace(m, "9", objs...)
		var failures *IndexFailures
		require.ErrorAs(t, err, &failures)
		assert.Equal(t, 8, failures.Total())
		assert.Len(t, failures.Unwrap(), indexFailuresKept)
		assert.ErrorContains(t, err, "8 objects stored outside the indices that failed on them")
		assert.ErrorContains(t, err, "; and 3 more")
		assert.Len(t, m.ListKeys(), 8)
	})
	t.Run("transaction applies the write and reports it", func(t *testing.T) {
		m := newTestMap(indexers, false)
		failures := m.Transaction([]Write{
			{Op: OpAdd, Key: "ns/a", Object: bad},
			{Op: OpAdd, Key: "ns/b", Object: other},
		}, nil)
		require.Len(t, failures, 1)
		assert.Equal(t, 0, failures[0].Pos)
		assert.True(t, failures[0].Applied)
		require.ErrorIs(t, failures[0].Err, errBadIndex)
		assert.Equal(t, map[string]any{"ns/a": bad, "ns/b": other}, contents(t, m))
		assert.Equal(t, indexView{
			"name":      {"b": {"ns/b"}},
			"app":       {"x": {"ns/b"}, "y": {"ns/a"}},
			"namespace": {"ns": {"ns/a", "ns/b"}},
		}, view(t, m))
	})
	t.Run("namespace index on non-object", func(t *testing.T) {
		m := newTestMap(map[string]IndexFunc{"namespace": testNamespaceIndex}, false)
		_, _, err := m.Put("k", "not an object")
		require.ErrorIs(t, err, errNoObjectMeta)
		assert.True(t, IsIndexError(err))
		assert.Equal(t, []any{"not an object"}, m.List())
		assert.Empty(t, m.ListIndexFuncValues("namespace"))
		// Replacing it by an object puts the key in the index.
		_, _, err = m.Put("k", good)
		require.NoError(t, err)
		keys, err := m.IndexKeys("namespace", "ns")
		require.NoError(t, err)
		assert.Equal(t, []string{"k"}, keys)
		m.Delete("k", good)
		assert.Empty(t, m.ListIndexFuncValues("namespace"))
		require.Error(t, m.Replace([]string{"k"}, []any{"still not an object"}, "3"))
		assert.Equal(t, []any{"still not an object"}, m.List())
		assert.Empty(t, m.ListIndexFuncValues("namespace"))
	})
	t.Run("nil index function", func(t *testing.T) {
		m := newTestMap(map[string]IndexFunc{"nil": nil}, false)
		err := put(m, good)
		assert.Error(t, err)
		assert.True(t, IsIndexError(err))
		assert.Equal(t, []any{good}, m.List())
		assert.Empty(t, m.ListIndexFuncValues("nil"))
	})
	t.Run("other errors are not index errors", func(t *testing.T) {
		assert.False(t, IsIndexError(nil))
		assert.False(t, IsIndexError(errBadIndex))
	})
}

// TestMapNamespaceIndexFuncIsComputedInline: an index using the configured
// namespace function reads the namespace without calling it; without one
// configured, the same function is an index like any other.
func TestMapNamespaceIndexFuncIsComputedInline(t *testing.T) {
	calls := 0
	counting := func(obj any) ([]string, error) {
		calls++
		return testNamespaceIndex(obj)
	}
	inline := New(Config{Indexers: map[string]IndexFunc{"namespace": counting}, NamespaceIndexFunc: counting})
	require.NoError(t, put(inline, testPod("ns", "a", "1")))
	assert.Zero(t, calls, "inline")
	checkIndices(t, inline, map[string]IndexFunc{"namespace": testNamespaceIndex})

	called := New(Config{Indexers: map[string]IndexFunc{"namespace": counting}})
	require.NoError(t, put(called, testPod("ns", "a", "1")))
	assert.Equal(t, 1, calls, "without NamespaceIndexFunc")
	checkIndices(t, called, map[string]IndexFunc{"namespace": testNamespaceIndex})
}

func TestMapAddIndexers(t *testing.T) {
	pods := []*v1.Pod{
		testPod("ns1", "a", "1", "app", "web"),
		testPod("ns2", "b", "2", "app", "db", "tier", "be"),
		testPod("", "c", "3"),
	}
	all := testIndexers()
	cases := []struct {
		name     string
		initial  map[string]IndexFunc
		add      map[string]IndexFunc
		wantErr  bool
		finalSet map[string]IndexFunc
	}{
		{name: "to empty indexer set", initial: map[string]IndexFunc{}, add: all, finalSet: all},
		{name: "namespace later", initial: map[string]IndexFunc{"app": appIndex}, add: map[string]IndexFunc{"namespace": testNamespaceIndex, "labels": labelValuesIndex}, finalSet: all},
		{name: "generic later", initial: map[string]IndexFunc{"namespace": testNamespaceIndex}, add: map[string]IndexFunc{"labels": labelValuesIndex}, finalSet: map[string]IndexFunc{"namespace": testNamespaceIndex, "labels": labelValuesIndex}},
		{name: "conflict", initial: map[string]IndexFunc{"app": appIndex}, add: map[string]IndexFunc{"app": labelValuesIndex, "x": appIndex}, wantErr: true, finalSet: map[string]IndexFunc{"app": appIndex}},
		{name: "nil function", initial: map[string]IndexFunc{"app": appIndex}, add: map[string]IndexFunc{"x": nil}, wantErr: true, finalSet: map[string]IndexFunc{"app": appIndex}},
		{name: "failing function changes nothing", initial: map[string]IndexFunc{"app": appIndex}, add: map[string]IndexFunc{"x": appIndex, "z": func(any) ([]string, error) { return nil, errBadIndex }}, wantErr: true, finalSet: map[string]IndexFunc{"app": appIndex}},
		{name: "nothing", initial: map[string]IndexFunc{"app": appIndex}, add: nil, finalSet: map[string]IndexFunc{"app": appIndex}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMap(tc.initial, false)
			for _, p := range pods {
				require.NoError(t, put(m, p))
			}
			err := m.AddIndexers(tc.add)
			if tc.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			got := IndexersAs[map[string]IndexFunc](m)
			gotNames := make([]string, 0, len(got))
			for n := range got {
				gotNames = append(gotNames, n)
			}
			wantNames := make([]string, 0, len(tc.finalSet))
			for n := range tc.finalSet {
				wantNames = append(wantNames, n)
			}
			assert.ElementsMatch(t, wantNames, gotNames)
			checkIndices(t, m, tc.finalSet)
			// Later writes keep every index right.
			require.NoError(t, put(m, testPod("ns1", "a", "4", "app", "db", "tier", "fe")))
			m.Delete(testKey(pods[1]), pods[1])
			require.NoError(t, put(m, testPod("ns3", "d", "5", "app", "web")))
			checkIndices(t, m, tc.finalSet)
		})
	}
	t.Run("IndexersAs returns a copy of the caller's type", func(t *testing.T) {
		type namedFunc func(obj any) ([]string, error)
		m := newTestMap(map[string]IndexFunc{"app": appIndex}, false)
		got := IndexersAs[map[string]namedFunc](m)
		got["other"] = appIndex
		assert.Len(t, IndexersAs[map[string]namedFunc](m), 1)
	})
	t.Run("New copies indexers", func(t *testing.T) {
		in := map[string]IndexFunc{"app": appIndex}
		m := newTestMap(in, false)
		in["late"] = appIndex
		assert.Len(t, IndexersAs[map[string]IndexFunc](m), 1)
		_, err := m.ByIndex("late", "x")
		assert.Error(t, err)
	})
}

func TestMapMutatedObjectKeepsIndicesConsistent(t *testing.T) {
	m := newTestMap(map[string]IndexFunc{"app": appIndex}, false)
	p := testPod("ns", "a", "1", "app", "web")
	require.NoError(t, put(m, p))
	// A careless caller mutates the stored object in place.
	p.Labels["app"] = "db"
	m.Delete("ns/a", p)
	assert.Empty(t, m.ListIndexFuncValues("app"), "no stale entry for the value the object had when stored")
}

// TestMapMutatedNamespaceKeepsNamespaceIndexConsistent: the namespace index
// reads the stored object's namespace instead of remembering it, so a caller
// that moves a stored object to another namespace in place must not leave
// its key under the old namespace, whether the key is then written (into
// the mutated namespace or back) or deleted.
func TestMapMutatedNamespaceKeepsNamespaceIndexConsistent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		then   func(m *Map) error
		wantNS map[string][]string
	}{
		// The store takes the stored object's namespace at its word, as
		// client-go does: the key stays where the index holds it.
		{"put into the mutated namespace", func(m *Map) error { _, _, err := m.Put("a", testPod("y", "a", "2")); return err }, map[string][]string{"x": {"a"}}},
		{"put into a third namespace", func(m *Map) error { _, _, err := m.Put("a", testPod("z", "a", "2")); return err }, map[string][]string{"z": {"a"}}},
		{"put into the original namespace", func(m *Map) error { _, _, err := m.Put("a", testPod("x", "a", "2")); return err }, map[string][]string{"x": {"a"}}},
		{"delete", func(m *Map) error { m.Delete("a", testPod("z", "a", "2")); return nil }, map[string][]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, indexers := range []map[string]IndexFunc{
				{"namespace": testNamespaceIndex},
				{"namespace": testNamespaceIndex, "app": appIndex},
			} {
				m := newTestMap(indexers, false) // the key stays when the namespace changes
				p := testPod("x", "a", "1", "app", "web")
				_, _, err := m.Put("a", p)
				require.NoError(t, err)
				p.Namespace = "y" // a careless caller mutates the stored object in place
				require.NoError(t, tc.then(m))
				got := map[string][]string{}
				for _, ns := range m.ListIndexFuncValues("namespace") {
					keys, err := m.IndexKeys("namespace", ns)
					require.NoError(t, err)
					got[ns] = keys
				}
				assert.Equal(t, tc.wantNS, got, "indexers %v", sortedNames(indexers))
			}
		})
	}
}

func TestMapTwoNamespaceIndices(t *testing.T) {
	indexers := map[string]IndexFunc{"namespace": testNamespaceIndex, "ns-again": testNamespaceIndex, "app": appIndex}
	m := newTestMap(indexers, false)
	require.NoError(t, replace(m, "3", testPod("ns1", "a", "1", "app", "x"), testPod("ns2", "b", "2", "app", "y")))
	checkIndices(t, m, indexers)
	m.Delete("ns1/a", nil)
	require.NoError(t, put(m, testPod("ns3", "c", "4")))
	checkIndices(t, m, indexers)
}

func TestMapConcurrentUse(t *testing.T) {
	indexers := testIndexers()
	m := newTestMap(indexers, false)
	var wg sync.WaitGroup
	const writers, perWriter = 4, 200
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				p := testPod("ns"+strconv.Itoa(i%3), "p"+strconv.Itoa(i%17), strconv.Itoa(i), "app", strconv.Itoa((i+w)%4))
				switch i % 4 {
				case 0, 1, 2:
					assert.NoError(t, put(m, p))
				case 3:
					m.Delete(testKey(p), p)
				}
				if i%50 == 0 {
					assert.Empty(t, m.Transaction([]Write{
						{Op: OpUpdate, Key: testKey(p), Object: p},
						{Op: OpDelete, Key: "ns0/p1", Object: testPod("ns0", "p1", "x")},
					}, nil))
				}
			}
		}(w)
	}
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				_ = m.List()
				_ = m.ListKeys()
				_ = m.Len()
				_, _ = m.ByIndex("namespace", "ns1")
				_, _ = m.IndexKeys("app", "1")
				_ = m.ListIndexFuncValues("labels")
				_, _ = m.Get("ns1/p1")
				_ = IndexersAs[map[string]IndexFunc](m)
				_ = m.ResourceVersion()
			}
		}()
	}
	wg.Wait()
	checkIndices(t, m, indexers)
}

func TestMapReplaceConcurrentWithAddIndexers(t *testing.T) {
	for round := 0; round < 20; round++ {
		m := newTestMap(map[string]IndexFunc{"app": appIndex}, false)
		list := make([]any, 0, 200)
		for i := 0; i < 200; i++ {
			list = append(list, testPod("ns"+strconv.Itoa(i%5), "p"+strconv.Itoa(i), "1", "app", strconv.Itoa(i%3)))
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			assert.NoError(t, replace(m, "9", list...))
		}()
		go func() {
			defer wg.Done()
			assert.NoError(t, m.AddIndexers(map[string]IndexFunc{"namespace": testNamespaceIndex, "labels": labelValuesIndex}))
		}()
		wg.Wait()
		checkIndices(t, m, map[string]IndexFunc{"app": appIndex, "namespace": testNamespaceIndex, "labels": labelValuesIndex})
		require.Len(t, m.ListKeys(), 200)
	}
}

func TestMapReplaceRebuildsWhenIndicesChangeMeanwhile(t *testing.T) {
	m := newTestMap(map[string]IndexFunc{"app": appIndex}, false)
	m.replaceBuilt = func() {
		m.replaceBuilt = nil
		require.NoError(t, m.AddIndexers(map[string]IndexFunc{"namespace": testNamespaceIndex, "labels": labelValuesIndex}))
	}
	require.NoError(t, replace(m, "3", testPod("ns1", "a", "1", "app", "x"), testPod("ns2", "b", "2", "app", "y", "tier", "z")))
	checkIndices(t, m, map[string]IndexFunc{"app": appIndex, "namespace": testNamespaceIndex, "labels": labelValuesIndex})

	// A failure found only when rebuilding under the lock leaves that
	// object out of the new index, as one found before.
	m.replaceBuilt = func() {
		m.replaceBuilt = nil
		require.NoError(t, m.AddIndexers(map[string]IndexFunc{"fails": failingIndex}))
	}
	err := replace(m, "6", testPod("ns1", "q", "5", "bad", "true"))
	require.ErrorIs(t, err, errBadIndex)
	assert.Equal(t, []string{"ns1/q"}, m.ListKeys())
	assert.Empty(t, m.ListIndexFuncValues("fails"))
	assert.Equal(t, []string{"ns1"}, m.ListIndexFuncValues("namespace"))
	assert.Equal(t, "6", m.ResourceVersion())
}

func TestMapReplaceMap(t *testing.T) {
	m := newTestMap(testIndexers(), false)
	a, b := testPod("ns", "a", "1", "app", "x"), testPod("ns", "b", "2", "app", "y")
	require.NoError(t, put(m, testPod("ns", "gone", "1")))
	require.NoError(t, m.ReplaceMap(map[string]any{"ns/a": a, "ns/b": b}, "5"))
	assert.Equal(t, map[string]any{"ns/a": a, "ns/b": b}, contents(t, m))
	checkIndices(t, m, testIndexers())
	assert.Equal(t, "5", m.ResourceVersion())
}

// TestReplaceWithDuplicateKeysIndexesTheObjectThatWins checks that when a
// Replace lists one key twice, the namespace index holds the key under the
// namespace of the later object only, including when one of the two has no
// object metadata (kept, it is stored outside the namespace index; either
// way the listed object the index failed on is reported).
func TestReplaceWithDuplicateKeysIndexesTheObjectThatWins(t *testing.T) {
	inNs1 := testPod("ns1", "a", "1")
	inNs2 := testPod("ns2", "a", "2")
	other := testPod("ns1", "b", "3")
	cases := []struct {
		name     string
		objs     []any
		want     map[string][]string // namespace -> keys
		failures int
	}{
		{name: "later namespace wins", objs: []any{inNs1, other, inNs2}, want: map[string][]string{"ns1": {"b"}, "ns2": {"a"}}},
		{name: "earlier namespace wins back", objs: []any{inNs2, inNs1, other}, want: map[string][]string{"ns1": {"a", "b"}}},
		{name: "object without metadata replaced", objs: []any{"no metadata", other, inNs2}, want: map[string][]string{"ns1": {"b"}, "ns2": {"a"}}, failures: 1},
		{name: "object without metadata kept", objs: []any{inNs2, other, "no metadata"}, want: map[string][]string{"ns1": {"b"}}, failures: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMap(map[string]IndexFunc{"namespace": testNamespaceIndex}, false)
			keys := []string{"a", "b", "a"}
			err := m.Replace(keys, tc.objs, "7")
			if tc.failures == 0 {
				require.NoError(t, err)
			} else {
				var failures *IndexFailures
				require.ErrorAs(t, err, &failures)
				require.Equal(t, tc.failures, failures.Total())
			}
			require.Equal(t, 2, m.Len())
			got := map[string][]string{}
			for _, ns := range m.ListIndexFuncValues("namespace") {
				keys, err := m.IndexKeys("namespace", ns)
				require.NoError(t, err)
				if len(keys) > 0 {
					slices.Sort(keys)
					got[ns] = keys
				}
			}
			require.Equal(t, tc.want, got)
		})
	}
}
