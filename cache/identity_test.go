package cache

import (
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestInformerNameRegistry(t *testing.T) {
	pods := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nodes := schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

	_, err := NewInformerName("")
	assert.Error(t, err)

	n, err := NewInformerName("st-identity")
	require.NoError(t, err)
	assert.Equal(t, "st-identity", n.Name())

	_, err = NewInformerName("st-identity")
	assert.ErrorContains(t, err, "st-identity", "duplicate names are refused")

	p1 := n.WithResource(pods)
	p2 := n.WithResource(pods)
	nd := n.WithResource(nodes)
	assert.True(t, p1.Reserved())
	assert.False(t, p2.Reserved(), "second registration of a resource")
	assert.True(t, nd.Reserved())
	assert.Equal(t, "st-identity", p1.Name())
	assert.Equal(t, pods, p1.GroupVersionResource())
	assert.Equal(t, pods, p2.GroupVersionResource())

	n.Release()
	assert.False(t, p1.Reserved())
	assert.False(t, nd.Reserved())
	assert.False(t, n.WithResource(schema.GroupVersionResource{Resource: "other"}).Reserved(), "released name hands out nothing")
	n.Release() // idempotent

	again, err := NewInformerName("st-identity")
	require.NoError(t, err, "a released name can be reserved again")
	assert.True(t, again.WithResource(pods).Reserved())
	n.Release() // releasing the old handle does not free the new reservation
	_, err = NewInformerName("st-identity")
	assert.Error(t, err)
	again.Release()
}

func TestInformerNameNilAndZero(t *testing.T) {
	var n *InformerName
	assert.Equal(t, "", n.Name())
	id := n.WithResource(schema.GroupVersionResource{Resource: "pods"})
	assert.False(t, id.Reserved())
	assert.Equal(t, "pods", id.GroupVersionResource().Resource)
	n.Release()

	var zero InformerNameAndResource
	assert.False(t, zero.Reserved())
	assert.Equal(t, "", zero.Name())
}

func TestResetInformerNamesForTesting(t *testing.T) {
	a, err := NewInformerName("st-reset-a")
	require.NoError(t, err)
	id := a.WithResource(schema.GroupVersionResource{Resource: "pods"})
	require.True(t, id.Reserved())
	ResetInformerNamesForTesting()
	assert.False(t, id.Reserved())
	b, err := NewInformerName("st-reset-a")
	require.NoError(t, err)
	b.Release()
}

func TestInformerNameConcurrentReservation(t *testing.T) {
	const goroutines = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	names := make([]*InformerName, 0, goroutines)
	for i := 0; i < goroutines; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			n, err := NewInformerName("st-race")
			if err == nil {
				mu.Lock()
				won++
				names = append(names, n)
				mu.Unlock()
				_ = n.WithResource(schema.GroupVersionResource{Resource: strconv.Itoa(i)})
			}
		}(i)
	}
	wg.Wait()
	assert.Equal(t, 1, won)
	for _, n := range names {
		n.Release()
	}
}
