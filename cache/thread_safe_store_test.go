package cache

import (
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	clientcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache/internal/store/storetest"
)

// labelValuesIndex indexes pods by every "key=value" label pair (zero or
// more values per object).
func labelValuesIndex(obj interface{}) ([]string, error) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("not a pod: %T", obj)
	}
	out := make([]string, 0, len(p.Labels))
	for k, v := range p.Labels {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

// appIndex indexes pods by their "app" label (exactly one value).
func appIndex(obj interface{}) ([]string, error) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("not a pod: %T", obj)
	}
	return []string{p.Labels["app"]}, nil
}

var errBadIndex = errors.New("bad object for index")

// failingIndex fails on pods labelled bad=true.
func failingIndex(obj interface{}) ([]string, error) {
	p := obj.(*v1.Pod)
	if p.Labels["bad"] == "true" {
		return nil, errBadIndex
	}
	return []string{p.Name}, nil
}

// indexView is what an indexer exposes about its indices
// (storetest.IndexView).
type indexView = storetest.IndexView

// viewOf reads the indices names of idx (storetest.ViewOf).
func viewOf(t *testing.T, idx storetest.Indexed, keyOf func(interface{}) string, names []string) indexView {
	t.Helper()
	return storetest.ViewOf(t, idx, keyOf, names)
}

func mustKey(obj interface{}) string {
	k, err := MetaNamespaceKeyFunc(obj)
	if err != nil {
		panic(err)
	}
	return k
}

// storeContents returns the key -> object map of a store via List/ListKeys/Get.
func storeContents(t *testing.T, s Store) map[string]interface{} {
	t.Helper()
	out := map[string]interface{}{}
	for _, obj := range s.List() {
		out[mustKey(obj)] = obj
	}
	keys := s.ListKeys()
	require.Len(t, keys, len(out))
	for _, k := range keys {
		obj, ok, err := s.GetByKey(k)
		require.NoError(t, err)
		require.True(t, ok)
		require.Same(t, out[k], obj)
	}
	return out
}

// checkIndexer asserts that the indices of idx are exactly those computed
// from scratch from its contents.
func checkIndexer(t *testing.T, idx Indexer, indexers Indexers) {
	t.Helper()
	storetest.CheckIndices(t, idx, mustKey, storeContents(t, idx), indexers)
}

func testIndexers() Indexers {
	return Indexers{
		NamespaceIndex: MetaNamespaceIndexFunc,
		"labels":       labelValuesIndex,
		"app":          appIndex,
	}
}

