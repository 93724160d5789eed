package lean

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinformer/kinformer/cache"
)

// freshCopy returns a heap copy of s, as a decoder would produce.
func freshCopy(s string) string { return strings.Clone(s) }

func sharesData(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func freshPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   freshCopy("team-a"),
			Name:        name,
			Labels:      map[string]string{freshCopy("app"): freshCopy("web"), freshCopy("unique"): name},
			Annotations: map[string]string{freshCopy("note"): freshCopy("hello"), freshCopy("big"): strings.Repeat("x", MaxLen+1)},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: freshCopy("apps/v1"), Kind: freshCopy("ReplicaSet"), Name: freshCopy("web-1"), UID: "rs-uid",
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}},
		},
		Spec: corev1.PodSpec{NodeName: "node-1"},
	}
}

func TestLeanTransformStripsTypedObject(t *testing.T) {
	var table Table
	a, b := freshPod("a"), freshPod("b")
	wantA := a.DeepCopy()
	wantA.ManagedFields = nil

	outA, err := table.Transform(a)
	require.NoError(t, err)
	outB, err := table.Transform(b)
	require.NoError(t, err)
	require.Same(t, a, outA, "the object is made lean in place")
	assert.Equal(t, wantA, outA, "only managedFields go; every value stays equal")
	pa, pb := outA.(*corev1.Pod), outB.(*corev1.Pod)
	assert.Nil(t, pb.ManagedFields)

	assert.True(t, sharesData(pa.Labels["app"], pb.Labels["app"]), "label values are shared")
	assert.True(t, sharesData(pa.Annotations["note"], pb.Annotations["note"]), "annotation values are shared")
	assert.True(t, sharesData(pa.Namespace, pb.Namespace), "namespaces are shared")
	assert.True(t, sharesData(pa.OwnerReferences[0].Kind, pb.OwnerReferences[0].Kind))
	assert.True(t, sharesData(pa.OwnerReferences[0].Name, pb.OwnerReferences[0].Name))
	assert.False(t, sharesData(pa.Annotations["big"], pb.Annotations["big"]), "strings over MaxLen are not interned")
	for k := range pa.Labels {
		for k2 := range pb.Labels {
			if k == k2 {
				assert.True(t, sharesData(k, k2), "label keys are shared: %q", k)
			}
		}
	}
}

func TestLeanTransformStripsMetadataAndUnstructured(t *testing.T) {
	var table Table
	m := &metav1.PartialObjectMetadata{ObjectMeta: freshPod("m").ObjectMeta}
	_, err := table.Transform(m)
	require.NoError(t, err)
	assert.Nil(t, m.ManagedFields)

	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{
			"name": "u", "namespace": freshCopy("team-a"),
			"labels":        map[string]any{freshCopy("app"): freshCopy("web")},
			"annotations":   map[string]any{freshCopy("note"): freshCopy("hello")},
			"managedFields": []any{map[string]any{"manager": "kubelet"}},
		},
	}}
	_, err = table.Transform(u)
	require.NoError(t, err)
	_, found, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields")
	assert.False(t, found)
	assert.Equal(t, map[string]string{"app": "web"}, u.GetLabels())
	assert.Equal(t, map[string]string{"note": "hello"}, u.GetAnnotations())
	assert.True(t, sharesData(m.Labels["app"], u.GetLabels()["app"]), "shared across object kinds")
	assert.True(t, sharesData(m.Namespace, u.GetNamespace()))

	// Tombstones and other values pass through unchanged.
	tomb := cache.DeletedFinalStateUnknown{Key: "a/b", Obj: freshPod("b")}
	out, err := table.Transform(tomb)
	require.NoError(t, err)
	assert.Equal(t, tomb, out)
	bad := &unstructured.Unstructured{Object: map[string]any{"metadata": "not a map"}}
	out, err = table.Transform(bad)
	require.NoError(t, err)
	assert.Equal(t, bad, out)
}

// TestLeanInternTableIsBounded pushes many distinct strings through the table: it
// never holds more than two generations, and strings in use keep their
// value after being dropped from it.
func TestLeanInternTableIsBounded(t *testing.T) {
	var table Table
	var kept []*corev1.Pod
	for i := range 3*MaxEntries + 17 {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"churn": "value-" + strconv.Itoa(i)}}}
		_, err := table.Transform(p)
		require.NoError(t, err)
		if i%10000 == 0 {
			kept = append(kept, p)
		}
		require.LessOrEqual(t, table.Len(), 2*MaxEntries)
	}
	assert.Greater(t, table.Len(), MaxEntries, "the previous generation is kept")
	for j, p := range kept {
		assert.Equal(t, "value-"+strconv.Itoa(j*10000), p.Labels["churn"])
	}

	// The byte bound: long strings fill a generation before MaxEntries.
	var big Table
	for i := range 3 * MaxBytes / MaxLen {
		s := strconv.Itoa(i) + strings.Repeat("y", MaxLen-10)
		big.mu.Lock()
		big.internLocked(s)
		big.mu.Unlock()
	}
	assert.LessOrEqual(t, big.curBytes, MaxBytes)
	assert.LessOrEqual(t, big.Len(), 2*(MaxBytes/(MaxLen-10)+1))

	// A string of the previous generation found again is shared and moves to
	// the current one.
	var gen Table
	gen.mu.Lock()
	first := gen.internLocked(freshCopy("survivor"))
	for i := range MaxEntries {
		gen.internLocked("filler-" + strconv.Itoa(i))
	}
	_, inPrev := gen.prev["survivor"]
	again := gen.internLocked(freshCopy("survivor"))
	_, inCur := gen.cur["survivor"]
	gen.mu.Unlock()
	assert.True(t, inPrev)
	assert.True(t, inCur)
	assert.True(t, sharesData(first, again))
}

func TestLeanComposeRunsBothTransformsInOrder(t *testing.T) {
	assert.Nil(t, Compose(nil, nil))
	var table Table
	var sawManaged bool
	user := func(obj any) (any, error) {
		p := obj.(*corev1.Pod)
		sawManaged = len(p.ManagedFields) > 0
		p.Labels[freshCopy("added")] = freshCopy("web")
		return p, nil
	}
	out, err := Compose(user, &table)(freshPod("a"))
	require.NoError(t, err)
	p := out.(*corev1.Pod)
	assert.True(t, sawManaged, "the user's transform runs first")
	assert.Nil(t, p.ManagedFields, "the lean step runs on the user's result")
	assert.True(t, sharesData(p.Labels["added"], p.Labels["app"]), "values the user's transform added are interned")

	failing := func(any) (any, error) { return nil, errors.New("boom") }
	_, err = Compose(failing, &table)(freshPod("a"))
	assert.EqualError(t, err, "boom")
	onlyUser := Compose(user, nil)
	_, err = onlyUser(freshPod("b"))
	require.NoError(t, err)
}
