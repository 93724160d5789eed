package cache

import (
	"strconv"
	"sync"
)

// CounterMetric is a metric that counts occurrences, such as lists started.
// Implementations must be safe for concurrent use.
type CounterMetric interface {
	Inc()
}

// SummaryMetric records observations, such as durations or sizes, as a
// summary. Implementations must be safe for concurrent use.
type SummaryMetric interface {
	Observe(float64)
}

// GaugeMetric and HistogramMetric, shared with the informer metrics, are
// declared in informer_metrics.go.

// MetricsProvider creates the metrics of a Reflector. Each method is called
// once per Reflector, with the Reflector's name, when the Reflector first
// lists and watches; a method may return nil to leave that metric out.
type MetricsProvider interface {
	// NewListsMetric counts the initial lists (paged LIST or streaming
	// list) the Reflector started.
	NewListsMetric(name string) CounterMetric
	// NewListDurationMetric observes the seconds each successful list took.
	NewListDurationMetric(name string) SummaryMetric
	// NewItemsInListMetric observes the number of items each successful
	// list stored.
	NewItemsInListMetric(name string) SummaryMetric

	// NewWatchesMetric counts the watches the Reflector opened.
	NewWatchesMetric(name string) CounterMetric
	// NewShortWatchesMetric counts the watches that ended within a second
	// without delivering an event (VeryShortWatchError).
	NewShortWatchesMetric(name string) CounterMetric
	// NewWatchDurationMetric observes the seconds each watch lasted.
	NewWatchDurationMetric(name string) SummaryMetric
	// NewItemsInWatchMetric observes the number of events each watch
	// delivered.
	NewItemsInWatchMetric(name string) SummaryMetric

	// NewLastResourceVersionMetric is set to the last resource version the
	// Reflector recorded, when that version is a number.
	NewLastResourceVersionMetric(name string) GaugeMetric
}

// reflectorMetricsProviderHolder is the process-wide reflector metrics
// provider: SetReflectorMetricsProvider sets it once, Reflectors read it.
type reflectorMetricsProviderHolder struct {
	once     sync.Once
	mu       sync.RWMutex
	provider MetricsProvider
}

// reflectorMetricsProvider is package-level because client-go's API
// (SetReflectorMetricsProvider) makes the provider process-wide.
var reflectorMetricsProvider reflectorMetricsProviderHolder

// SetReflectorMetricsProvider sets the MetricsProvider every Reflector uses
// from then on. Only the first call has an effect; later calls are ignored.
// Without a call, Reflectors record nothing. Safe for concurrent use.
//
// Difference from client-go: client-go v0.37 keeps the provider but never
// records anything through it; kinformer's Reflector records lists, list
// duration, items per list, watches, short watches, watch duration, items per
// watch and the last resource version. A Reflector picks the provider up when
// it first lists and watches, so a provider set after construction but before
// Run still takes effect.
func SetReflectorMetricsProvider(metricsProvider MetricsProvider) {
	reflectorMetricsProvider.once.Do(func() {
		reflectorMetricsProvider.mu.Lock()
		reflectorMetricsProvider.provider = metricsProvider
		reflectorMetricsProvider.mu.Unlock()
	})
}

// currentReflectorMetricsProvider returns the provider set by
// SetReflectorMetricsProvider, or nil.
func currentReflectorMetricsProvider() MetricsProvider {
	reflectorMetricsProvider.mu.RLock()
	defer reflectorMetricsProvider.mu.RUnlock()
	return reflectorMetricsProvider.provider
}

// reflectorMetrics holds one Reflector's metrics. Every field may be nil
// (not recorded); the zero value records nothing.
type reflectorMetrics struct {
	lists          CounterMetric
	listDuration   SummaryMetric
	itemsInList    SummaryMetric
	watches        CounterMetric
	shortWatches   CounterMetric
	watchDuration  SummaryMetric
	itemsInWatch   SummaryMetric
	lastResourceRV GaugeMetric
}

// newReflectorMetrics asks p for the metrics of the reflector called name.
// A nil p gives metrics that record nothing.
func newReflectorMetrics(p MetricsProvider, name string) *reflectorMetrics {
	if p == nil {
		return &reflectorMetrics{}
	}
	return &reflectorMetrics{
		lists:          p.NewListsMetric(name),
		listDuration:   p.NewListDurationMetric(name),
		itemsInList:    p.NewItemsInListMetric(name),
		watches:        p.NewWatchesMetric(name),
		shortWatches:   p.NewShortWatchesMetric(name),
		watchDuration:  p.NewWatchDurationMetric(name),
		itemsInWatch:   p.NewItemsInWatchMetric(name),
		lastResourceRV: p.NewLastResourceVersionMetric(name),
	}
}

func (m *reflectorMetrics) listStarted() {
	if m == nil {
		return
	}
	if m.lists != nil {
		m.lists.Inc()
	}
}

func (m *reflectorMetrics) listDone(seconds float64, items int) {
	if m == nil {
		return
	}
	if m.listDuration != nil {
		m.listDuration.Observe(seconds)
	}
	if m.itemsInList != nil {
		m.itemsInList.Observe(float64(items))
	}
}

func (m *reflectorMetrics) watchStarted() {
	if m == nil {
		return
	}
	if m.watches != nil {
		m.watches.Inc()
	}
}

func (m *reflectorMetrics) watchEnded(seconds float64, events int, short bool) {
	if m == nil {
		return
	}
	if short && m.shortWatches != nil {
		m.shortWatches.Inc()
	}
	if m.watchDuration != nil {
		m.watchDuration.Observe(seconds)
	}
	if m.itemsInWatch != nil {
		m.itemsInWatch.Observe(float64(events))
	}
}

// resourceVersion records rv in the gauge when rv is a number.
func (m *reflectorMetrics) resourceVersion(rv string) {
	if m == nil || m.lastResourceRV == nil || rv == "" {
		return
	}
	if v, err := strconv.ParseFloat(rv, 64); err == nil {
		m.lastResourceRV.Set(v)
	}
}