// TestIndexerStoresObjectsAnIndexFunctionFailsOnOutsideThatIndex checks the
// one rule for index function failures, for single writes, transactions and
// replacements alike: the object is stored and left out of the index that
// failed (every other index lists it), the write reports an error naming the
// index and the key, and a list is never dropped whole because of one object.
func TestIndexerStoresObjectsAnIndexFunctionFailsOnOutsideThatIndex(t *testing.T) {
	good := newPodIn("ns", "a", "1", "app", "x")
	bad := newPodIn("ns", "a", "2", "app", "y", "bad", "true")
	other := newPodIn("ns", "b", "3", "app", "x")
	indexers := Indexers{"name": failingIndex, "app": appIndex, NamespaceIndex: MetaNamespaceIndexFunc}
	// view reads every index of idx.
	view := func(t *testing.T, idx Indexer) indexView {
		return viewOf(t, idx, mustKey, []string{"name", "app", NamespaceIndex})
	}

	t.Run("add stores the object outside the failing index", func(t *testing.T) {
		idx := NewIndexer(MetaNamespaceKeyFunc, indexers)
		err := idx.Add(bad)
		require.ErrorIs(t, err, errBadIndex)
		assert.ErrorContains(t, err, `"name"`)
		assert.ErrorContains(t, err, "ns/a")
		assert.Equal(t, map[string]interface{}{"ns/a": bad}, storeContents(t, idx))
		assert.Equal(t, "2", idx.LastStoreSyncResourceVersion())
		assert.Equal(t, indexView{
			"name":         {},
			"app":          {"y": {"ns/a"}},
			NamespaceIndex: {"ns": {"ns/a"}},
		}, view(t, idx))
	})
	t.Run("update moves the object out of the failing index and back", func(t *testing.T) {
		idx := NewIndexer(MetaNamespaceKeyFunc, indexers)
		require.NoError(t, idx.Add(good))
		require.ErrorIs(t, idx.Update(bad), errBadIndex)
		obj, ok, err := idx.Get(good)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Same(t, bad, obj)
		assert.Equal(t, indexView{
			"name":         {},
			"app":          {"y": {"ns/a"}},
			NamespaceIndex: {"ns": {"ns/a"}},
		}, view(t, idx))
		fixed := newPodIn("ns", "a", "4", "app", "x")
		require.NoError(t, idx.Update(fixed))
		assert.Equal(t, indexView{
			"name":         {"a": {"ns/a"}},
			"app":          {"x": {"ns/a"}},
			NamespaceIndex: {"ns": {"ns/a"}},
		}, view(t, idx))
	})
	t.Run("delete never needs the index function", func(t *testing.T) {
		idx := NewIndexer(MetaNamespaceKeyFunc, indexers)
		require.ErrorIs(t, idx.Add(bad), errBadIndex)
		require.NoError(t, idx.Delete(good)) // same key
		assert.Empty(t, idx.List())
		assert.Equal(t, indexView{"name": {}, "app": {}, NamespaceIndex: {}}, view(t, idx))
	})
	t.Run("replace applies the whole list", func(t *testing.T) {
		idx := NewIndexer(MetaNamespaceKeyFunc, indexers)
		require.NoError(t, idx.Add(good))
		err := idx.Replace([]interface{}{other, bad}, "7")
		require.ErrorIs(t, err, errBadIndex)
		assert.ErrorContains(t, err, "ns/a")
		assert.Equal(t, map[string]interface{}{"ns/a": bad, "ns/b": other}, storeContents(t, idx))
		assert.Equal(t, "7", idx.LastStoreSyncResourceVersion())
		assert.Equal(t, indexView{
			"name":         {"b": {"ns/b"}},
			"app":          {"x": {"ns/b"}, "y": {"ns/a"}},
			NamespaceIndex: {"ns": {"ns/a", "ns/b"}},
		}, view(t, idx))
		// Replacing it by a good object indexes it again.
		require.NoError(t, idx.Replace([]interface{}{good}, "8"))
		assert.Equal(t, indexView{
			"name":         {"a": {"ns/a"}},
			"app":          {"x": {"ns/a"}},
			NamespaceIndex: {"ns": {"ns/a"}},
		}, view(t, idx))
	})
	t.Run("transaction applies the write and reports it", func(t *testing.T) {
		idx := NewIndexer(MetaNamespaceKeyFunc, indexers)
		txErr := idx.(TransactionStore).Transaction(
			Transaction{Type: TransactionTypeAdd, Object: bad},
			Transaction{Type: TransactionTypeAdd, Object: other},
		)
		require.NotNil(t, txErr)
		assert.Equal(t, []int{0, 1}, txErr.SuccessfulIndices)
		require.ErrorIs(t, txErr, errBadIndex)
		assert.Equal(t, map[string]interface{}{"ns/a": bad, "ns/b": other}, storeContents(t, idx))
		assert.Equal(t, indexView{
			"name":         {"b": {"ns/b"}},
			"app":          {"x": {"ns/b"}, "y": {"ns/a"}},
			NamespaceIndex: {"ns": {"ns/a", "ns/b"}},
		}, view(t, idx))
	})
	t.Run("thread safe store stores and reports", func(t *testing.T) {
		ts := NewThreadSafeStore(indexers, Indices{})
		ts.Add("ns/a", good)
		ts.Update("ns/a", bad)
		obj, ok := ts.Get("ns/a")
		require.True(t, ok)
		assert.Same(t, bad, obj)
		ts.Replace(map[string]interface{}{"ns/a": bad, "ns/b": other}, "9")
		keys := ts.ListKeys()
		sort.Strings(keys)
		assert.Equal(t, []string{"ns/a", "ns/b"}, keys)
		byName, err := ts.IndexKeys("name", "a")
		require.NoError(t, err)
		assert.Empty(t, byName)
		assert.Equal(t, "9", ts.LastStoreSyncResourceVersion())
	})
	t.Run("namespace index on non-object", func(t *testing.T) {
		idx := NewIndexer(func(obj interface{}) (string, error) { return "k", nil }, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
		err := idx.Add("not an object")
		require.Error(t, err)
		assert.Equal(t, []interface{}{"not an object"}, idx.List())
		assert.Empty(t, idx.ListIndexFuncValues(NamespaceIndex))
		// Replacing it by an object puts the key in the index.
		require.NoError(t, idx.Update(good))
		keys, err := idx.IndexKeys(NamespaceIndex, "ns")
		require.NoError(t, err)
		assert.Equal(t, []string{"k"}, keys)
		require.NoError(t, idx.Delete(good))
		assert.Empty(t, idx.ListIndexFuncValues(NamespaceIndex))
		require.Error(t, idx.Replace([]interface{}{"still not an object"}, "3"))
		assert.Equal(t, []interface{}{"still not an object"}, idx.List())
		assert.Empty(t, idx.ListIndexFuncValues(NamespaceIndex))
	})
	t.Run("nil index function", func(t *testing.T) {
		idx := NewIndexer(MetaNamespaceKeyFunc, Indexers{"nil": nil})
		assert.Error(t, idx.Add(good))
		assert.Equal(t, []interface{}{good}, idx.List())
		assert.Empty(t, idx.ListIndexFuncValues("nil"))
	})
}

func TestIndexerAddIndexers(t *testing.T) {
	pods := []*v1.Pod{
		newPodIn("ns1", "a", "1", "app", "web"),
		newPodIn("ns2", "b", "2", "app", "db", "tier", "be"),
		newPodIn("", "c", "3"),
	}
	cases := []struct {
		name     string
		initial  Indexers
		add      Indexers
		wantErr  bool
		finalSet Indexers
	}{
		{name: "to empty indexer set", initial: Indexers{}, add: testIndexers(), finalSet: testIndexers()},
		{name: "namespace later", initial: Indexers{"app": appIndex}, add: Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "labels": labelValuesIndex}, finalSet: testIndexers()},
		{name: "generic later", initial: Indexers{NamespaceIndex: MetaNamespaceIndexFunc}, add: Indexers{"labels": labelValuesIndex}, finalSet: Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "labels": labelValuesIndex}},
		{name: "conflict", initial: Indexers{"app": appIndex}, add: Indexers{"app": labelValuesIndex, "x": appIndex}, wantErr: true, finalSet: Indexers{"app": appIndex}},
		{name: "failing function changes nothing", initial: Indexers{"app": appIndex}, add: Indexers{"x": appIndex, "z": func(interface{}) ([]string, error) { return nil, errBadIndex }}, wantErr: true, finalSet: Indexers{"app": appIndex}},
		{name: "nothing", initial: Indexers{"app": appIndex}, add: nil, finalSet: Indexers{"app": appIndex}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			idx := NewIndexer(MetaNamespaceKeyFunc, tc.initial)
			for _, p := range pods {
				require.NoError(t, idx.Add(p))
			}
			err := idx.AddIndexers(tc.add)
			if tc.wantErr {
				require.Error(t, err)
			} else {
				require.NoError(t, err)
			}
			got := idx.GetIndexers()
			gotNames := make([]string, 0, len(got))
			for n := range got {
				gotNames = append(gotNames, n)
			}
			wantNames := make([]string, 0, len(tc.finalSet))
			for n := range tc.finalSet {
				wantNames = append(wantNames, n)
			}
			assert.ElementsMatch(t, wantNames, gotNames)
			checkIndexer(t, idx, tc.finalSet)
			// Later writes keep every index right.
			require.NoError(t, idx.Update(newPodIn("ns1", "a", "4", "app", "db", "tier", "fe")))
			require.NoError(t, idx.Delete(pods[1]))
			require.NoError(t, idx.Add(newPodIn("ns3", "d", "5", "app", "web")))
			checkIndexer(t, idx, tc.finalSet)
		})
	}
	t.Run("GetIndexers returns a copy", func(t *testing.T) {
		idx := NewIndexer(MetaNamespaceKeyFunc, Indexers{"app": appIndex})
		got := idx.GetIndexers()
		got["other"] = appIndex
		assert.Len(t, idx.GetIndexers(), 1)
	})
	t.Run("constructor copies indexers", func(t *testing.T) {
		in := Indexers{"app": appIndex}
		idx := NewIndexer(MetaNamespaceKeyFunc, in)
		in["late"] = appIndex
		assert.Len(t, idx.GetIndexers(), 1)
		_, err := idx.ByIndex("late", "x")
		assert.Error(t, err)
	})
}

