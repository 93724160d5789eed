// Package kinformerprom publishes the state of kinformer's informers as
// Prometheus metrics, with github.com/prometheus/client_golang.
//
// Two parts, used together or alone:
//
//   - A Collector (Register, NewCollector) reads every informer of the
//     factories and informers added to it at scrape time, through
//     cache.GetInformerStatus: objects in the store, queue depth, deltas
//     processed, lists by reason, watch restarts, last sync resourceVersion,
//     seconds since the last watch event or bookmark, bad data from the
//     server, and per handler its pending notifications and recovered
//     panics; the staleness of each cache (seconds since it reached a
//     resourceVersion the server confirmed as current) and its probes; and
//     the health of each informer and of all of them together (package
//     health: ready, degraded or failing, with the reason). It also times every handler notification into a histogram.
//     Nothing of this costs the informers anything between scrapes but a few
//     atomic counters and, for the histogram, two clock reads per
//     notification.
//   - RegisterProviders installs Prometheus implementations of client-go's
//     process-wide hooks, cache.SetReflectorMetricsProvider (lists, list
//     duration and size, watches, short watches, watch duration and size,
//     last resource version per Reflector) and
//     cache.SetInformerMetricsProvider (queue length, processing latency and
//     store resource version of informers named with cache.NewInformerName).
//     kinformer's Reflectors record every metric of cache.MetricsProvider
//     (differs from client-go v0.37.2; see COMPATIBILITY.md).
//
// The package is named kinformerprom so that it does not shadow client_golang's
// prometheus package in the files that use both.
package kinformerprom

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/health"
)

// Metric names of the Collector.
const (
	namespace = "kinformer"
	subsystem = "informer"
)

// informerLabels are the labels of every per-informer metric: the source
// it came from (see Named and Collector.Add), the informer's metrics name
// (cache.InformerName, "" when unnamed), its group/version/resource (""
// when unknown) and the Go type of its objects. The order is the order of
// labelValues.
var informerLabels = []string{"factory", "group", "informer", "resource", "type", "version"}

// NamedSource is a source of a Collector with the value of its factory
// label; build one with Named.
type NamedSource struct {
	name   string
	source any
}

// Named returns source (a factory of this module or an informer, as
// Collector.Add takes) labelled factory=name in every metric of its
// informers, instead of its position among the Collector's sources. Two
// factories with an informer of the same type (one per namespace, one per
// cluster) are told apart by this label. kinformer extension.
func Named(name string, source any) NamedSource {
	return NamedSource{name: name, source: source}
}

// collectorSource is one source of a Collector: how to list its informers,
// and the value of their factory label.
type collectorSource struct {
	factory string
	list    func() []cache.SharedIndexInformer
}

// sourceInformer is an informer and the factory label value of the source
// it was listed from.
type sourceInformer struct {
	informer cache.SharedIndexInformer
	factory  string
}

// DefaultHandlerLatencyBuckets are the buckets, in seconds, of the handler
// latency histogram: from 100µs to 10s.
var DefaultHandlerLatencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Option configures NewCollector.
type Option func(*Collector)

// WithClock sets the clock that seconds-since-last-event is measured with
// (tests use a fake one). The default is the real clock.
func WithClock(c clock.PassiveClock) Option {
	return func(col *Collector) {
		if c != nil {
			col.clock = c
		}
	}
}

// WithHealthOptions sets the options the informers' health is evaluated
// with (the stale threshold; its Now is replaced by the Collector's clock).
// The default is the zero health.Options.
func WithHealthOptions(o health.Options) Option {
	return func(col *Collector) {
		col.health = o
	}
}

// WithHandlerLatencyBuckets sets the buckets of the handler latency
// histogram (DefaultHandlerLatencyBuckets when not set or empty).
func WithHandlerLatencyBuckets(buckets []float64) Option {
	return func(col *Collector) {
		if len(buckets) > 0 {
			col.buckets = append([]float64(nil), buckets...)
		}
	}
}

