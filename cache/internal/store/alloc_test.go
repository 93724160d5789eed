//go:build !race

package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMapAllocations pins the allocation cost of the hot paths of an
// informer's store with the namespace index: updating an existing object,
// alone or in a batch, and reading one, allocate nothing.
func TestMapAllocations(t *testing.T) {
	pods := []any{testPod("ns", "a", "1"), testPod("ns", "a", "2")}
	m := newTestMap(map[string]IndexFunc{"namespace": testNamespaceIndex}, false)
	require.NoError(t, put(m, pods[0]))
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		i++
		_, _, _ = m.Put("ns/a", pods[i%2])
	})
	assert.Zero(t, allocs, "Put of an existing key")
	writes := make([]Write, 4)
	allocs = testing.AllocsPerRun(200, func() {
		i++
		for j := range writes {
			writes[j] = Write{Op: OpUpdate, Key: "ns/a", Object: pods[(i+j)%2]}
		}
		_ = m.Transaction(writes, nil)
	})
	assert.Zero(t, allocs, "Transaction of updates of an existing key")
	allocs = testing.AllocsPerRun(200, func() {
		_, _ = m.Get("ns/a")
	})
	assert.Zero(t, allocs, "Get")
}