// TestIndexerMutatedNamespaceKeepsNamespaceIndexConsistent: the namespace
// index reads the stored object's namespace instead of remembering it, so a
// caller that moves a cached object to another namespace in place must not
// leave its key under the old namespace, whether the key is then updated
// (into the mutated namespace or back) or deleted.
func TestIndexerMutatedNamespaceKeepsNamespaceIndexConsistent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		then   func(idx Indexer) error
		wantNS map[string][]string
	}{
		// The store takes the cached object's namespace at its word, as
		// client-go does: the key stays where the index holds it.
		{"update into the mutated namespace", func(idx Indexer) error { return idx.Update(newPodIn("y", "a", "2")) }, map[string][]string{"x": {"a"}}},
		{"update into a third namespace", func(idx Indexer) error { return idx.Update(newPodIn("z", "a", "2")) }, map[string][]string{"z": {"a"}}},
		{"update into the original namespace", func(idx Indexer) error { return idx.Update(newPodIn("x", "a", "2")) }, map[string][]string{"x": {"a"}}},
		{"delete", func(idx Indexer) error { return idx.Delete(newPodIn("z", "a", "2")) }, map[string][]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, indexers := range []Indexers{
				{NamespaceIndex: MetaNamespaceIndexFunc},
				{NamespaceIndex: MetaNamespaceIndexFunc, "app": appIndex},
			} {
				idx := NewIndexer(nameKey, indexers) // the key stays when the namespace changes
				p := newPodIn("x", "a", "1", "app", "web")
				require.NoError(t, idx.Add(p))
				p.Namespace = "y" // a careless caller mutates the cached object in place
				require.NoError(t, tc.then(idx))
				got := map[string][]string{}
				for _, ns := range idx.ListIndexFuncValues(NamespaceIndex) {
					keys, err := idx.IndexKeys(NamespaceIndex, ns)
					require.NoError(t, err)
					got[ns] = keys
				}
				assert.Equal(t, tc.wantNS, got, "indexers %v", slices.Sorted(maps.Keys(indexers)))
			}
		})
	}
}