// Collector is a prometheus.Collector over the informers of the factories
// and informers added to it. Build it with NewCollector (or Register), add
// sources with Add, and register it once. All methods are safe for
// concurrent use.
//
// Two informers with the same labels (the same type and resource, unnamed,
// e.g. the pod informers of two factories) would make the registry's Gather
// fail with a duplicate-series error: name them apart with
// informers.WithInformerName, or give each factory its own Collector
// registered through prometheus.WrapRegistererWith with a distinguishing
// label.
type Collector struct {
	clock   clock.PassiveClock
	buckets []float64
	health  health.Options

	synced, storeObjects, queueDepth, lastRV, sinceEvent *prometheus.Desc
	deltas, lists, watchRestarts, badData                *prometheus.Desc
	snapshotsSkipped                                     *prometheus.Desc
	staleness, probes, probeFailures                     *prometheus.Desc
	informerHealth, informerReason, overallHealth        *prometheus.Desc
	handlerPending, handlerPanics                        *prometheus.Desc
	latency                                              *prometheus.HistogramVec

	mu      sync.Mutex
	sources []collectorSource
	// timed holds the informers whose handlers are being timed.
	timed map[cache.SharedInformer]bool
}

// NewCollector returns a Collector without sources.
func NewCollector(options ...Option) *Collector {
	c := &Collector{clock: clock.RealClock{}, buckets: DefaultHandlerLatencyBuckets, timed: map[cache.SharedInformer]bool{}}
	for _, o := range options {
		if o != nil {
			o(c)
		}
	}
	// Variable labels in sorted order: registries expose them sorted, and
	// so the exposition matches the declaration.
	desc := func(name, help string, extra ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, subsystem, name), help, sortedLabels(extra...), nil)
	}
	c.synced = desc("synced", "1 when the informer has synced (its initial list is in the cache), else 0.")
	c.storeObjects = desc("store_objects", "Objects in the informer's cache.")
	c.queueDepth = desc("queue_depth", "Entries waiting in the queue between the Reflector and the processing loop.")
	c.lastRV = desc("last_sync_resource_version", "The last resourceVersion the informer reached (list, event or bookmark), when it is a number.")
	c.sinceEvent = desc("seconds_since_last_watch_event", "Seconds since the last watch event or bookmark arrived; absent before the first.")
	c.deltas = desc("deltas_processed_total", "Deltas the processing loop applied to the cache.")
	c.lists = desc("lists_total", "Lists (paged or streaming) by reason: initial, expired (410), watch_error, short_watch, list_error, stream_fallback.", "reason")
	c.watchRestarts = desc("watch_restarts_total", "Watches reopened from the last resourceVersion without a relist.")
	c.badData = desc("bad_data_total", "Objects and events from the server the Reflector could not store (logged and skipped).")
	c.snapshotsSkipped = desc("snapshots_skipped_total", "Snapshot files not written because the informer's objects are sensitive (Secrets, or marked so) and no snapshot encryption key is set.")
	c.staleness = desc("staleness_seconds", "Seconds since the cache last reached a resourceVersion the server confirmed as current (a bookmark, a list, a staleness probe), or since the informer started when none was; absent before it started.")
	c.probes = desc("staleness_probes_total", "Staleness probes made: LISTs of one object asking the server for its current resourceVersion when no bookmark or list confirmed one for the probe interval.")
	c.probeFailures = desc("staleness_probe_failures_total", "Staleness probes that failed.")
	c.informerHealth = desc("health", "1 for the informer's health state (ready, degraded, failing), 0 for the others.", "state")
	c.informerReason = desc("health_reason", "1 for the reason the informer is not ready (forbidden, not_found, throttled, stale, never_synced, ...); absent when it is ready.", "reason")
	c.overallHealth = prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "health"),
		"1 for the worst health state (ready, degraded, failing) over all the informers of the Collector's sources (a factory's health when the Collector has one factory), 0 for the others.",
		[]string{"state"}, nil)
	c.handlerPending = desc("handler_pending_notifications", "Notifications queued for a handler and not yet handled.", "handler")
	c.handlerPanics = desc("handler_panics_total", "Panics recovered from a handler.", "handler")
	c.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace,
		Subsystem: subsystem,
		Name:      "handler_latency_seconds",
		Help:      "Seconds a handler spent on each notification.",
		Buckets:   c.buckets,
	}, sortedLabels("handler"))
	return c
}

// sortedLabels returns informerLabels plus extra, sorted.
func sortedLabels(extra ...string) []string {
	out := append(append([]string(nil), informerLabels...), extra...)
	slices.Sort(out)
	return out
}

