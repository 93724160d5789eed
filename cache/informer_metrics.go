package cache

import (
	"sync"
	"sync/atomic"
)

// GaugeMetric is a metric that can be set to a value, such as a queue length
// or a resource version. Implementations must be safe for concurrent use.
type GaugeMetric interface {
	Set(float64)
}

// HistogramMetric records observations into a distribution, such as
// processing latencies. Implementations must be safe for concurrent use.
type HistogramMetric interface {
	Observe(float64)
}

// InformerMetricsProvider creates the metrics published by informers, their
// queues and their stores. It is called when those are built, once per
// metric, with the identity of the informer; it is only called for
// identities whose Reserved() is true. Because an informer may be shut down
// (and its name released) while the process keeps running, the metrics it
// returns should check id.Reserved() before recording anything.
// Implementations must be safe for concurrent use.
type InformerMetricsProvider interface {
	// NewQueuedItemMetric returns the gauge of how many items the informer's
	// queue holds: the number of keys with pending deltas for DeltaFIFO, the
	// number of queued deltas for RealFIFO.
	NewQueuedItemMetric(id InformerNameAndResource) GaugeMetric
	// NewProcessingLatencyMetric returns the histogram of the time, in
	// seconds, spent processing (running the handlers for) each item popped
	// from the queue.
	NewProcessingLatencyMetric(id InformerNameAndResource) HistogramMetric
	// NewStoreResourceVersionMetric returns the gauge of the newest resource
	// version the informer's store has seen (its last 15 decimal digits).
	NewStoreResourceVersionMetric(id InformerNameAndResource) GaugeMetric
}

// informerMetricsProviderSlot holds a provider that can be set once. Its
// zero value holds no provider.
type informerMetricsProviderSlot struct {
	once     sync.Once
	provider atomic.Pointer[informerMetricsProviderBox]
}

// informerMetricsProviderBox lets an interface value live in an
// atomic.Pointer.
type informerMetricsProviderBox struct {
	p InformerMetricsProvider
}

// set installs p if it is the first non-nil provider offered.
func (s *informerMetricsProviderSlot) set(p InformerMetricsProvider) {
	if p == nil {
		return
	}
	s.once.Do(func() {
		s.provider.Store(&informerMetricsProviderBox{p: p})
	})
}

// get returns the installed provider, or a no-op provider.
func (s *informerMetricsProviderSlot) get() InformerMetricsProvider {
	if box := s.provider.Load(); box != nil {
		return box.p
	}
	return noopInformerMetricsProvider{}
}

// globalInformerMetricsProvider is the process-wide provider that
// SetInformerMetricsProvider installs; client-go's API makes it global.
var globalInformerMetricsProvider informerMetricsProviderSlot

// SetInformerMetricsProvider installs the provider used by informers,
// queues and stores built afterwards without an explicit provider. Only the
// first call has an effect; later calls, and a nil provider, are ignored.
// It is safe to call concurrently with building informers. Differs from
// client-go v0.37.2; see COMPATIBILITY.md.
func SetInformerMetricsProvider(metricsProvider InformerMetricsProvider) {
	globalInformerMetricsProvider.set(metricsProvider)
}

// currentInformerMetricsProvider returns the installed provider, or a no-op
// provider when none was installed.
func currentInformerMetricsProvider() InformerMetricsProvider {
	return globalInformerMetricsProvider.get()
}

// noopInformerMetricsProvider hands out metrics that record nothing.
type noopInformerMetricsProvider struct{}

func (noopInformerMetricsProvider) NewQueuedItemMetric(InformerNameAndResource) GaugeMetric {
	return noopInformerMetric{}
}

func (noopInformerMetricsProvider) NewProcessingLatencyMetric(InformerNameAndResource) HistogramMetric {
	return noopInformerMetric{}
}

func (noopInformerMetricsProvider) NewStoreResourceVersionMetric(InformerNameAndResource) GaugeMetric {
	return noopInformerMetric{}
}

// noopInformerMetric is a gauge and histogram that records nothing.
type noopInformerMetric struct{}

func (noopInformerMetric) Set(float64)     {}
func (noopInformerMetric) Observe(float64) {}

// fifoMetrics are the metrics of an informer's queue.
type fifoMetrics struct {
	numberOfQueuedItem GaugeMetric
	processingLatency  HistogramMetric
}

// newFIFOMetrics returns the queue metrics for id from metricsProvider (the
// installed provider when nil); they record nothing unless id is reserved.
func newFIFOMetrics(id InformerNameAndResource, metricsProvider InformerMetricsProvider) *fifoMetrics {
	m := &fifoMetrics{
		numberOfQueuedItem: noopInformerMetric{},
		processingLatency:  noopInformerMetric{},
	}
	if !id.Reserved() {
		return m
	}
	if metricsProvider == nil {
		metricsProvider = currentInformerMetricsProvider()
	}
	if g := metricsProvider.NewQueuedItemMetric(id); g != nil {
		m.numberOfQueuedItem = g
	}
	if h := metricsProvider.NewProcessingLatencyMetric(id); h != nil {
		m.processingLatency = h
	}
	return m
}

// storeMetrics are the metrics of an informer's store. rvGauge is nil when
// nothing is published, which spares parsing resource versions.
type storeMetrics struct {
	rvGauge GaugeMetric
}

// newStoreMetrics returns the store metrics for id from metricsProvider
// (the installed provider when nil); they record nothing unless id is
// reserved.
func newStoreMetrics(id InformerNameAndResource, metricsProvider InformerMetricsProvider) *storeMetrics {
	if !id.Reserved() {
		return &storeMetrics{}
	}
	if metricsProvider == nil {
		metricsProvider = currentInformerMetricsProvider()
	}
	return &storeMetrics{rvGauge: metricsProvider.NewStoreResourceVersionMetric(id)}
}

// setResourceVersion publishes rv, if it is numeric and metrics are on.
func (m *storeMetrics) setResourceVersion(rv string) {
	if m == nil || m.rvGauge == nil {
		return
	}
	if v, ok := storeRVForMetrics(rv); ok {
		m.rvGauge.Set(v)
	}
}

// HandlerMetricsProvider creates the metrics of an informer's event
// handlers. Implementations must be safe for concurrent use.
type HandlerMetricsProvider interface {
	// NewHandlerLatencyMetric returns the histogram of the seconds the
	// handler named handlerName (see HandlerStatus.Name) spends on each
	// notification, or nil to time nothing. Called once per registration,
	// when the provider is set or the handler registered, whichever is
	// later.
	NewHandlerLatencyMetric(handlerName string) HistogramMetric
}