func TestThreadSafeStoreResourceVersion(t *testing.T) {
	type step struct {
		do   func(ts ThreadSafeStoreWithTransaction)
		want string
	}
	p := func(rv string) *v1.Pod { return newPodIn("ns", "a", rv) }
	cases := []struct {
		name  string
		steps []step
	}{
		{name: "add update", steps: []step{
			{func(ts ThreadSafeStoreWithTransaction) { ts.Add("ns/a", p("5")) }, "5"},
			{func(ts ThreadSafeStoreWithTransaction) { ts.Update("ns/a", p("7")) }, "7"},
		}},
		{name: "delete with object", steps: []step{
			{func(ts ThreadSafeStoreWithTransaction) { ts.Add("ns/a", p("5")) }, "5"},
			{func(ts ThreadSafeStoreWithTransaction) { ts.DeleteWithObject("ns/a", p("9")) }, "9"},
			{func(ts ThreadSafeStoreWithTransaction) { ts.Delete("ns/a") }, "9"},
			{func(ts ThreadSafeStoreWithTransaction) {
				ts.DeleteWithObject("ns/a", DeletedFinalStateUnknown{Key: "ns/a"})
			}, "9"},
		}},
		{name: "bookmark and replace", steps: []step{
			{func(ts ThreadSafeStoreWithTransaction) { ts.Bookmark("11") }, "11"},
			{func(ts ThreadSafeStoreWithTransaction) { ts.Replace(map[string]interface{}{"ns/a": p("3")}, "12") }, "12"},
			{func(ts ThreadSafeStoreWithTransaction) { ts.Add("x", "not an object") }, "12"},
		}},
		{name: "transaction takes last applied", steps: []step{
			{func(ts ThreadSafeStoreWithTransaction) {
				ts.Transaction(
					ThreadSafeStoreTransaction{Transaction{p("20"), TransactionTypeAdd}, "ns/a"},
					ThreadSafeStoreTransaction{Transaction{newPodIn("ns", "b", "21"), TransactionTypeAdd}, "ns/b"},
					ThreadSafeStoreTransaction{Transaction{DeletedFinalStateUnknown{Key: "ns/b"}, TransactionTypeDelete}, "ns/b"},
				)
			}, "21"},
			{func(ts ThreadSafeStoreWithTransaction) {
				ts.Transaction(ThreadSafeStoreTransaction{Transaction{p("30"), "Bogus"}, "ns/a"})
			}, "21"},
			{func(ts ThreadSafeStoreWithTransaction) { ts.Transaction() }, "21"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := NewThreadSafeStore(Indexers{}, Indices{}).(ThreadSafeStoreWithTransaction)
			for i, s := range tc.steps {
				s.do(ts)
				assert.Equal(t, s.want, ts.LastStoreSyncResourceVersion(), "step %d", i)
			}
		})
	}
}

func TestThreadSafeStoreIgnoresPrefilledIndices(t *testing.T) {
	ts := NewThreadSafeStore(Indexers{"app": appIndex}, Indices{"app": index{"web": {"ghost": {}}}})
	assert.Empty(t, ts.ListIndexFuncValues("app"))
	ts.Add("ns/a", newPodIn("ns", "a", "1", "app", "web"))
	keys, err := ts.IndexKeys("app", "web")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/a"}, keys)
	require.NoError(t, ts.Resync())
}

func TestThreadSafeStoreConcurrentUse(t *testing.T) {
	indexers := testIndexers()
	idx := NewIndexer(MetaNamespaceKeyFunc, indexers)
	var wg sync.WaitGroup
	const writers, perWriter = 4, 200
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				p := newPodIn("ns"+strconv.Itoa(i%3), "p"+strconv.Itoa(i%17), strconv.Itoa(i), "app", strconv.Itoa((i+w)%4))
				switch i % 4 {
				case 0, 1:
					assert.NoError(t, idx.Add(p))
				case 2:
					assert.NoError(t, idx.Update(p))
				case 3:
					assert.NoError(t, idx.Delete(p))
				}
				if i%50 == 0 {
					assert.Nil(t, idx.(TransactionStore).Transaction(
						Transaction{Object: p, Type: TransactionTypeUpdate},
						Transaction{Object: newPodIn("ns0", "p1", "x"), Type: TransactionTypeDelete},
					))
				}
			}
		}(w)
	}
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perWriter; i++ {
				_ = idx.List()
				_ = idx.ListKeys()
				_, _ = idx.ByIndex(NamespaceIndex, "ns1")
				_, _ = idx.IndexKeys("app", "1")
				_ = idx.ListIndexFuncValues("labels")
				_, _, _ = idx.GetByKey("ns1/p1")
				_ = idx.GetIndexers()
				_ = idx.LastStoreSyncResourceVersion()
			}
		}()
	}
	wg.Wait()
	checkIndexer(t, idx, indexers)
}

