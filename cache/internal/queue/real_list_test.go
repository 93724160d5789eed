package queue

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"
)

func TestReconcileReplacement(t *testing.T) {
	known := newKnownPods(pod("a", "1"), pod("b", "1"), pod("q", "1"))
	queued := []change{{Updated, pod("q", "2")}, {Added, pod("x", "1")}, {Deleted, pod("y", "1")}, {Updated, pod("x", "2")}}
	isKeyError := func(err error) bool {
		var ke keyError
		return errors.As(err, &ke)
	}
	var deleted []any
	var replaced []any
	err := reconcileReplacement[change, changeOps](klog.Background(), queued, known, []any{pod("b", "2"), pod("n", "1")}, podKey, isKeyError,
		func(_ string, tomb any) error { deleted = append(deleted, tomb); return nil },
		func(obj any) error { replaced = append(replaced, obj); return nil })
	require.NoError(t, err)
	assert.Equal(t, []any{
		tombstone{"ns/q", pod("q", "2")}, tombstone{"ns/x", pod("x", "2")}, tombstone{"ns/a", pod("a", "1")},
	}, deleted)
	assert.Equal(t, []any{pod("b", "2"), pod("n", "1")}, replaced)

	var ke keyError
	err = reconcileReplacement[change, changeOps](klog.Background(), nil, known, []any{42}, podKey, isKeyError, nil, nil)
	assert.True(t, errors.As(err, &ke))
	boom := errors.New("boom")
	err = reconcileReplacement[change, changeOps](klog.Background(), nil, nil, []any{pod("a", "1")}, podKey, isKeyError, nil,
		func(any) error { return boom })
	assert.ErrorIs(t, err, boom)
}
