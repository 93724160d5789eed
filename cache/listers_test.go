package cache

import (
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientcache "k8s.io/client-go/tools/cache"
)

// listerFixture returns pods spread over namespaces plus a node.
func listerFixture() []interface{} {
	return []interface{}{
		newPodIn("ns1", "a", "1", "app", "web"),
		newPodIn("ns1", "b", "2", "app", "db"),
		newPodIn("ns2", "c", "3", "app", "web"),
		newPodIn("ns2", "d", "4"),
		&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"app": "web"}}},
	}
}

func keysOfObjects(objs []interface{}) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, mustKey(o))
	}
	sort.Strings(out)
	return out
}

func mustSelector(t *testing.T, s string) labels.Selector {
	sel, err := labels.Parse(s)
	require.NoError(t, err)
	return sel
}

func TestListAllAndByNamespace(t *testing.T) {
	cases := []struct {
		name      string
		namespace string
		selector  labels.Selector
		want      []string
	}{
		{name: "everything", namespace: metav1.NamespaceAll, selector: labels.Everything(), want: []string{"n1", "ns1/a", "ns1/b", "ns2/c", "ns2/d"}},
		{name: "nil selector", namespace: metav1.NamespaceAll, selector: nil, want: []string{"n1", "ns1/a", "ns1/b", "ns2/c", "ns2/d"}},
		{name: "nothing", namespace: metav1.NamespaceAll, selector: labels.Nothing(), want: []string{}},
		{name: "label", namespace: metav1.NamespaceAll, selector: mustSelector(t, "app=web"), want: []string{"n1", "ns1/a", "ns2/c"}},
		{name: "namespace", namespace: "ns1", selector: labels.Everything(), want: []string{"ns1/a", "ns1/b"}},
		{name: "namespace and label", namespace: "ns2", selector: mustSelector(t, "app=web"), want: []string{"ns2/c"}},
		{name: "namespace nothing", namespace: "ns2", selector: labels.Nothing(), want: []string{}},
		{name: "empty namespace", namespace: "ns9", selector: labels.Everything(), want: []string{}},
	}
	for _, tc := range cases {
		for _, withIndex := range []bool{true, false} {
			name := tc.name + "/scan"
			indexers := Indexers{}
			if withIndex {
				name = tc.name + "/indexed"
				indexers[NamespaceIndex] = MetaNamespaceIndexFunc
			}
			t.Run(name, func(t *testing.T) {
				idx := NewIndexer(MetaNamespaceKeyFunc, indexers)
				require.NoError(t, idx.Replace(listerFixture(), "1"))
				var got []interface{}
				err := ListAllByNamespace(idx, tc.namespace, tc.selector, func(o interface{}) { got = append(got, o) })
				require.NoError(t, err)
				assert.Equal(t, tc.want, keysOfObjects(got))
				if tc.namespace == metav1.NamespaceAll {
					got = nil
					require.NoError(t, ListAll(idx, tc.selector, func(o interface{}) { got = append(got, o) }))
					assert.Equal(t, tc.want, keysOfObjects(got))
				}

				// Differential: client-go's helpers over client-go's indexer.
				if tc.selector == nil {
					return
				}
				cgIndexers := clientcache.Indexers{}
				if withIndex {
					cgIndexers[clientcache.NamespaceIndex] = clientcache.MetaNamespaceIndexFunc
				}
				cg := clientcache.NewIndexer(clientcache.MetaNamespaceKeyFunc, cgIndexers)
				require.NoError(t, cg.Replace(listerFixture(), "1"))
				var cgGot []interface{}
				require.NoError(t, clientcache.ListAllByNamespace(cg, tc.namespace, tc.selector, func(o interface{}) { cgGot = append(cgGot, o) }))
				assert.Equal(t, keysOfObjects(cgGot), keysOfObjects(got))
			})
		}
	}
}

// listerCountingIndexer wraps an Indexer and counts ByIndex and List calls.
type listerCountingIndexer struct {
	Indexer
	byIndex, list int
}

func (c *listerCountingIndexer) ByIndex(name, value string) ([]interface{}, error) {
	c.byIndex++
	return c.Indexer.ByIndex(name, value)
}

func (c *listerCountingIndexer) List() []interface{} {
	c.list++
	return c.Indexer.List()
}

func TestListAllByNamespaceUsesIndex(t *testing.T) {
	idx := &listerCountingIndexer{Indexer: NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})}
	require.NoError(t, idx.Replace(listerFixture(), "1"))
	n := 0
	require.NoError(t, ListAllByNamespace(idx, "ns1", labels.Everything(), func(interface{}) { n++ }))
	assert.Equal(t, 2, n)
	assert.Equal(t, 1, idx.byIndex)
	assert.Equal(t, 0, idx.list, "no full scan with a namespace index")
}

func TestListAllErrors(t *testing.T) {
	s := NewStore(func(obj interface{}) (string, error) { return "k", nil })
	require.NoError(t, s.Add("no metadata"))
	n := 0
	assert.NoError(t, ListAll(s, labels.Everything(), func(interface{}) { n++ }), "labels are not read when selecting everything")
	assert.Equal(t, 1, n)
	assert.Error(t, ListAll(s, mustSelector(t, "a=b"), func(interface{}) {}))

	idx := NewIndexer(func(obj interface{}) (string, error) { return "k", nil }, Indexers{})
	require.NoError(t, idx.Add("no metadata"))
	assert.Error(t, ListAllByNamespace(idx, "ns", labels.Everything(), func(interface{}) {}))
}