// differentialOp is one randomly generated operation, applied to both our
// store and client-go's.
type differentialOp struct {
	kind string // add update delete deleteKey deleteTombstone replace txn bookmark addIndexers
	pods []*v1.Pod
	txn  []TransactionType
	rv   string
}

func randomPod(r *rand.Rand, rv int) *v1.Pod {
	ns := []string{"", "ns1", "ns2"}[r.Intn(3)]
	name := "p" + strconv.Itoa(r.Intn(8))
	var labels []string
	if r.Intn(4) > 0 {
		labels = append(labels, "app", []string{"web", "db", "cache"}[r.Intn(3)])
	}
	if r.Intn(2) == 0 {
		labels = append(labels, "tier", []string{"fe", "be"}[r.Intn(2)])
	}
	return newPodIn(ns, name, strconv.Itoa(rv), labels...)
}

func randomOps(r *rand.Rand, n int) []differentialOp {
	ops := make([]differentialOp, 0, n)
	rv := 1
	next := func() int { rv++; return rv }
	for i := 0; i < n; i++ {
		var op differentialOp
		switch x := r.Intn(100); {
		case x < 30:
			op = differentialOp{kind: "add", pods: []*v1.Pod{randomPod(r, next())}}
		case x < 50:
			op = differentialOp{kind: "update", pods: []*v1.Pod{randomPod(r, next())}}
		case x < 60:
			op = differentialOp{kind: "delete", pods: []*v1.Pod{randomPod(r, next())}}
		case x < 64:
			op = differentialOp{kind: "deleteKey", pods: []*v1.Pod{randomPod(r, next())}}
		case x < 68:
			op = differentialOp{kind: "deleteTombstone", pods: []*v1.Pod{randomPod(r, next())}}
		case x < 73:
			op = differentialOp{kind: "replace", rv: strconv.Itoa(next())}
			for j := r.Intn(10); j > 0; j-- {
				op.pods = append(op.pods, randomPod(r, next()))
			}
		case x < 93:
			op = differentialOp{kind: "txn"}
			for j := 1 + r.Intn(6); j > 0; j-- {
				op.pods = append(op.pods, randomPod(r, next()))
				op.txn = append(op.txn, []TransactionType{TransactionTypeAdd, TransactionTypeUpdate, TransactionTypeDelete}[r.Intn(3)])
			}
		case x < 98:
			op = differentialOp{kind: "bookmark", rv: strconv.Itoa(next())}
		default:
			op = differentialOp{kind: "addIndexers"}
		}
		ops = append(ops, op)
	}
	return ops
}

