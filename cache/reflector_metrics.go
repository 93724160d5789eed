package cache

import (
	"sync"

	"github.com/kinformer/kinformer/cache/internal/reflector"
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
// Reflectors record lists, list duration, items per list, watches, short
// watches, watch duration, items per watch and the last resource version. A
// Reflector picks the provider up when it first lists and watches, so a
// provider set after construction but before Run still takes effect.
// Differs from client-go v0.37.2; see COMPATIBILITY.md.
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

// newReflectorMetrics asks p for the metrics of the reflector called name.
// A nil p gives metrics that record nothing.
func newReflectorMetrics(p MetricsProvider, name string) *reflector.Metrics {
	if p == nil {
		return &reflector.Metrics{}
	}
	return &reflector.Metrics{
		Lists:               p.NewListsMetric(name),
		ListDuration:        p.NewListDurationMetric(name),
		ItemsInList:         p.NewItemsInListMetric(name),
		Watches:             p.NewWatchesMetric(name),
		ShortWatches:        p.NewShortWatchesMetric(name),
		WatchDuration:       p.NewWatchDurationMetric(name),
		ItemsInWatch:        p.NewItemsInWatchMetric(name),
		LastResourceVersion: p.NewLastResourceVersionMetric(name),
	}
}
