package kinformerprom

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kinformer/kinformer/cache"
)

// ReflectorMetrics implements cache.MetricsProvider with Prometheus vectors
// labelled by the Reflector's name ("name"). A Reflector's name is its
// ReflectorOptions.Name, or the file:line that built it: the Reflectors of
// one factory share the factory's line, so their series add up; the
// Collector has the per-informer view.
type ReflectorMetrics struct {
	lists, watches, shortWatches *prometheus.CounterVec
	listDuration, itemsInList    *prometheus.SummaryVec
	watchDuration, itemsInWatch  *prometheus.SummaryVec
	lastResourceVersion          *prometheus.GaugeVec
	collectors                   []prometheus.Collector
}

// NewReflectorMetrics returns the reflector metric families, not yet
// registered (see Collectors) nor installed (see RegisterProviders).
func NewReflectorMetrics() *ReflectorMetrics {
	const sub = "reflector"
	labels := []string{"name"}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Subsystem: sub, Name: name, Help: help}, labels)
	}
	summary := func(name, help string) *prometheus.SummaryVec {
		// No quantiles: a count and a sum, cheap and aggregatable.
		return prometheus.NewSummaryVec(prometheus.SummaryOpts{Namespace: namespace, Subsystem: sub, Name: name, Help: help}, labels)
	}
	m := &ReflectorMetrics{
		lists:               counter("lists_total", "Lists (paged or streaming) a Reflector started."),
		listDuration:        summary("list_duration_seconds", "Seconds each successful list took."),
		itemsInList:         summary("list_items", "Items each successful list stored."),
		watches:             counter("watches_total", "Watches a Reflector opened."),
		shortWatches:        counter("short_watches_total", "Watches that ended within a second without an event."),
		watchDuration:       summary("watch_duration_seconds", "Seconds each watch lasted."),
		itemsInWatch:        summary("watch_events", "Events each watch delivered."),
		lastResourceVersion: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Subsystem: sub, Name: "last_resource_version", Help: "The last resourceVersion a Reflector recorded."}, labels),
	}
	m.collectors = []prometheus.Collector{m.lists, m.listDuration, m.itemsInList, m.watches, m.shortWatches, m.watchDuration, m.itemsInWatch, m.lastResourceVersion}
	return m
}

// Collectors returns the metric families, for registering.
func (m *ReflectorMetrics) Collectors() []prometheus.Collector {
	return append([]prometheus.Collector(nil), m.collectors...)
}

// NewListsMetric implements cache.MetricsProvider.
func (m *ReflectorMetrics) NewListsMetric(name string) cache.CounterMetric {
	return m.lists.WithLabelValues(name)
}

// NewListDurationMetric implements cache.MetricsProvider.
func (m *ReflectorMetrics) NewListDurationMetric(name string) cache.SummaryMetric {
	return m.listDuration.WithLabelValues(name)
}

// NewItemsInListMetric implements cache.MetricsProvider.
func (m *ReflectorMetrics) NewItemsInListMetric(name string) cache.SummaryMetric {
	return m.itemsInList.WithLabelValues(name)
}

// NewWatchesMetric implements cache.MetricsProvider.
func (m *ReflectorMetrics) NewWatchesMetric(name string) cache.CounterMetric {
	return m.watches.WithLabelValues(name)
}

// NewShortWatchesMetric implements cache.MetricsProvider.
func (m *ReflectorMetrics) NewShortWatchesMetric(name string) cache.CounterMetric {
	return m.shortWatches.WithLabelValues(name)
}

// NewWatchDurationMetric implements cache.MetricsProvider.
func (m *ReflectorMetrics) NewWatchDurationMetric(name string) cache.SummaryMetric {
	return m.watchDuration.WithLabelValues(name)
}

// NewItemsInWatchMetric implements cache.MetricsProvider.
func (m *ReflectorMetrics) NewItemsInWatchMetric(name string) cache.SummaryMetric {
	return m.itemsInWatch.WithLabelValues(name)
}

// NewLastResourceVersionMetric implements cache.MetricsProvider.
func (m *ReflectorMetrics) NewLastResourceVersionMetric(name string) cache.GaugeMetric {
	return m.lastResourceVersion.WithLabelValues(name)
}

