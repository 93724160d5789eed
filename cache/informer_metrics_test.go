package cache

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestInformerMetricsProviderSlot(t *testing.T) {
	var slot informerMetricsProviderSlot
	_, isNoop := slot.get().(noopInformerMetricsProvider)
	assert.True(t, isNoop, "no-op by default")

	slot.set(nil)
	_, isNoop = slot.get().(noopInformerMetricsProvider)
	assert.True(t, isNoop, "nil is ignored")

	first, second := newStoreMetricsProvider(), newStoreMetricsProvider()
	slot.set(first)
	slot.set(second)
	assert.Same(t, first, slot.get(), "first call wins")
}

func TestNoopInformerMetrics(t *testing.T) {
	p := noopInformerMetricsProvider{}
	id := InformerNameAndResource{}
	p.NewQueuedItemMetric(id).Set(1)
	p.NewProcessingLatencyMetric(id).Observe(1)
	p.NewStoreResourceVersionMetric(id).Set(1)
	// The package default must be usable without any setup.
	assert.NotNil(t, currentInformerMetricsProvider())
}

func TestFIFOAndStoreMetricsRespectReservation(t *testing.T) {
	name, err := NewInformerName("st-fifo-metrics")
	require.NoError(t, err)
	defer name.Release()
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}

	p := newStoreMetricsProvider()
	m := newFIFOMetrics(name.WithResource(gvr), p)
	m.numberOfQueuedItem.Set(3)
	m.processingLatency.Observe(0.5)
	assert.Equal(t, []float64{3}, p.queued["st-fifo-metrics"].get())
	assert.Equal(t, []float64{0.5}, p.latency["st-fifo-metrics"].get())

	unreserved := newStoreMetricsProvider()
	m = newFIFOMetrics(name.WithResource(gvr), unreserved) // duplicate: not reserved
	m.numberOfQueuedItem.Set(3)
	m.processingLatency.Observe(1)
	assert.Empty(t, unreserved.queued)
	assert.Empty(t, unreserved.latency)

	sm := newStoreMetrics(InformerNameAndResource{}, unreserved)
	sm.setResourceVersion("5")
	assert.Empty(t, unreserved.rv)
}