// labelValuesFor returns the values of sortedLabels(extra names...) for an
// informer with the values lv of informerLabels and the extra label given
// as name, value (at most one).
func labelValuesFor(lv []string, extra ...string) []string {
	if len(extra) == 0 {
		return lv
	}
	byName := make(map[string]string, len(informerLabels)+1)
	for i, n := range informerLabels {
		byName[n] = lv[i]
	}
	byName[extra[0]] = extra[1]
	names := sortedLabels(extra[0])
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = byName[n]
	}
	return out
}

// Register builds a Collector over sources (see Collector.Add), registers it
// with reg and returns it; it is the one call most programs need:
//
//	kinformerprom.Register(prometheus.DefaultRegisterer, factory)
//
// It fails when a source is of an unsupported type or the registration
// fails (e.g. a second Collector on the same registry).
func Register(reg prometheus.Registerer, sources ...any) (*Collector, error) {
	c := NewCollector()
	for _, s := range sources {
		if err := c.Add(s); err != nil {
			return nil, err
		}
	}
	if err := reg.Register(c); err != nil {
		return nil, fmt.Errorf("registering the kinformer collector: %w", err)
	}
	return c, nil
}

// Add makes the Collector report on source: a factory of this module
// (informers.SharedInformerFactory, dynamicinformer's or metadatainformer's,
// all of which implement cache.InformerSource), whose informers are listed
// afresh at every scrape, or a single informer built by the cache package.
// The handlers of the informers known at that moment are timed from now on;
// informers a factory builds later are timed from the first scrape that sees
// them. It fails for other types.
//
// Every metric of source's informers carries the label factory: the name
// given with Named, else "" for the Collector's first source and the
// source's position ("1", "2", ...) for the others, so that two factories
// with an informer of the same type, a legitimate setup, have distinct
// series (with one source, factory="" is the same as no label to
// Prometheus queries). Should two informers still get the same labels
// (two sources Named alike), the later ones' factory value is suffixed
// "#2", "#3", ... rather than failing the scrape.
func (c *Collector) Add(source any) error {
	factory, named := "", false
	if n, ok := source.(NamedSource); ok {
		factory, named, source = n.name, true, n.source
	}
	var list func() []cache.SharedIndexInformer
	switch s := source.(type) {
	case cache.InformerSource:
		list = s.ListInformers
	case cache.SharedIndexInformer:
		if _, ok := cache.GetInformerStatus(s); !ok {
			return fmt.Errorf("kinformerprom: informer of type %T was not built by kinformer's cache package", source)
		}
		list = func() []cache.SharedIndexInformer { return []cache.SharedIndexInformer{s} }
	default:
		return fmt.Errorf("kinformerprom: cannot collect metrics from a %T: want a kinformer informer factory or a cache.SharedIndexInformer", source)
	}
	c.mu.Lock()
	if !named && len(c.sources) > 0 {
		factory = strconv.Itoa(len(c.sources))
	}
	c.sources = append(c.sources, collectorSource{factory: factory, list: list})
	c.mu.Unlock()
	c.informers() // start timing the handlers
	return nil
}

// informers lists every informer of every source, starting to time the
// handlers of those seen for the first time.
func (c *Collector) informers() []sourceInformer {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []sourceInformer
	// Only the informers seen now are remembered, so that informers a
	// factory dropped are not kept alive.
	seen := make(map[cache.SharedInformer]bool, len(c.timed))
	defer func() { c.timed = seen }()
	// used holds the label sets handed out in this pass: an informer whose
	// labels another already has (two sources given the same name, two
	// informers of one type in one source) gets its factory value
	// suffixed with "#2", "#3", ..., so that no scrape ever fails on
	// duplicate series.
	used := map[string]bool{}
	for _, src := range c.sources {
		for _, informer := range src.list() {
			if informer == nil || seen[informer] {
				continue
			}
			seen[informer] = true
			st, ok := cache.GetInformerStatus(informer)
			if !ok {
				continue
			}
			factory := src.factory
			for n := 2; used[strings.Join(labelValues(st, factory), "\x00")]; n++ {
				factory = src.factory + "#" + strconv.Itoa(n)
			}
			used[strings.Join(labelValues(st, factory), "\x00")] = true
			out = append(out, sourceInformer{informer: informer, factory: factory})
			if c.timed[informer] {
				continue
			}
			// Cannot fail: GetInformerStatus accepted it.
			latency := handlerLatency{vec: c.latency, labels: labelValues(st, factory)}
			_ = cache.ConfigureInformer(informer, func(o *cache.SharedIndexInformerOptions) { o.HandlerMetricsProvider = latency })
		}
	}
	return out
}