// TestIndexerMatchesClientGo runs random scripts of every Indexer operation
// on ours and on client-go's and compares contents, indices, errors and
// resourceVersion after each step. It is the public Indexer's check of index
// maintenance and index queries; the store engine's own tests
// (cache/internal/store) check the same cases one by one.
func TestIndexerMatchesClientGo(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run("seed"+strconv.FormatInt(seed, 10), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			ours := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{
				NamespaceIndex: MetaNamespaceIndexFunc,
				"app":          appIndex,
			})
			theirs := clientcache.NewIndexer(clientcache.DeletionHandlingMetaNamespaceKeyFunc, clientcache.Indexers{
				clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc,
				"app":                      appIndex,
			})
			names := []string{NamespaceIndex, "app"}
			addedLate := false
			for i, op := range randomOps(r, 150) {
				var errOurs, errTheirs error
				switch op.kind {
				case "add":
					errOurs, errTheirs = ours.Add(op.pods[0]), theirs.Add(op.pods[0])
				case "update":
					errOurs, errTheirs = ours.Update(op.pods[0]), theirs.Update(op.pods[0])
				case "delete":
					errOurs, errTheirs = ours.Delete(op.pods[0]), theirs.Delete(op.pods[0])
				case "deleteKey":
					k := mustKey(op.pods[0])
					errOurs, errTheirs = ours.Delete(ExplicitKey(k)), theirs.Delete(clientcache.ExplicitKey(k))
				case "deleteTombstone":
					k := mustKey(op.pods[0])
					errOurs = ours.Delete(DeletedFinalStateUnknown{Key: k, Obj: op.pods[0]})
					errTheirs = theirs.Delete(clientcache.DeletedFinalStateUnknown{Key: k, Obj: op.pods[0]})
				case "replace":
					a, b := make([]interface{}, 0, len(op.pods)), make([]interface{}, 0, len(op.pods))
					for _, p := range op.pods {
						a, b = append(a, p), append(b, p)
					}
					errOurs, errTheirs = ours.Replace(a, op.rv), theirs.Replace(b, op.rv)
				case "txn":
					a := make([]Transaction, 0, len(op.pods))
					b := make([]clientcache.Transaction, 0, len(op.pods))
					for j, p := range op.pods {
						a = append(a, Transaction{Object: p, Type: op.txn[j]})
						b = append(b, clientcache.Transaction{Object: p, Type: clientcache.TransactionType(op.txn[j])})
					}
					te1 := ours.(TransactionStore).Transaction(a...)
					te2 := theirs.(clientcache.TransactionStore).Transaction(b...)
					require.Nil(t, te1)
					require.Nil(t, te2)
				case "bookmark":
					ours.Bookmark(op.rv)
					theirs.Bookmark(op.rv)
				case "addIndexers":
					if addedLate {
						errOurs = ours.AddIndexers(Indexers{"labels": labelValuesIndex})
						errTheirs = theirs.AddIndexers(clientcache.Indexers{"labels": labelValuesIndex})
						require.Error(t, errOurs)
						require.Error(t, errTheirs)
						errOurs, errTheirs = nil, nil
						break
					}
					addedLate = true
					names = append(names, "labels")
					errOurs = ours.AddIndexers(Indexers{"labels": labelValuesIndex})
					errTheirs = theirs.AddIndexers(clientcache.Indexers{"labels": labelValuesIndex})
				}
				require.Equal(t, errTheirs == nil, errOurs == nil, "op %d %s: error kinds %v / %v", i, op.kind, errOurs, errTheirs)
				// Contents.
				require.Equal(t, storeContents(t, theirs), storeContents(t, ours), "op %d %s: contents", i, op.kind)
				// Indices.
				require.Equal(t, viewOf(t, theirs, mustKey, names), viewOf(t, ours, mustKey, names), "op %d %s: indices", i, op.kind)
				require.Equal(t, theirs.LastStoreSyncResourceVersion(), ours.LastStoreSyncResourceVersion(), "op %d %s: rv", i, op.kind)
				// Index by probe object.
				probe := randomPod(r, 0)
				for _, name := range names {
					o, err1 := ours.Index(name, probe)
					c, err2 := theirs.Index(name, probe)
					require.Equal(t, err2 == nil, err1 == nil)
					require.ElementsMatch(t, c, o, "op %d: Index(%s)", i, name)
				}
				_, err1 := ours.ByIndex("missing", "x")
				_, err2 := theirs.ByIndex("missing", "x")
				require.Equal(t, err2 == nil, err1 == nil)
			}
		})
	}
}

