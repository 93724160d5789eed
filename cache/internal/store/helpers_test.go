package store

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache/internal/store/storetest"
)

// testPod returns a pod with the given namespace, name, resource version
// and labels (given as key, value pairs).
func testPod(ns, name, rv string, labelKV ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv}}
	if len(labelKV) > 0 {
		p.Labels = map[string]string{}
		for i := 0; i+1 < len(labelKV); i += 2 {
			p.Labels[labelKV[i]] = labelKV[i+1]
		}
	}
	return p
}

// testNamespaceIndex is the Config.NamespaceIndexFunc of the tests, as
// client-go's MetaNamespaceIndexFunc.
func testNamespaceIndex(obj any) ([]string, error) {
	m, err := ObjectMeta(obj)
	if err != nil {
		return nil, err
	}
	return []string{m.GetNamespace()}, nil
}

// testKey is the key of a pod: "namespace/name", or "name" without a
// namespace.
func testKey(obj any) string {
	m, err := ObjectMeta(obj)
	if err != nil {
		panic(err)
	}
	if m.GetNamespace() == "" {
		return m.GetName()
	}
	return m.GetNamespace() + "/" + m.GetName()
}

// newTestMap returns a Map over indexers as an informer's store has it
// (namespace index inline), keeping a watermark when asked.
func newTestMap(indexers map[string]IndexFunc, watermark bool) *Map {
	return New(Config{Indexers: indexers, NamespaceIndexFunc: testNamespaceIndex, Watermark: watermark})
}

// put stores obj under its testKey.
func put(m *Map, obj any) error {
	_, _, err := m.Put(testKey(obj), obj)
	return err
}

// replace replaces the content of m by objs under their testKeys.
func replace(m *Map, rv string, objs ...any) error {
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = testKey(o)
	}
	return m.Replace(keys, objs, rv)
}

// labelValuesIndex indexes pods by every "key=value" label pair (zero or
// more values per object).
func labelValuesIndex(obj any) ([]string, error) {
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
func appIndex(obj any) ([]string, error) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return nil, fmt.Errorf("not a pod: %T", obj)
	}
	return []string{p.Labels["app"]}, nil
}

var errBadIndex = errors.New("bad object for index")

// failingIndex fails on pods labelled bad=true.
func failingIndex(obj any) ([]string, error) {
	p := obj.(*v1.Pod)
	if p.Labels["bad"] == "true" {
		return nil, errBadIndex
	}
	return []string{p.Name}, nil
}

// testIndexers are a namespace index, a multi-valued and a single-valued
// index.
func testIndexers() map[string]IndexFunc {
	return map[string]IndexFunc{
		"namespace": testNamespaceIndex,
		"labels":    labelValuesIndex,
		"app":       appIndex,
	}
}

// indexView is what a Map exposes about its indices (storetest.IndexView).
type indexView = storetest.IndexView

// viewOf reads the indices names of m (storetest.ViewOf).
func viewOf(t *testing.T, m *Map, names []string) indexView {
	t.Helper()
	return storetest.ViewOf(t, m, testKey, names)
}

// contents returns the key -> object map of m via List, ListKeys and Get.
func contents(t *testing.T, m *Map) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, obj := range m.List() {
		out[testKey(obj)] = obj
	}
	keys := m.ListKeys()
	require.Len(t, keys, len(out))
	require.Equal(t, len(out), m.Len())
	for _, k := range keys {
		obj, ok := m.Get(k)
		require.True(t, ok)
		require.Same(t, out[k], obj)
	}
	return out
}

// checkIndices asserts that the indices of m are exactly those computed
// from scratch from its contents.
func checkIndices(t *testing.T, m *Map, indexers map[string]IndexFunc) {
	t.Helper()
	storetest.CheckIndices(t, m, testKey, contents(t, m), indexers)
}