// handlerLatency is the cache.HandlerMetricsProvider of one informer.
type handlerLatency struct {
	vec    *prometheus.HistogramVec
	labels []string
}

// NewHandlerLatencyMetric implements cache.HandlerMetricsProvider.
func (h handlerLatency) NewHandlerLatencyMetric(handlerName string) cache.HistogramMetric {
	return h.vec.WithLabelValues(labelValuesFor(h.labels, "handler", handlerName)...)
}

// labelValues returns the informerLabels values of st.
func labelValues(st cache.InformerStatus, factory string) []string {
	return []string{factory, st.Resource.Group, st.Name, st.Resource.Resource, st.Type, st.Resource.Version}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.synced, c.storeObjects, c.queueDepth, c.lastRV, c.sinceEvent, c.deltas, c.lists, c.watchRestarts, c.badData, c.snapshotsSkipped, c.staleness, c.probes, c.probeFailures, c.informerHealth, c.informerReason, c.overallHealth, c.handlerPending, c.handlerPanics} {
		ch <- d
	}
	c.latency.Describe(ch)
}

// Collect implements prometheus.Collector: it reads every informer's status.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	now := c.clock.Now()
	overall := health.Ready
	for _, si := range c.informers() {
		st, ok := cache.GetInformerStatus(si.informer)
		if !ok {
			continue
		}
		lv := labelValues(st, si.factory)
		gauge := func(d *prometheus.Desc, v float64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labelValuesFor(lv, extra...)...)
		}
		counter := func(d *prometheus.Desc, v float64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labelValuesFor(lv, extra...)...)
		}
		synced := 0.0
		if st.Synced {
			synced = 1
		}
		gauge(c.synced, synced)
		gauge(c.storeObjects, float64(st.StoreSize))
		gauge(c.queueDepth, float64(st.QueueDepth))
		if rv, err := strconv.ParseFloat(st.LastSyncResourceVersion, 64); err == nil {
			gauge(c.lastRV, rv)
		}
		if !st.LastWatchEvent.IsZero() {
			gauge(c.sinceEvent, now.Sub(st.LastWatchEvent).Seconds())
		}
		counter(c.deltas, float64(st.DeltasProcessed))
		for _, reason := range cache.RelistReasons() {
			counter(c.lists, float64(st.Lists[reason]), "reason", string(reason))
		}
		counter(c.watchRestarts, float64(st.WatchRestarts))
		counter(c.badData, float64(st.BadData))
		counter(c.snapshotsSkipped, float64(st.SnapshotsSkipped))
		if !st.StartedAt.IsZero() {
			gauge(c.staleness, st.Staleness(now).Seconds())
		}
		counter(c.probes, float64(st.StalenessProbes))
		counter(c.probeFailures, float64(st.StalenessProbeFailures))
		h := health.Evaluate(st, now, c.health)
		overall = max(overall, h.State)
		for _, state := range health.States() {
			gauge(c.informerHealth, oneIf(h.State == state), "state", state.String())
		}
		if h.Reason != health.ReasonNone {
			gauge(c.informerReason, 1, "reason", string(h.Reason))
		}

		// Handlers of the same name (two registrations of one type) are
		// summed: a series per name.
		type agg struct {
			pending int
			panics  int64
		}
		byName := map[string]*agg{}
		var order []string
		for _, h := range st.Handlers {
			a := byName[h.Name]
			if a == nil {
				a = &agg{}
				byName[h.Name] = a
				order = append(order, h.Name)
			}
			a.pending += h.Pending
			a.panics += h.Panics
		}
		for _, name := range order {
			gauge(c.handlerPending, float64(byName[name].pending), "handler", name)
			counter(c.handlerPanics, float64(byName[name].panics), "handler", name)
		}
	}
	for _, state := range health.States() {
		ch <- prometheus.MustNewConstMetric(c.overallHealth, prometheus.GaugeValue, oneIf(overall == state), state.String())
	}
	c.latency.Collect(ch)
}

func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