func TestIndexerTwoNamespaceIndices(t *testing.T) {
	indexers := Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "ns-again": MetaNamespaceIndexFunc, "app": appIndex}
	idx := NewIndexer(MetaNamespaceKeyFunc, indexers)
	require.NoError(t, idx.Replace([]interface{}{newPodIn("ns1", "a", "1", "app", "x"), newPodIn("ns2", "b", "2", "app", "y")}, "3"))
	checkIndexer(t, idx, indexers)
	require.NoError(t, idx.Delete(newPodIn("ns1", "a", "")))
	require.NoError(t, idx.Add(newPodIn("ns3", "c", "4")))
	checkIndexer(t, idx, indexers)
}

func TestIndexerReplaceConcurrentWithAddIndexers(t *testing.T) {
	for round := 0; round < 20; round++ {
		idx := NewIndexer(MetaNamespaceKeyFunc, Indexers{"app": appIndex})
		list := make([]interface{}, 0, 200)
		for i := 0; i < 200; i++ {
			list = append(list, newPodIn("ns"+strconv.Itoa(i%5), "p"+strconv.Itoa(i), "1", "app", strconv.Itoa(i%3)))
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			assert.NoError(t, idx.Replace(list, "9"))
		}()
		go func() {
			defer wg.Done()
			assert.NoError(t, idx.AddIndexers(Indexers{NamespaceIndex: MetaNamespaceIndexFunc, "labels": labelValuesIndex}))
		}()
		wg.Wait()
		checkIndexer(t, idx, Indexers{"app": appIndex, NamespaceIndex: MetaNamespaceIndexFunc, "labels": labelValuesIndex})
		require.Len(t, idx.ListKeys(), 200)
	}
}

