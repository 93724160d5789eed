package reflector

import "strconv"

// Counter counts occurrences; the method set of cache.CounterMetric.
type Counter interface {
	Inc()
}

// Summary records observations; the method set of cache.SummaryMetric.
type Summary interface {
	Observe(float64)
}

// Gauge holds a value; the method set of cache.GaugeMetric.
type Gauge interface {
	Set(float64)
}

// Metrics are one Reflector's metrics. Every field may be nil (not
// recorded); a nil *Metrics records nothing. The metrics must be safe for
// concurrent use.
type Metrics struct {
	// Lists counts the lists started; ListDuration and ItemsInList observe
	// the seconds and objects of each successful one.
	Lists        Counter
	ListDuration Summary
	ItemsInList  Summary
	// Watches counts the watches opened, ShortWatches those that ended
	// within a second without an event; WatchDuration and ItemsInWatch
	// observe the seconds and events of each.
	Watches       Counter
	ShortWatches  Counter
	WatchDuration Summary
	ItemsInWatch  Summary
	// LastResourceVersion is set to every resourceVersion published that
	// is a number.
	LastResourceVersion Gauge
}

// ListStarted counts a list started.
func (m *Metrics) ListStarted() {
	if m != nil && m.Lists != nil {
		m.Lists.Inc()
	}
}

// ListDone records a successful list of items objects that took seconds.
func (m *Metrics) ListDone(seconds float64, items int) {
	if m == nil {
		return
	}
	if m.ListDuration != nil {
		m.ListDuration.Observe(seconds)
	}
	if m.ItemsInList != nil {
		m.ItemsInList.Observe(float64(items))
	}
}

// WatchStarted counts a watch opened.
func (m *Metrics) WatchStarted() {
	if m != nil && m.Watches != nil {
		m.Watches.Inc()
	}
}

// WatchEnded records a watch that delivered events in seconds; short:
// it ended within a second without an event.
func (m *Metrics) WatchEnded(seconds float64, events int, short bool) {
	if m == nil {
		return
	}
	if short && m.ShortWatches != nil {
		m.ShortWatches.Inc()
	}
	if m.WatchDuration != nil {
		m.WatchDuration.Observe(seconds)
	}
	if m.ItemsInWatch != nil {
		m.ItemsInWatch.Observe(float64(events))
	}
}

// ResourceVersion records rv in the gauge when rv is a number.
func (m *Metrics) ResourceVersion(rv string) {
	if m == nil || m.LastResourceVersion == nil || rv == "" {
		return
	}
	if v, err := strconv.ParseFloat(rv, 64); err == nil {
		m.LastResourceVersion.Set(v)
	}
}
