package listers_test

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cglisters "k8s.io/client-go/listers/core/v1"
	cgcache "k8s.io/client-go/tools/cache"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listers"
	listerscorev1 "github.com/kinformer/kinformer/listers/core/v1"
)

func newPod(ns, name string, lbls map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}}
}

var podResource = schema.GroupResource{Resource: "pod"}

// newIndexer returns an indexer holding objs, with or without the namespace index.
func newIndexer(t *testing.T, withNamespaceIndex bool, objs ...interface{}) cache.Indexer {
	t.Helper()
	indexers := cache.Indexers{}
	if withNamespaceIndex {
		indexers[cache.NamespaceIndex] = cache.MetaNamespaceIndexFunc
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers)
	for _, o := range objs {
		require.NoError(t, idx.Add(o))
	}
	return idx
}

func objectKeys[T interface {
	GetNamespace() string
	GetName() string
}](items []T) []string {
	if items == nil {
		return nil
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, it.GetNamespace()+"/"+it.GetName())
	}
	sort.Strings(out)
	return out
}

func mustSelector(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	require.NoError(t, err)
	return sel
}

func TestResourceIndexerListFiltersByNamespaceAndSelector(t *testing.T) {
	objs := []interface{}{
		newPod("a", "web-1", map[string]string{"app": "web"}),
		newPod("a", "db-1", map[string]string{"app": "db"}),
		newPod("b", "web-2", map[string]string{"app": "web"}),
		newPod("b", "plain", nil),
	}
	cases := []struct {
		name      string
		namespace string
		selector  string // "" = labels.Everything(); "nil" = nil selector
		want      []string
	}{
		{"all namespaces, everything", "", "", []string{"a/db-1", "a/web-1", "b/plain", "b/web-2"}},
		{"all namespaces, nil selector", "", "nil", []string{"a/db-1", "a/web-1", "b/plain", "b/web-2"}},
		{"all namespaces, app=web", "", "app=web", []string{"a/web-1", "b/web-2"}},
		{"all namespaces, no match", "", "app=none", nil},
		{"namespace a, everything", "a", "", []string{"a/db-1", "a/web-1"}},
		{"namespace b, app=web", "b", "app=web", []string{"b/web-2"}},
		{"namespace b, !app", "b", "!app", []string{"b/plain"}},
		{"unknown namespace", "c", "", nil},
	}
	for _, withIndex := range []bool{true, false} {
		idx := newIndexer(t, withIndex, objs...)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var sel labels.Selector
				switch tc.selector {
				case "":
					sel = labels.Everything()
				case "nil":
				default:
					sel = mustSelector(t, tc.selector)
				}
				l := listers.New[*corev1.Pod](idx, podResource)
				if tc.namespace != "" {
					l = listers.NewNamespaced(l, tc.namespace)
				}
				got, err := l.List(sel)
				require.NoError(t, err)
				assert.Equal(t, tc.want, objectKeys(got), "namespace index present: %v", withIndex)
			})
		}
	}
}

func TestResourceIndexerGetReportsMissesAndWrongTypes(t *testing.T) {
	idx := newIndexer(t, true, newPod("a", "web", nil), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "web"}})
	cases := []struct {
		name      string
		namespace string
		get       string
		wantErr   func(error) bool
	}{
		{"namespaced hit", "a", "web", nil},
		{"namespaced miss", "a", "nope", apierrors.IsNotFound},
		{"other namespace", "b", "web", apierrors.IsNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := listers.NewNamespaced(listers.New[*corev1.Pod](idx, podResource), tc.namespace)
			got, err := l.Get(tc.get)
			if tc.wantErr != nil {
				require.Error(t, err)
				assert.True(t, tc.wantErr(err), "unexpected error %v", err)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.get, got.Name)
		})
	}
	t.Run("wrong type under key is an error", func(t *testing.T) {
		// The node is stored under key "web"; a cluster-wide pod lister finds it.
		_, err := listers.New[*corev1.Pod](idx, podResource).Get("web")
		require.Error(t, err)
		assert.False(t, apierrors.IsNotFound(err))
		assert.Contains(t, err.Error(), "*v1.Node")
	})
	t.Run("wrong type in list is an error", func(t *testing.T) {
		_, err := listers.New[*corev1.Pod](idx, podResource).List(labels.Everything())
		require.Error(t, err)
	})
	t.Run("zero value returns errors", func(t *testing.T) {
		var l listers.ResourceIndexer[*corev1.Pod]
		_, err := l.Get("x")
		require.Error(t, err)
		_, err = l.List(labels.Everything())
		require.Error(t, err)
	})
}

// TestCoreV1ListerMatchesClientGo runs the same lookups through our generated
// pod and node listers and client-go's, and compares results and errors.
func TestCoreV1ListerMatchesClientGo(t *testing.T) {
	objs := []*corev1.Pod{
		newPod("a", "web-1", map[string]string{"app": "web"}),
		newPod("b", "web-2", map[string]string{"app": "web", "tier": "front"}),
	}
	ours := newIndexer(t, true)
	theirs := cgcache.NewIndexer(cgcache.MetaNamespaceKeyFunc, cgcache.Indexers{cgcache.NamespaceIndex: cgcache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		require.NoError(t, ours.Add(o))
		require.NoError(t, theirs.Add(o))
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	ourNodes := newIndexer(t, true, node)
	theirNodes := cgcache.NewIndexer(cgcache.MetaNamespaceKeyFunc, cgcache.Indexers{})
	require.NoError(t, theirNodes.Add(node))

	op, tp := listerscorev1.NewPodLister(ours), cglisters.NewPodLister(theirs)
	for _, sel := range []string{"", "app=web", "tier=front", "app=none"} {
		s := mustSelector(t, sel)
		a, errA := op.List(s)
		b, errB := tp.List(s)
		require.NoError(t, errA)
		require.NoError(t, errB)
		assert.Equal(t, objectKeys(b), objectKeys(a), "List(%q)", sel)
		for _, ns := range []string{"a", "b", "c"} {
			a, errA := op.Pods(ns).List(s)
			b, errB := tp.Pods(ns).List(s)
			require.NoError(t, errA)
			require.NoError(t, errB)
			assert.Equal(t, objectKeys(b), objectKeys(a), "Pods(%q).List(%q)", ns, sel)
		}
	}
	for _, key := range [][2]string{{"a", "web-1"}, {"a", "web-2"}, {"c", "x"}} {
		a, errA := op.Pods(key[0]).Get(key[1])
		b, errB := tp.Pods(key[0]).Get(key[1])
		assert.Equal(t, b, a)
		assert.Equal(t, errB, errA, "Get %v", key)
	}
	on, tn := listerscorev1.NewNodeLister(ourNodes), cglisters.NewNodeLister(theirNodes)
	for _, name := range []string{"n1", "n2"} {
		a, errA := on.Get(name)
		b, errB := tn.Get(name)
		assert.Equal(t, b, a)
		assert.Equal(t, errB, errA, "node Get %q", name)
	}
	_, err := on.Get("n2")
	require.True(t, apierrors.IsNotFound(err))
	assert.Equal(t, `node "n2" not found`, err.Error())
}