// InformerMetrics implements cache.InformerMetricsProvider with Prometheus
// vectors labelled by the informer's name and group/version/resource. Only
// informers with a reserved cache.InformerName identity publish (client-go's
// rule; see informers.WithInformerName).
type InformerMetrics struct {
	queued     *prometheus.GaugeVec
	latency    *prometheus.HistogramVec
	storeRV    *prometheus.GaugeVec
	collectors []prometheus.Collector
}

// NewInformerMetrics returns the informer metric families, not yet
// registered (see Collectors) nor installed (see RegisterProviders).
func NewInformerMetrics() *InformerMetrics {
	labels := []string{"informer", "group", "version", "resource"}
	m := &InformerMetrics{
		queued: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Subsystem: subsystem, Name: "queued_items",
			Help: "Items in a named informer's queue."}, labels),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Subsystem: subsystem, Name: "processing_latency_seconds",
			Help: "Seconds a named informer spent processing each item popped from its queue.", Buckets: DefaultHandlerLatencyBuckets}, labels),
		storeRV: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Subsystem: subsystem, Name: "store_resource_version",
			Help: "The newest resourceVersion a named informer's store has seen."}, labels),
	}
	m.collectors = []prometheus.Collector{m.queued, m.latency, m.storeRV}
	return m
}

// Collectors returns the metric families, for registering.
func (m *InformerMetrics) Collectors() []prometheus.Collector {
	return append([]prometheus.Collector(nil), m.collectors...)
}

func identityLabels(id cache.InformerNameAndResource) []string {
	gvr := id.GroupVersionResource()
	return []string{id.Name(), gvr.Group, gvr.Version, gvr.Resource}
}

// reservedGauge records only while its identity is reserved: a released
// informer name stops publishing, as cache.InformerMetricsProvider asks.
type reservedGauge struct {
	id cache.InformerNameAndResource
	g  prometheus.Gauge
}

func (r reservedGauge) Set(v float64) {
	if r.id.Reserved() {
		r.g.Set(v)
	}
}

type reservedHistogram struct {
	id cache.InformerNameAndResource
	h  prometheus.Observer
}

func (r reservedHistogram) Observe(v float64) {
	if r.id.Reserved() {
		r.h.Observe(v)
	}
}

// NewQueuedItemMetric implements cache.InformerMetricsProvider.
func (m *InformerMetrics) NewQueuedItemMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return reservedGauge{id: id, g: m.queued.WithLabelValues(identityLabels(id)...)}
}

// NewProcessingLatencyMetric implements cache.InformerMetricsProvider.
func (m *InformerMetrics) NewProcessingLatencyMetric(id cache.InformerNameAndResource) cache.HistogramMetric {
	return reservedHistogram{id: id, h: m.latency.WithLabelValues(identityLabels(id)...)}
}

// NewStoreResourceVersionMetric implements cache.InformerMetricsProvider.
func (m *InformerMetrics) NewStoreResourceVersionMetric(id cache.InformerNameAndResource) cache.GaugeMetric {
	return reservedGauge{id: id, g: m.storeRV.WithLabelValues(identityLabels(id)...)}
}

// RegisterProviders registers the reflector and informer metric families
// with reg and installs them as the process-wide providers of client-go's
// hooks (cache.SetReflectorMetricsProvider, cache.SetInformerMetricsProvider).
// Those hooks take only the first provider of the process: call it once, at
// start-up, before informers are built (Reflectors pick their provider up
// when they first list, informers when they are built). It fails, installing
// nothing, when a family cannot be registered.
func RegisterProviders(reg prometheus.Registerer) (*ReflectorMetrics, *InformerMetrics, error) {
	r, i := NewReflectorMetrics(), NewInformerMetrics()
	var registered []prometheus.Collector
	for _, c := range append(r.Collectors(), i.Collectors()...) {
		if err := reg.Register(c); err != nil {
			for _, done := range registered {
				reg.Unregister(done)
			}
			var already prometheus.AlreadyRegisteredError
			if errors.As(err, &already) {
				return nil, nil, fmt.Errorf("kinformerprom: the reflector and informer metrics are already registered: %w", err)
			}
			return nil, nil, fmt.Errorf("kinformerprom: registering the reflector and informer metrics: %w", err)
		}
		registered = append(registered, c)
	}
	cache.SetReflectorMetricsProvider(r)
	cache.SetInformerMetricsProvider(i)
	return r, i, nil
}