// TestWatermarkTakesACompleteListsVersionAndIgnoresBadVersions: an informer
// cache's watermark moves forward only with events and bookmarks, ignores
// versions that do not parse as unsigned 64-bit integers (bad data), and
// takes a complete list's version even when it is lower. A plain store
// records every version as client-go's does.
func TestWatermarkTakesACompleteListsVersionAndIgnoresBadVersions(t *testing.T) {
	c := NewIndexer(MetaNamespaceKeyFunc, Indexers{}, withResourceVersionWatermark(nil)).(*cache)
	rv := c.LastStoreSyncResourceVersion
	require.NoError(t, c.Replace([]interface{}{newPodIn("ns", "a", "3")}, "5"))
	assert.Equal(t, "5", rv())
	c.advanceResourceVersion("18000000000000000000")
	assert.Equal(t, "18000000000000000000", rv(), "large jumps are legitimate")
	require.NoError(t, c.Replace([]interface{}{newPodIn("ns", "a", "3")}, "7"))
	assert.Equal(t, "7", rv(), "a complete list is the server's truth")
	for _, bad := range []string{"99999999999999999999", "-1", "abc", "0x10", "1e9"} {
		c.advanceResourceVersion(bad)
		c.Bookmark(bad)
		assert.Equal(t, "7", rv(), "bad version %q", bad)
	}
	c.Bookmark("6")
	assert.Equal(t, "7", rv(), "bookmarks only move it forward")
	c.Bookmark("8")
	assert.Equal(t, "8", rv())
	c.resetResourceVersion("4")
	assert.Equal(t, "4", rv(), "a list applied in steps is the server's truth too")
	require.NoError(t, c.Replace(nil, ""))
	assert.Equal(t, "4", rv(), "a list without a version leaves the watermark")

	// A server whose versions are all opaque still moves it, in its order.
	opaque := NewIndexer(MetaNamespaceKeyFunc, Indexers{}, withResourceVersionWatermark(nil)).(*cache)
	require.NoError(t, opaque.Replace(nil, "opaque-7"))
	opaque.advanceResourceVersion("opaque-8")
	assert.Equal(t, "opaque-8", opaque.LastStoreSyncResourceVersion())

	plain := NewStore(MetaNamespaceKeyFunc)
	require.NoError(t, plain.Add(newPodIn("ns", "a", "9")))
	require.NoError(t, plain.Replace(nil, "3"))
	assert.Equal(t, "3", plain.LastStoreSyncResourceVersion())
	plain.Bookmark("2")
	assert.Equal(t, "2", plain.LastStoreSyncResourceVersion())
}
