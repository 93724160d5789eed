package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metaAccessorOnly implements only metav1.ObjectMetaAccessor.
type metaAccessorOnly struct{ m *metav1.ObjectMeta }

func (s metaAccessorOnly) GetObjectMeta() metav1.Object {
	if s.m == nil {
		return nil
	}
	return s.m
}

// TestObjectMetaNeverLetsANilThrough: ObjectMeta reads what meta.Accessor
// reads and fails, without panicking, on nil values, typed nil pointers,
// nil metadata and values without metadata.
func TestObjectMetaNeverLetsANilThrough(t *testing.T) {
	pod := testPod("ns", "a", "1")
	m, err := ObjectMeta(pod)
	require.NoError(t, err)
	assert.Equal(t, "a", m.GetName())
	m, err = ObjectMeta(metaAccessorOnly{&metav1.ObjectMeta{Name: "b"}})
	require.NoError(t, err)
	assert.Equal(t, "b", m.GetName())

	for name, obj := range map[string]any{
		"nil":            nil,
		"typed nil":      (*v1.Pod)(nil),
		"nil accessor":   (*metaAccessorOnly)(nil),
		"nil metadata":   metaAccessorOnly{},
		"typed nil meta": metaAccessorOnly{m: (*metav1.ObjectMeta)(nil)},
	} {
		_, err := ObjectMeta(obj)
		assert.ErrorIs(t, err, errNilObject, name)
	}
	_, err = ObjectMeta("str")
	assert.ErrorIs(t, err, errNoObjectMeta)
	assert.ErrorContains(t, err, "object of type string has no metadata")
}