func TestGenericLister(t *testing.T) {
	gr := schema.GroupResource{Group: "", Resource: "pods"}
	idx := NewIndexer(MetaNamespaceKeyFunc, Indexers{NamespaceIndex: MetaNamespaceIndexFunc})
	require.NoError(t, idx.Replace(listerFixture(), "1"))
	lister := NewGenericLister(idx, gr)

	keysOfObjs := func(objs []runtime.Object) []string {
		out := []string{}
		for _, o := range objs {
			out = append(out, mustKey(o))
		}
		sort.Strings(out)
		return out
	}

	t.Run("list", func(t *testing.T) {
		got, err := lister.List(mustSelector(t, "app=web"))
		require.NoError(t, err)
		assert.Equal(t, []string{"n1", "ns1/a", "ns2/c"}, keysOfObjs(got))
		got, err = lister.ByNamespace("ns1").List(labels.Everything())
		require.NoError(t, err)
		assert.Equal(t, []string{"ns1/a", "ns1/b"}, keysOfObjs(got))
	})

	cases := []struct {
		name   string
		get    func() (runtime.Object, error)
		want   string
		notFnd string
	}{
		{name: "cluster get", get: func() (runtime.Object, error) { return lister.Get("n1") }, want: "n1"},
		{name: "namespaced key get", get: func() (runtime.Object, error) { return lister.Get("ns1/a") }, want: "ns1/a"},
		{name: "namespace get", get: func() (runtime.Object, error) { return lister.ByNamespace("ns2").Get("c") }, want: "ns2/c"},
		{name: "empty namespace finds cluster object", get: func() (runtime.Object, error) { return lister.ByNamespace("").Get("n1") }, want: "n1"},
		{name: "missing", get: func() (runtime.Object, error) { return lister.Get("zz") }, notFnd: "zz"},
		{name: "missing in namespace", get: func() (runtime.Object, error) { return lister.ByNamespace("ns1").Get("c") }, notFnd: "c"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := tc.get()
			if tc.notFnd != "" {
				require.Error(t, err)
				assert.True(t, apierrors.IsNotFound(err))
				var status apierrors.APIStatus
				require.ErrorAs(t, err, &status)
				assert.Equal(t, gr.Resource, status.Status().Details.Kind)
				assert.Equal(t, tc.notFnd, status.Status().Details.Name)
				assert.Contains(t, err.Error(), `pods "`+tc.notFnd+`" not found`)
				assert.Nil(t, obj)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, mustKey(obj))
		})
	}

	t.Run("non runtime.Object values are errors", func(t *testing.T) {
		bad := NewIndexer(func(obj interface{}) (string, error) { return "k", nil }, Indexers{})
		require.NoError(t, bad.Add(struct{ metav1.ObjectMeta }{}))
		l := NewGenericLister(bad, gr)
		_, err := l.Get("k")
		assert.Error(t, err)
		_, err = l.List(labels.Everything())
		assert.Error(t, err)
	})
}

// namedObjects returns n objects named obj-<i>, in namespaces ns<i%50>,
// with a resourceVersion: the shape of client-go's TestListAll store.
func namedObjects(n int) []interface{} {
	out := make([]interface{}, n)
	for i := range out {
		out[i] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns" + strconv.Itoa(i%50), Name: "obj-" + strconv.Itoa(i),
			ResourceVersion: strconv.Itoa(i + 1), Labels: map[string]string{},
		}}
	}
	return out
}

// nameKey keys an object by its name alone, without allocating (as
// client-go's TestListAll does), so that what a store allocates per write
// is its own.
func nameKey(obj interface{}) (string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	return m.GetName(), nil
}

// TestListAllLargeStore is client-go's TestListAll at a size that suits
// -race on a small machine: ListAll over a NewStore filled object by object
// (by Add, keyed by name) passes every matching object once, whether a
// subset, all or none of them match. The cost per write that made client-go's
// million-object version time out is bounded by
// TestStoreAddBytesAgainstClientGo instead.
func TestListAllLargeStore(t *testing.T) {
	const objects = 20000
	for _, tc := range []struct {
		name     string
		matching int
		labels   map[string]string
		selector labels.Selector
		want     int
	}{
		{"subset match", objects / 10, map[string]string{"match": "true"}, labels.SelectorFromSet(labels.Set{"match": "true"}), objects / 10},
		{"all match", 0, map[string]string{}, labels.Everything(), objects},
		{"no match", 0, map[string]string{"nomatch": "true"}, labels.SelectorFromSet(labels.Set{"match": "true"}), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(nameKey)
			for i, o := range namedObjects(objects) {
				if i < tc.matching {
					o.(*metav1.PartialObjectMetadata).Labels = tc.labels
				}
				require.NoError(t, s.Add(o))
			}
			seen := make(map[string]bool, tc.want)
			require.NoError(t, ListAll(s, tc.selector, func(o interface{}) {
				name := o.(*metav1.PartialObjectMetadata).Name
				assert.False(t, seen[name], "%s passed twice", name)
				seen[name] = true
			}))
			assert.Len(t, seen, tc.want)
		})
	}
}
